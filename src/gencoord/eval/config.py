"""Experiment configs: one TOML file says suite × conditions × backends × seeds × roles.

Validated on load (pydantic, then cross-checks against the suites, conditions and
backend registry) so a typo fails before a single episode runs, naming the field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError, field_validator, model_validator

from gencoord._config import parse_toml, read_text, validation_message
from gencoord.backends.registry import (
    API_PREFIX,
    BACKEND_SETS,
    CONSTRAINED_PREFIX,
    MODEL_PREFIX,
    SELECTOR_PREFIX,
    backend_fits,
    for_seed,
    split_receiver,
    split_view,
)
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError, did_you_mean
from gencoord.gate.adjudicators import LOGISTIC, check_adjudicator_name
from gencoord.gate.config import load_gate_config
from gencoord.gate.policy import GateCondition
from gencoord.models.spec import Records
from gencoord.planning.composition import CompositionMethod
from gencoord.prior.load import team_prior
from gencoord.protocol.delivery import CacheSetting
from gencoord.run.episode import (
    CACHED_CONDITIONS,
    FEEDBACK_CONDITIONS,
    FORWARD_CONDITIONS,
    Condition,
    check_dialogue,
)
from gencoord.run.faults import Fault
from gencoord.run.team import TeamMode
from gencoord.tasks.cluster import PAPER_POOLS, Split
from gencoord.tasks.cross_products import CROSS_PRODUCT_CLUSTERS
from gencoord.tasks.team import TeamTask
from gencoord.tasks.team_files import TaskFormat, load_team_tasks
from gencoord.worlds.choice import WorldChoice


class ExperimentKind(StrEnum):
    """Which paper tables the report builds (every kind also gets the generic outcome table)."""

    REQUEST_INTERVENTION = "request_intervention"  # Table S12, Figure 4b
    FEEDBACK_INTERVENTION = "feedback_intervention"  # Tables S18, S19, Figure 4a
    CONTROLLED_FAULTS = "controlled_faults"  # v2 Table S46
    REPRESENTATION = "representation"  # Table 2 / S10
    HORIZON = "horizon"  # Table S13: multi-step vs single-step commitments
    VISIBILITY = "visibility"  # Figure S5: topology motif × task-structure view × method
    PRIVATE_STRUCTURE = "private_structure"  # v2 Tables S20–S23: PATH / SLICE / GOAL delivery and the cache
    COMPOSITION = "composition"  # v1 Table S15 / v2 S25: unseen binding cross-products (its own config shape)
    GATE = "gate"  # the escalation gate on the dynamic suite (its own config shape)
    TEAM = "team"  # team tasks from task files: n agents, private bags (its own config shape)
    CUSTOM = "custom"


class PoolSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    split: Split
    size: PositiveInt
    seed: int = 0


class ExecutionSpec(BaseModel):
    """Where jobs run: the local process pool (default), or a Ray cluster. Never part of a config's identity."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    executor: Literal["pool", "ray"] = "pool"
    ray_address: str | None = None  # "auto", host:port, or None: start a local Ray instance for the run
    retries: Annotated[int, Field(ge=0, le=20)] = 3  # Ray: a job whose worker dies is run again up to this often
    # Ray: what one Minecraft worker reserves on its node (server + bots + Python, measured in benchmarks/scale.py)
    worker_memory_mib: Annotated[int, Field(ge=64)] = 1024
    # API-backed runs: at most this many workers, so at most this many requests in flight to the endpoint
    api_concurrency: Annotated[int, Field(ge=1)] = 4


class BootstrapSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    resamples: Annotated[int, Field(ge=100)] = 10_000
    condition_seed: int = 8901  # the paper's seeds: conditions 8901.., paired 8911.., pair blocks 8921..
    paired_seed: int = 8911
    block_seed: int = 8921


def _known_backend_sets(backends: list[str]) -> list[str]:
    bases = [split_receiver(split_view(name)[0])[0] for name in backends]
    unknown = [
        name
        for name in bases
        if name not in BACKEND_SETS
        and not name.startswith((MODEL_PREFIX, CONSTRAINED_PREFIX, API_PREFIX, SELECTOR_PREFIX))
    ]
    if unknown:
        known = ", ".join([*sorted(BACKEND_SETS), f"{MODEL_PREFIX}<checkpoint>"])
        raise ValueError(f"unknown backend set {unknown[0]!r}; known: {known}")
    return backends


class ExperimentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
    kind: ExperimentKind = ExperimentKind.CUSTOM
    description: str = ""
    pool: str | PoolSpec
    clusters: PositiveInt | None = None  # keep only the first N clusters (whole pairs): reduced runs
    conditions: list[Condition] = Field(min_length=1)
    faults: list[Fault] = [Fault.CLEAN]
    caches: list[CacheSetting] = Field(default=[CacheSetting.OFF], min_length=1)  # for the delivery conditions
    backends: list[str] = ["rule"]
    surfaces: list[SurfaceName] = [SurfaceName.DSL]
    seeds: list[int] = Field(default=[0], min_length=1)
    roles: list[Annotated[int, Field(ge=0, le=1)]] = Field(default=[0, 1], min_length=1)
    reference: Condition | None = None  # paired differences are reference − condition
    described: Literal["C1", "C2", "C3"] | None = None  # senders get a described private fact, not its code
    output: str = "runs"
    workers: Annotated[int, Field(ge=0)] = 0  # 0: one per CPU core
    bootstrap: BootstrapSpec = BootstrapSpec()
    world: WorldChoice = WorldChoice()  # where the actions run: the simulator, or real Minecraft
    execution: ExecutionSpec = ExecutionSpec()

    @field_validator("pool")
    @classmethod
    def _known_pool(cls, pool: str | PoolSpec) -> str | PoolSpec:
        if isinstance(pool, str) and pool not in PAPER_POOLS:
            raise ValueError(f"unknown pool {pool!r}; known: {', '.join(sorted(PAPER_POOLS))}")
        return pool

    @field_validator("backends")
    @classmethod
    def _known_backends(cls, backends: list[str]) -> list[str]:
        return _known_backend_sets(backends)

    @model_validator(mode="after")
    def _caches_apply(self) -> ExperimentConfig:
        if self.caches != [CacheSetting.OFF] and not set(self.conditions) & set(CACHED_CONDITIONS):
            cached = ", ".join(CACHED_CONDITIONS)
            raise ValueError(f"caches apply only to the delivery conditions ({cached}), and none is listed")
        return self

    @model_validator(mode="after")
    def _dialogue_fits(self) -> ExperimentConfig:
        if SurfaceName.FREEFORM in self.surfaces:
            for condition in self.conditions:
                for fault in self.faults:
                    try:
                        check_dialogue(condition, fault)
                    except ConfigError as error:
                        raise ValueError(error.message) from None
        return self

    @property
    def split(self) -> Split:
        return PAPER_POOLS[self.pool][0] if isinstance(self.pool, str) else self.pool.split

    def summary(self) -> str:
        pool = self.pool if isinstance(self.pool, str) else f"{self.pool.split.value} × {self.pool.size}"
        clusters = f" (first {self.clusters} clusters)" if self.clusters else ""
        return (
            f"pool {pool}{clusters}; conditions {', '.join(self.conditions)}; faults {', '.join(self.faults)}; "
            + (f"caches {', '.join(self.caches)}; " if self.caches != [CacheSetting.OFF] else "")
            + f"backends {', '.join(self.backends)}; surfaces {', '.join(self.surfaces)}; "
            f"seeds {', '.join(map(str, self.seeds))}; roles {', '.join(map(str, self.roles))}"
        )


