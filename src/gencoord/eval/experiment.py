"""Experiment kinds as plugins: one object per kind, registered by name, found by a config's ``kind``.

A kind says everything that differs between families of experiments (pair episodes, the
gate, team tasks, composition, or a user's own): its config model, the cross-checks
pydantic cannot express, what a run builds once (pools, instances, tasks), the jobs it
expands to, how one job becomes a record, and its tables and figures. The runner, the
report and the command line look the kind up and never branch on it, so a new kind is
one object and one :func:`register_experiment_kind` call (or one entry point in the
``gencoord.experiment_kinds`` group of the user's own package; Gymnasium's
``register``/``make`` is the model).

Configs are a pydantic discriminated union over the registered kinds, tagged by ``kind``.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, Protocol, TypeVar, Union

from pydantic import BaseModel, Discriminator, Tag, TypeAdapter, ValidationError

from gencoord._config import validation_message
from gencoord._registry import Registry
from gencoord.errors import ConfigError
from gencoord.reasons import Reason

if TYPE_CHECKING:
    from gencoord.eval.tables import Table

ENTRY_POINTS = "gencoord.experiment_kinds"
"""The entry-point group a package declares its experiment kinds in (name = kind, value = the kind object)."""

DEFAULT_KIND = "custom"
"""The kind of a config that names none: pair episodes with only the generic tables."""

Record = Mapping[str, Any]


class Experiment(Protocol):
    """What every kind's config has: the fields the runner, the report and the command line read.

    ``world`` (a WorldChoice) and ``clusters`` (keep only the first N) are optional: a kind
    whose config has them gets ``--world`` and ``--clusters`` on the command line.
    """

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def output(self) -> str: ...
    @property
    def workers(self) -> int: ...
    @property
    def execution(self) -> Any: ...  # ExecutionSpec (eval.config), which imports this module

    def summary(self) -> str: ...

    # the pydantic methods the runner and the command line call
    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...
    def model_dump_json(self, *, exclude: Any = ..., context: Any = ...) -> str: ...
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any: ...


class Job(Protocol):
    """A unit of work: small, picklable, with a key that is stable across runs (how a resume knows it)."""

    @property
    def key(self) -> str: ...


C = TypeVar("C", bound=BaseModel)
P = TypeVar("P")
J = TypeVar("J", bound=Job)


class ExperimentKind(ABC, Generic[C, P, J]):
    """One family of experiments. Subclass it, set ``name`` and ``config``, and register an instance.

    ``P`` is what a run prepares once on the driver and ships to every worker (a pool of
    clusters, gate instances, loaded task files): preparing it may be expensive, so it
    happens once per run, never once per job or once per worker.
    """

    name: str
    config: type[C]
    paths: ClassVar[tuple[str, ...]] = ()
    """Config fields that hold files (a string or a list of strings), read relative to the config's folder."""
    backend_fields: ClassVar[tuple[str, ...]] = ()
    """Config fields that hold backend names (a string or a list of strings) whose checkpoint paths are relative."""

    def check(self, config: C, origin: str) -> None:
        """Raise a ConfigError for what the model alone cannot see (files that do not load, clashing fields)."""

    @abstractmethod
    def prepare(self, config: C) -> P:
        """What every job of a run needs, built once (it travels to the workers)."""

    @abstractmethod
    def expand(self, config: C, prepared: P) -> list[J]:
        """Every job of the experiment, in a fixed order."""

    @abstractmethod
    def run_job(self, config: C, prepared: P, job: J) -> dict[str, Any]:
        """One job's record; it must carry ``outcome`` with ``G`` (the task's success) for progress counts."""

    @abstractmethod
    def report(self, config: C, records: Sequence[Record], out: Path, facts: Mapping[str, Any]) -> ReportParts:
        """What the report shows for these records; figures are written under ``out / "figures"``.

        ``facts`` are what :meth:`report_facts` worked out when the run was planned: a report
        reads nothing but the run folder, so it works on a folder copied anywhere.
        """

    def report_facts(self, config: C, prepared: P) -> dict[str, Any]:
        """What a report needs that neither the config nor the records hold (tasks a file could not give,
        the thresholds a config file set), kept in the manifest as JSON: a config's paths are relative to
        where the run started and may not resolve where the report is written."""
        return {}

    def reusable(self, config: C, prepared: P, job: J, record: Record) -> bool:
        """Whether a resumed run may keep this job's recorded ``record`` rather than run the job again."""
        return True

    def backends(self, config: C) -> list[str]:
        """Every backend name the config's jobs use (API-backed runs cap their workers)."""
        return []

    def with_backends(self, config: C, names: list[str]) -> C:
        """The config with ``--backend`` names instead of its own."""
        raise ConfigError(
            Reason.BACKEND_NOT_SUPPORTED, f"{config_name(config)}: {self.name} experiments have no backends"
        )


@dataclass(frozen=True)
class ReportParts:
    """A kind's part of a report: tables, figures (name → PNG bytes, saved as ``figures/<name>.png``),
    and Markdown sections that follow the tables in ``report.md`` (the HTML's trace viewer shows the same)."""

    tables: list[Table]
    figures: dict[str, bytes] = field(default_factory=dict)
    sections: list[str] = field(default_factory=list)
    headline: Table | None = None
    """The table a report opens with: a few columns (row, success, its interval, the paper's figure) that fit
    one screen; ``tables`` hold the detail below it."""


