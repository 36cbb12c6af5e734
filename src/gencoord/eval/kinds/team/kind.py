"""Team tasks from task files: n agents with private bags, × information modes × surfaces × lead backends.

Any task kind a file holds (crafting, cooking, construction) runs through its own runner
(``run/kinds.py``). A task its file cannot give as written is one job too, whose record
is the refusal (its code and why): one bad task never stops its file. ``gencoord tasks
run`` is this kind, built from the command line's arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any

from gencoord import __version__
from gencoord.backends.families import TeamRoles
from gencoord.backends.registry import TeamPlayers, team_players
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.experiment import ExperimentKind, Record, ReportParts, validated_with
from gencoord.eval.kinds.team.config import TeamExperimentConfig, TeamTasks
from gencoord.prior.load import team_prior
from gencoord.reasons import Reason
from gencoord.run.any_task import run_through_outages
from gencoord.run.kinds import task_kind
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_record import refusal_record, task_digest, team_record
from gencoord.runtime.thinking import Thinking
from gencoord.tasks.task_format import AnyTask
from gencoord.tasks.team_files import Refusal, read_task_file
from gencoord.worlds.choice import executor_for


def team_tasks_of(config: TeamExperimentConfig) -> TeamTasks:
    """Every task of the config's files in order, those ``match`` names, cut to ``clusters``, each ``repeats``
    times, then every refusal. A repeat is the task under the id ``<id>#<n>``: the simulator rolls its random
    drops from the id, so each repeat is its own draw.

    Only a file that cannot be read as a task file at all is an error (ConfigError), or a ``match`` that
    names no task (NO_TASK_MATCHES).
    """
    if len(set(config.tasks)) != len(config.tasks):
        raise ConfigError(Reason.DUPLICATE_TASK, f"{config.name}: a task file is listed twice")
    prior = team_prior()
    files = [read_task_file(Path(path), config.format, prior) for path in config.tasks]
    tasks = [(path, task) for path, loaded in zip(config.tasks, files, strict=True) for task in loaded.tasks]
    refused = [(path, refusal) for path, loaded in zip(config.tasks, files, strict=True) for refusal in loaded.refused]
    if config.match:
        tasks = [(path, task) for path, task in tasks if any(fnmatchcase(task.id, p) for p in config.match)]
        refused = [(path, r) for path, r in refused if any(fnmatchcase(r.task, p) for p in config.match)]
        if not tasks and not refused:
            raise ConfigError(Reason.NO_TASK_MATCHES, f"{config.name}: no task id matches {' or '.join(config.match)}")
    kept: list[tuple[str, AnyTask | Refusal]] = [*(tasks[: config.clusters] if config.clusters else tasks)]
    if config.repeats > 1:
        kept = [
            (path, task if n == 1 or isinstance(task, Refusal) else task.model_copy(update={"id": f"{task.id}#{n}"}))
            for path, task in kept
            for n in range(1, config.repeats + 1)
        ]
    return (*kept, *refused)


def _ident(entry: AnyTask | Refusal) -> str:
    return entry.task if isinstance(entry, Refusal) else entry.id


@cache
def players_of(roles: TeamRoles, thinking: Thinking | None = None) -> TeamPlayers:
    """This process's backends for those roles: a checkpoint is loaded once per worker, not once per task."""
    return team_players(roles, team_prior(), thinking)


@dataclass(frozen=True, slots=True)
class TeamJob:
    key: str
    task: int  # index into the config's tasks
    mode: TeamMode
    surface: SurfaceName
    backend: TeamRoles


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
        thought = "" if config.thinking.none else f"|{config.thinking.describe()}"  # a record made otherwise differs
        return [
            TeamJob(f"{path}:{_ident(entry)}|{mode}|{surface}|{backend}{thought}", index, mode, surface, backend)
            for index, (path, entry) in enumerate(prepared)
            for mode in config.modes
            for surface in config.surfaces
            for backend in config.backends
        ]

    def run_job(self, config: TeamExperimentConfig, prepared: TeamTasks, job: TeamJob) -> dict[str, Any]:
        path, entry = prepared[job.task]
        players = players_of(job.backend, config.thinking)
        viewer = {"episode": _ident(entry), "condition": job.mode.value, "backend_set": job.backend}
        if isinstance(entry, Refusal):
            refused = refusal_record(entry, path, job.mode, job.surface.value, config.world.kind, job.backend)
            return refused | viewer | {"outcome": {"G": False}}
        team = run_through_outages(
            lambda: task_kind(entry).play(
                entry, team_prior(), job.mode, job.surface, players, executor_for(config.world)
            )
        )
        record = team_record(team, path, config.world.kind, job.backend)
        return record | viewer | {"outcome": {**(record["stages"] or {}), "G": team.success}}

    def reusable(self, config: TeamExperimentConfig, prepared: TeamTasks, job: TeamJob, record: Record) -> bool:
        """A record holds while its task's content and gencoord are those it was made with."""
        _, entry = prepared[job.task]
        return record.get("task_sha256") == task_digest(entry) and record.get("gencoord") == __version__

    def report(
        self, config: TeamExperimentConfig, records: Sequence[Record], out: Path, facts: Mapping[str, Any]
    ) -> ReportParts:
        from gencoord.eval.kinds.team.tables import team_tables  # noqa: PLC0415 - scipy: reports only
        from gencoord.eval.kinds.team.traces import trace_sections  # noqa: PLC0415 - matplotlib: reports only

        headline, tables = team_tables(records)
        return ReportParts(tables, sections=trace_sections(records, out), headline=headline)

    def backends(self, config: TeamExperimentConfig) -> list[str]:
        return list(config.backends)

    def with_backends(self, config: TeamExperimentConfig, names: list[str]) -> TeamExperimentConfig:
        return validated_with(config, {"backends": names})


TEAM = TeamKind()