class GateExperimentConfig(BaseModel):
    """A gate experiment: gate conditions over instances of the dynamic suite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
    kind: Literal[ExperimentKind.GATE] = ExperimentKind.GATE
    description: str = ""
    instances: PositiveInt
    seed: int = 0
    split: Literal["eval", "train"] = "eval"
    tasks: list[str] = []  # team task files (relative to the config): the dynamic team suite; none: the built-in jobs
    format: TaskFormat = TaskFormat.AUTO
    conditions: list[GateCondition] = Field(min_length=1)
    reference: GateCondition | None = GateCondition.COMMUNICATION_FIRST  # paired: condition − reference
    clusters: PositiveInt | None = None  # keep only the first N instances: reduced runs
    gate_config: str | None = None  # a gate TOML (weights, thresholds, …) instead of the packaged one
    adjudicator: str = LOGISTIC  # the gray zone's judge: logistic, api:<url>#<model> or model:<checkpoint>
    budget_factor: Annotated[float, Field(gt=0)] = 2.0  # round budget = factor × clean-run rounds + margin
    budget_margin: Annotated[int, Field(ge=0)] = 10
    world: WorldChoice = WorldChoice()  # Minecraft runs with the simulator alongside, compared action by action
    output: str = "runs"
    workers: Annotated[int, Field(ge=0)] = 0
    bootstrap: BootstrapSpec = BootstrapSpec()
    execution: ExecutionSpec = ExecutionSpec()

    @field_validator("adjudicator")
    @classmethod
    def _known_adjudicator(cls, name: str) -> str:
        return check_adjudicator_name(name)

    def summary(self) -> str:
        count = min(self.instances, self.clusters or self.instances)
        budget = f"budget {self.budget_factor:g} × clean rounds + {self.budget_margin}"
        setting = f"seed {self.seed}, {budget}, adjudicator {self.adjudicator}"
        suite = f"the team suite from {', '.join(Path(p).name for p in self.tasks)}" if self.tasks else "the job suite"
        return f"{count} {self.split} instances of {suite} ({setting}); conditions " + ", ".join(self.conditions)


class TeamExperimentConfig(BaseModel):
    """Team tasks: the tasks of task files × information modes × surfaces × lead backends."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
    kind: Literal[ExperimentKind.TEAM] = ExperimentKind.TEAM
    description: str = ""
    tasks: list[str] = Field(min_length=1)  # task files (gencoord or MINDcraft), relative to the config
    format: TaskFormat = TaskFormat.AUTO
    modes: list[TeamMode] = Field(default=[TeamMode.PRIVATE], min_length=1)
    surfaces: list[Literal[SurfaceName.DSL, SurfaceName.FREEFORM]] = Field(default=[SurfaceName.DSL], min_length=1)
    backends: list[str] = Field(default=["planner"], min_length=1)  # who leads: planner, model:, constrained:, api:
    clusters: PositiveInt | None = None  # keep only the first N tasks: reduced runs
    output: str = "runs"
    workers: Annotated[int, Field(ge=0)] = 0
    bootstrap: BootstrapSpec = BootstrapSpec()
    world: WorldChoice = WorldChoice()
    execution: ExecutionSpec = ExecutionSpec()

    @field_validator("backends")
    @classmethod
    def _known_backends(cls, backends: list[str]) -> list[str]:
        unknown = [name for name in backends if name != "planner" and not name.startswith(_TEAM_LEAD_PREFIXES)]
        if unknown:
            raise ValueError(f"unknown team backend {unknown[0]!r}; known: planner, model:, constrained:, api:")
        return backends

    def summary(self) -> str:
        clusters = f" (first {self.clusters} tasks)" if self.clusters else ""
        return (
            f"tasks from {', '.join(self.tasks)}{clusters}; modes {', '.join(self.modes)}; "
            f"surfaces {', '.join(self.surfaces)}; lead backends {', '.join(self.backends)}"
        )


_TEAM_LEAD_PREFIXES = (MODEL_PREFIX, CONSTRAINED_PREFIX, API_PREFIX)