AnyKind = ExperimentKind[Any, Any, Any]

_BUILT_IN = {
    "gate": "gencoord.eval.kinds.gate.kind:GATE",
    "team": "gencoord.eval.kinds.team.kind:TEAM",
    "composition": "gencoord.eval.kinds.composition.kind:COMPOSITION",
    **{
        name: f"gencoord.eval.kinds.episodes.kind:{name.upper()}"
        for name in (
            "request_intervention",
            "feedback_intervention",
            "controlled_faults",
            "representation",
            "horizon",
            "visibility",
            "private_structure",
            "custom",
        )
    },
}
"""The kinds gencoord ships, imported on first use (the command line's start-up stays light)."""

EXPERIMENT_KINDS: Registry[AnyKind] = Registry("experiment kind", ENTRY_POINTS, ExperimentKind, _BUILT_IN)


def register_experiment_kind(kind: AnyKind) -> AnyKind:
    """Make ``kind`` available to configs under ``kind.name``. A name is registered once."""
    return EXPERIMENT_KINDS.register(kind)


def experiment_kind_names() -> list[str]:
    """Every kind a config may name: gencoord's, registered ones, and installed plugins'."""
    return EXPERIMENT_KINDS.names()


def experiment_kind(name: str, origin: str | None = None) -> AnyKind:
    """The kind of that name, loading it (built in, or a plugin's entry point) on first use."""
    return EXPERIMENT_KINDS.get(name, origin)


def experiment_kind_of(config: Experiment) -> AnyKind:
    return experiment_kind(config.kind)


def _tag(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("kind", DEFAULT_KIND))
    return str(getattr(value, "kind", DEFAULT_KIND))


@cache
def _union(version: int) -> TypeAdapter[Any]:
    """The union over every kind registered at ``version`` of the registry (a registration makes a new one)."""
    kinds = [experiment_kind(name) for name in experiment_kind_names()]
    members = tuple(Annotated[kind.config, Tag(kind.name)] for kind in kinds)
    union: Any = Annotated[Union[members], Discriminator(_tag)]  # noqa: UP007 - a runtime tuple of members
    return TypeAdapter(union)


def experiment_from(data: Mapping[str, Any], origin: str = "<config>") -> Experiment:
    """The config ``data`` describes, as its kind's model: the discriminated union over every kind."""
    experiment_kind(_tag(data), origin)  # an unknown kind is named with its near misses, not as a union tag
    for name in experiment_kind_names():
        experiment_kind(name)  # every member of the union loaded, so the registry's version is final
    try:
        config: Experiment = _union(EXPERIMENT_KINDS.version).validate_python(dict(data))
    except ValidationError as exc:
        model = experiment_kind(_tag(data), origin).config
        raise ConfigError(
            Reason.INVALID_CONFIG, f"{origin}: {validation_message(exc, tagged=True, model=model)}"
        ) from None
    return config


def config_name(config: BaseModel) -> str:
    return str(getattr(config, "name", type(config).__name__))


def validated_with(config: C, update: Mapping[str, Any], code: Reason = Reason.BAD_BACKEND) -> C:
    """``config`` with ``update`` applied, validated again by its model and its kind's checks."""
    try:
        changed = type(config).model_validate({**config.model_dump(), **update})
    except ValidationError as exc:
        raise ConfigError(code, f"{config_name(config)}: {validation_message(exc)}") from None
    experiment_kind(str(getattr(changed, "kind", DEFAULT_KIND))).check(changed, config_name(changed))
    return changed


def config_digest(config: Experiment) -> str:
    """What identifies a config in every record it produced (the report checks the manifest against it).

    Where the jobs ran (the pool or Ray) and whether someone watched (a view's port) are not
    part of it: neither changes a record.
    """
    exclude: dict[str, Any] = {"execution": True, "world": {"view_port"}}
    thinking = getattr(config, "thinking", None)
    if thinking is not None and thinking.none:
        exclude["thinking"] = True  # messages that take no world time: what every config meant before thinking
    for role in ("helpers", "delivery_receiver"):
        if str(getattr(config, role, "")) == "rule":
            exclude[role] = True  # a rule in that role: what every config meant before the role was a backend
    text = config.model_dump_json(exclude=exclude, context={"digest": True})  # worlds: as written before 0.2
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RunPlan:
    """A config with its kind, what the kind prepared and the jobs it expands to: built once per run.

    The command line builds it, the runner runs it and the manifest records its job count,
    so nothing is expanded twice.
    """

    config: Experiment
    kind: AnyKind
    prepared: Any
    jobs: tuple[Job, ...]


def plan_run(config: Experiment) -> RunPlan:
    """Prepare and expand ``config``: every error a config can have is raised here, before any folder exists."""
    kind = experiment_kind_of(config)
    prepared = kind.prepare(config)
    return RunPlan(config, kind, prepared, tuple(kind.expand(config, prepared)))


def as_plan(run: RunPlan | Experiment) -> RunPlan:
    return run if isinstance(run, RunPlan) else plan_run(run)
