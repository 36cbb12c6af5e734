"""Team tasks from task files: n agents with private bags, × information modes × surfaces × lead backends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator

from gencoord.backends.base import Backend
from gencoord.backends.registry import API_PREFIX, CONSTRAINED_PREFIX, MODEL_PREFIX, team_backend
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import NAME_PATTERN, BootstrapSpec, ExecutionSpec
from gencoord.eval.experiment import ExperimentKind, Record, validated_with
from gencoord.prior.load import team_prior
from gencoord.run.team import TeamMode, run_team_task
from gencoord.run.team_record import team_record
from gencoord.tasks.team import TeamTask
from gencoord.tasks.team_files import TaskFormat, load_team_tasks
from gencoord.worlds.choice import WorldChoice, executor_for

if TYPE_CHECKING:
    from gencoord.eval.tables import Table

_TEAM_LEAD_PREFIXES = (MODEL_PREFIX, CONSTRAINED_PREFIX, API_PREFIX)


class TeamExperimentConfig(BaseModel):
    """Team tasks: the tasks of task files × information modes × surfaces × lead backends."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=NAME_PATTERN)]
    kind: Literal["team"] = "team"
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


TeamTasks = tuple[tuple[str, TeamTask], ...]
"""(file, task) for every task of a config, in order: loaded once on the driver, shipped to the workers."""


def team_tasks_of(config: TeamExperimentConfig) -> TeamTasks:
    """(file, task) for every task of the config's files, in order, cut to ``clusters``."""
    prior = team_prior()
    tasks = [(path, task) for path in config.tasks for task in load_team_tasks(Path(path), config.format, prior)]
    ids = [f"{path}:{task.id}" for path, task in tasks]
    if len(set(ids)) != len(ids):
        raise ConfigError("DUPLICATE_TASK", f"{config.name}: a task file is listed twice")
    return tuple(tasks[: config.clusters] if config.clusters else tasks)


@cache
def team_lead(name: str) -> Backend:
    """This process's lead backend of that name: a checkpoint is loaded once per worker, not once per task."""
    return team_backend(name, team_prior())


@dataclass(frozen=True, slots=True)
class TeamJob:
    key: str
    task: int  # index into the config's tasks
    mode: TeamMode
    surface: SurfaceName
    backend: str


class TeamKind(ExperimentKind[TeamExperimentConfig, TeamTasks, TeamJob]):
    name = "team"
    config = TeamExperimentConfig
    paths = ("tasks",)
    backend_fields = ("backends",)

    def check(self, config: TeamExperimentConfig, origin: str) -> None:
        team_tasks_of(config)  # every file loads and every item exists: fail now, not in a worker

    def prepare(self, config: TeamExperimentConfig) -> TeamTasks:
        return team_tasks_of(config)

    def expand(self, config: TeamExperimentConfig, prepared: TeamTasks) -> list[TeamJob]:
        return [
            TeamJob(f"{path}:{task.id}|{mode}|{surface}|{backend}", index, mode, surface, backend)
            for index, (path, task) in enumerate(prepared)
            for mode in config.modes
            for surface in config.surfaces
            for backend in config.backends
        ]

    def run_job(self, config: TeamExperimentConfig, prepared: TeamTasks, job: TeamJob) -> dict[str, Any]:
        path, task = prepared[job.task]
        lead, executor = team_lead(job.backend), executor_for(config.world)
        team = run_team_task(
            task, team_prior(), mode=job.mode, surface=job.surface, lead_backend=lead, executor=executor
        )
        record = team_record(team, path, config.world.kind)
        viewer = {"episode": task.id, "condition": job.mode.value, "backend_set": job.backend}
        return record | viewer | {"outcome": {**(record["stages"] or {}), "G": team.success}}

    def report(
        self, config: TeamExperimentConfig, records: Sequence[Record], folder: Path
    ) -> tuple[list[Table], dict[str, bytes]]:
        from gencoord.eval.team_tables import team_tables  # noqa: PLC0415 - scipy: reports only

        return team_tables(records), {}

    def backends(self, config: TeamExperimentConfig) -> list[str]:
        return list(config.backends)

    def with_backends(self, config: TeamExperimentConfig, names: list[str]) -> TeamExperimentConfig:
        return validated_with(config, {"backends": names})


TEAM = TeamKind()