class CompositionExperimentConfig(BaseModel):
    """The composition reference: receiver methods on clusters of unseen binding cross-products."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
    kind: Literal[ExperimentKind.COMPOSITION] = ExperimentKind.COMPOSITION
    description: str = ""
    cases: PositiveInt = CROSS_PRODUCT_CLUSTERS  # clusters, cycling over the unseen combinations
    methods: list[CompositionMethod] = Field(
        default=[CompositionMethod.COMPLETE_CASE_TABLE, CompositionMethod.EXPLICIT_FACTOR_COMPOSER], min_length=1
    )
    direct: str | None = None  # Direct Short DSL's backend set: model:<checkpoint>, {seed} for one per seed
    seeds: list[int] = Field(default=[0], min_length=1)
    roles: list[Annotated[int, Field(ge=0, le=1)]] = Field(default=[0, 1], min_length=1)
    clusters: PositiveInt | None = None  # keep only the first N cases: reduced runs
    world: WorldChoice = WorldChoice()
    output: str = "runs"
    workers: Annotated[int, Field(ge=0)] = 0
    bootstrap: BootstrapSpec = BootstrapSpec()
    execution: ExecutionSpec = ExecutionSpec()

    @model_validator(mode="after")
    def _direct_has_a_backend(self) -> CompositionExperimentConfig:
        wanted = CompositionMethod.DIRECT_SHORT_DSL in self.methods
        if wanted and self.direct is None:
            raise ValueError("method direct_short_dsl needs `direct`, the backend set that writes its records")
        if self.direct is not None and not wanted:
            raise ValueError("`direct` is given but direct_short_dsl is not among the methods")
        return self

    @property
    def backends(self) -> list[str]:
        """Direct Short DSL's backend set, if it runs; the rule methods have none."""
        return [] if self.direct is None else [self.direct]

    def summary(self) -> str:
        count = min(self.cases, self.clusters or self.cases)
        methods = ", ".join(self.methods)
        direct = f" (direct: {self.direct})" if self.direct else ""
        return f"{count} cross-product clusters; methods {methods}{direct}; seeds {self.seeds}; roles {self.roles}"


Experiment = ExperimentConfig | GateExperimentConfig | TeamExperimentConfig | CompositionExperimentConfig


def experiment_from(data: dict[str, Any]) -> Experiment:
    """The config class a parsed document's ``kind`` calls for."""
    if data.get("kind") == ExperimentKind.GATE.value:
        return GateExperimentConfig.model_validate(data)
    if data.get("kind") == ExperimentKind.TEAM.value:
        return TeamExperimentConfig.model_validate(data)
    if data.get("kind") == ExperimentKind.COMPOSITION.value:
        return CompositionExperimentConfig.model_validate(data)
    return ExperimentConfig.model_validate(data)


def _cross_check(config: Experiment, origin: str) -> None:
    if isinstance(config, CompositionExperimentConfig):
        _unique(origin, {"methods": config.methods, "seeds": config.seeds, "roles": config.roles})
        if config.direct is not None:
            _check_direct(config.direct, config.seeds, origin)
        return
    if isinstance(config, TeamExperimentConfig):
        team_tasks_of(config)  # every file loads and every item exists: fail now, not in a worker
        return
    if isinstance(config, GateExperimentConfig):
        if config.gate_config is not None:
            load_gate_config(Path(config.gate_config))  # fail now, not in a worker
        gate_tasks_of(config)  # every task file loads and every item exists
        if config.reference is not None and config.reference not in config.conditions:
            raise ConfigError(
                "REFERENCE", f"{origin}: reference {config.reference.value!r} is not among the conditions"
            )
        return
    feedback = config.split is Split.GOAL_CAPABILITY
    allowed = FEEDBACK_CONDITIONS if feedback else FORWARD_CONDITIONS
    wrong = [c.value for c in config.conditions if c not in allowed]
    if wrong:
        suite = "Goal×Capability" if feedback else "forward"
        raise ConfigError("CONDITION_SUITE", f"{origin}: conditions {wrong} do not apply to a {suite} pool")
    if config.reference is not None and config.reference not in config.conditions:
        raise ConfigError("REFERENCE", f"{origin}: reference {config.reference.value!r} is not among the conditions")
    _unique(origin, {"conditions": config.conditions, "seeds": config.seeds, "roles": config.roles})


def _check_direct(direct: str, seeds: Sequence[int], origin: str) -> None:
    """Direct Short DSL is a model trained on factor-form records, or a prompted API: nothing else writes them."""
    if not direct.startswith((MODEL_PREFIX, CONSTRAINED_PREFIX, API_PREFIX)):
        raise ConfigError(
            "DIRECT_BACKEND",
            f"{origin}: direct is a trained model or an API ({MODEL_PREFIX}<checkpoint>, {API_PREFIX}<url>#<model>), "
            f"not {direct!r}",
        )
    for seed in seeds:
        name = for_seed(direct, seed)
        if not backend_fits(name, False, SurfaceName.DSL, Records.COMPOSITION):
            raise ConfigError(
                "DIRECT_BACKEND",
                f"{origin}: {name} was not trained on composition records (gencoord train --records composition)",
            )


