"""Experiment configs: one TOML file per experiment, whose ``kind`` names the family it belongs to.

What every kind shares lives here: where jobs run (``[execution]``), the bootstrap's seeds,
reading a config file (its relative paths made independent of the folder the user runs
from), and the shipped configs by name. What a kind's config holds is the kind's own
model (``eval/kinds/``); the file is validated as the discriminated union over every
registered kind, then by the kind's own cross-checks, so a typo fails before a single
episode runs, naming the field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from gencoord._config import parse_toml, read_text
from gencoord.backends.families import FAMILIES, ROLE_SEPARATOR, BackendFamily, parse_backend, role_parts
from gencoord.errors import ConfigError, did_you_mean
from gencoord.eval.experiment import DEFAULT_KIND, Experiment, experiment_from, experiment_kind, experiment_kind_of
from gencoord.reasons import Reason

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"
"""An experiment's name: it names its run folders."""


class ExecutionSpec(BaseModel):
    """Where jobs run: the local process pool (default), or a Ray cluster. Never part of a config's identity."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    # what schedules the jobs (``executor`` before 0.2, still read: a world is an executor, a pool or Ray schedules)
    scheduler: Literal["pool", "ray"] = Field(default="pool", validation_alias=AliasChoices("scheduler", "executor"))
    ray_address: str | None = None  # "auto", host:port, or None: start a local Ray instance for the run
    retries: Annotated[int, Field(ge=0, le=20)] = 3  # Ray: a job whose worker dies is run again up to this often
    # Ray: what one Minecraft worker reserves on its node (server + bots + Python, measured in benchmarks/scale.py)
    worker_memory_mib: Annotated[int, Field(ge=64)] = 1024
    # API-backed runs: at most this many workers, so at most this many requests in flight to the endpoint
    api_concurrency: Annotated[int, Field(ge=1)] = 4
    # the run folder's model calls stop the run once their tokens (input + output) or charge reach these
    api_budget_tokens: Annotated[int | None, Field(ge=1)] = None
    api_budget_charge: Annotated[float | None, Field(gt=0)] = None


class BootstrapSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    resamples: Annotated[int, Field(ge=100)] = 10_000
    condition_seed: int = 8901  # the paper's seeds: conditions 8901.., paired 8911.., pair blocks 8921..
    paired_seed: int = 8911
    block_seed: int = 8921


def unique_lists(origin: str, lists: Mapping[str, Sequence[object]]) -> None:
    """A config's lists of conditions, seeds, roles … each name a value once (a repeat would run jobs twice)."""
    for name, values in lists.items():
        if len(set(values)) != len(values):
            raise ConfigError(Reason.DUPLICATE, f"{origin}: {name} lists a value twice")


def parse_experiment(text: str, origin: str = "<config>", base: Path | None = None) -> Experiment:
    """A validated experiment; relative file paths inside it (checkpoints, task files) resolve against ``base``."""
    data = parse_toml(text, origin, ConfigError)
    if base is not None:
        data = _paths_from(data, base, origin)
    return checked_experiment(data, origin)


def checked_experiment(data: Mapping[str, Any], origin: str) -> Experiment:
    """The experiment ``data`` describes, validated field by field and across fields, or a ConfigError."""
    config = experiment_from(data, origin)
    experiment_kind_of(config).check(config, origin)
    return config


def _relative_to(base: Path, path: str) -> str:
    """``path`` against the config's folder, lexically (a config reached through a link keeps its neighbours).

    Always absolute: a run folder's manifest keeps it, and the run must resume and report
    from any working folder, with the same job keys.
    """
    return os.path.normpath(base.absolute() / Path(path).expanduser())


def _backend_path(base: Path, name: str) -> str:
    """A checkpoint family's name with its folder read against the config's (others, and bad names, as written);
    in team roles (``lead=…,peers=…``), each role's backend."""
    try:
        roles = role_parts(name)
    except ConfigError:
        return name  # pydantic refuses it with its message
    if roles is not None:
        return ",".join(f"{role}{ROLE_SEPARATOR}{_backend_path(base, backend)}" for role, backend in roles.items())
    family, colon, target = name.partition(":")
    if colon and family in FAMILIES.names() and FAMILIES.get(family).checkpoint:
        return f"{family}:{_relative_to(base, target)}"
    return name


def _each(value: Any, change: Any) -> Any:
    """``change`` applied to a string, or to every string of a list; anything else is left for pydantic."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [change(item) if isinstance(item, str) else item for item in value]
    return value


def _paths_from(data: dict[str, Any], base: Path, origin: str) -> dict[str, Any]:
    """The document with its file paths made independent of the folder the user runs from."""
    kind = experiment_kind(str(data.get("kind", DEFAULT_KIND)), origin)
    data = dict(data)
    for field in kind.backend_fields:
        if field in data:
            data[field] = _each(data[field], lambda name: _backend_path(base, name))
    for field in kind.paths:
        if field in data:
            data[field] = _each(data[field], lambda path: _relative_to(base, path))
    return data


BUNDLED = "experiments"
"""The package folder of the shipped configs (and the tiny checkpoints some of them use)."""


def bundled_experiments() -> dict[str, Path]:
    """Shipped configs by name: ``request_intervention``, ``gpu/horizon``, …"""
    root = Path(str(resources.files("gencoord") / BUNDLED))
    return {path.relative_to(root).with_suffix("").as_posix(): path for path in sorted(root.rglob("*.toml"))}


def find_experiment(name: str) -> Path:
    """A config file as given, or else the shipped config of that name."""
    path = Path(name)
    if path.exists():
        return path
    shipped = bundled_experiments()
    if name.removesuffix(".toml") in shipped:
        return shipped[name.removesuffix(".toml")]
    hint = did_you_mean(name.removesuffix(".toml"), shipped)
    raise ConfigError(
        Reason.NO_SUCH_CONFIG,
        f"{name}: no such file, nor a shipped experiment{hint or ''}; shipped: {', '.join(shipped)}",
    )


def uses_api(config: Experiment) -> bool:
    """Whether the config's jobs call a model endpoint (their workers then count against its limit)."""
    return any(family.calls_api for family in _families(config))


def calls_models(config: Experiment) -> bool:
    """Whether the config's jobs call a model, a checkpoint or an endpoint: seconds an episode, not milliseconds."""
    return any(family.calls_api or family.checkpoint for family in _families(config))


def _families(config: Experiment) -> list[BackendFamily]:
    """The backend families of every backend the config names, each role's of a role-split one."""
    families = []
    for name in experiment_kind_of(config).backends(config):
        roles = role_parts(name)
        families += [parse_backend(backend).family for backend in ([name] if roles is None else roles.values())]
    return families


def load_experiment(path: Path) -> Experiment:
    """The experiment a TOML file describes, of any registered kind, validated and cross-checked."""
    return parse_experiment(read_text(path, ConfigError), str(path), path.parent)