def _unique(origin: str, lists: Mapping[str, Sequence[object]]) -> None:
    for name, values in lists.items():
        if len(set(values)) != len(values):
            raise ConfigError("DUPLICATE", f"{origin}: {name} lists a value twice")


def parse_experiment(text: str, origin: str = "<config>", base: Path | None = None) -> Experiment:
    """A validated experiment; relative file paths inside it (checkpoints, a gate config) resolve against ``base``."""
    data = parse_toml(text, origin, ConfigError)
    if base is not None:
        data = _paths_from(data, base)
    return checked_experiment(data, origin)


def checked_experiment(data: dict[str, Any], origin: str) -> Experiment:
    """The experiment ``data`` describes, validated field by field and across fields, or a ConfigError."""
    try:
        config = experiment_from(data)
    except ValidationError as exc:
        raise ConfigError("INVALID_CONFIG", f"{origin}: {validation_message(exc)}") from None
    _cross_check(config, origin)
    return config


_CHECKPOINT_PREFIXES = (MODEL_PREFIX, CONSTRAINED_PREFIX)


def _relative_to(base: Path, path: str) -> str:
    """``path`` against the config's folder, lexically (a config reached through a link keeps its neighbours).

    The result stays relative to the working folder when it lies below it, so names in
    records and tables stay short; elsewhere it is absolute.
    """
    if Path(path).expanduser().is_absolute():
        return str(Path(path).expanduser())
    joined = Path(os.path.normpath(base.absolute() / path))
    try:
        return str(joined.relative_to(Path.cwd()))
    except ValueError:
        return str(joined)


def _backend_path(base: Path, name: str) -> str:
    for prefix in _CHECKPOINT_PREFIXES:
        if isinstance(name, str) and name.startswith(prefix):
            return prefix + _relative_to(base, name.removeprefix(prefix))
    return name


def _paths_from(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """The document with its file paths made independent of the folder the user runs from."""
    data = dict(data)
    if isinstance(data.get("backends"), list):
        data["backends"] = [_backend_path(base, name) for name in data["backends"]]
    for field in ("adjudicator", "direct"):
        if isinstance(data.get(field), str):
            data[field] = _backend_path(base, data[field])
    if isinstance(data.get("gate_config"), str):
        data["gate_config"] = _relative_to(base, data["gate_config"])
    if data.get("kind") in (ExperimentKind.TEAM.value, ExperimentKind.GATE.value) and isinstance(
        data.get("tasks"), list
    ):
        data["tasks"] = [_relative_to(base, path) if isinstance(path, str) else path for path in data["tasks"]]
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
        "NO_SUCH_CONFIG",
        f"{name}: no such file, nor a shipped experiment{hint or ''}; shipped: {', '.join(shipped)}",
    )


def team_tasks_of(config: TeamExperimentConfig) -> list[tuple[str, TeamTask]]:
    """(file, task) for every task of the config's files, in order, cut to ``clusters``."""
    prior = team_prior()
    tasks = [(path, task) for path in config.tasks for task in load_team_tasks(Path(path), config.format, prior)]
    ids = [f"{path}:{task.id}" for path, task in tasks]
    if len(set(ids)) != len(ids):
        raise ConfigError("DUPLICATE_TASK", f"{config.name}: a task file is listed twice")
    return tasks[: config.clusters] if config.clusters else tasks


def gate_tasks_of(config: GateExperimentConfig) -> tuple[TeamTask, ...]:
    """The team tasks a gate experiment builds its instances from (none: the built-in jobs)."""
    prior = team_prior()
    tasks = tuple(task for path in config.tasks for task in load_team_tasks(Path(path), config.format, prior))
    ids = [task.id for task in tasks]
    repeated = sorted({ident for ident in ids if ids.count(ident) > 1})
    if repeated:
        raise ConfigError(
            "DUPLICATE_TASK", f"{config.name}: task ids must be unique across files; repeated: {repeated[0]}"
        )
    return tasks


def uses_api(config: Experiment) -> bool:
    """Whether the config's episodes call a model endpoint (their workers then count against its limit)."""
    names = [config.adjudicator] if isinstance(config, GateExperimentConfig) else config.backends
    return any(name.startswith(API_PREFIX) for name in names)


def load_experiment(path: Path) -> Experiment:
    return parse_experiment(read_text(path, ConfigError), str(path), path.parent)
