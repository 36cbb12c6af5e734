"""``gencoord tasks run`` at scale: team tasks in this process, on a process pool, or on Ray actors.

The caller appends every finished task's record to ``team_records.jsonl`` (the only
writer); the tasks travel with the work, so a worker on another node needs no copy of
the task files.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gencoord.backends.registry import API_PREFIX
from gencoord.dsl.surface import SurfaceName
from gencoord.eval.config import ExecutionSpec
from gencoord.eval.dispatch import chunks_of, run_locally
from gencoord.eval.kinds.team import team_lead
from gencoord.eval.ray_runner import FAILED, RayReport, WorkerNeeds, run_on_ray
from gencoord.prior.load import team_prior
from gencoord.run.kinds import kind_of
from gencoord.run.team import TeamMode
from gencoord.run.team_record import team_record
from gencoord.tasks.team_files import AnyTask
from gencoord.worlds.choice import WorldChoice, executor_for

CHUNK = 16


@dataclass(frozen=True)
class TeamItem:
    """One task of a batch, named by its file and id (the name a lost task is reported under)."""

    path: str
    task: AnyTask

    @property
    def key(self) -> str:
        return f"{self.path}:{self.task.id}"


@dataclass(frozen=True)
class TeamTaskWork:
    """Run chunks of tasks, each into its team record (a JSON line)."""

    mode: TeamMode
    surface: SurfaceName
    backend: str
    world: WorldChoice

    def __call__(self, chunk: Sequence[TeamItem]) -> tuple[bytes, int]:
        prior, lead, executor = team_prior(), team_lead(self.backend), executor_for(self.world)
        lines, failed = [], 0
        for item in chunk:
            result = kind_of(item.task).run(item.task, prior, self.mode, self.surface, lead, executor)
            failed += not result.success
            lines.append(json.dumps(team_record(result, item.path, self.world.kind), ensure_ascii=False))
        return ("\n".join(lines) + "\n").encode("utf-8"), failed


def run_team_batch(
    work: TeamTaskWork,
    items: Sequence[TeamItem],
    out: Path,
    workers: int | None,
    execution: ExecutionSpec,
    sink: Callable[[bytes, int, int], None],
) -> tuple[int, RayReport | None]:
    """Run ``items``; ``sink`` gets each finished chunk's records. Returns (tasks lost on every try, Ray's report).

    ``workers`` None means one here, or on Ray as many as the cluster can place. One
    worker runs the tasks in file order; more run them in parallel, and records arrive in
    the order chunks finish.
    """
    if work.world.one_worker:
        workers = 1
    if work.backend.startswith(API_PREFIX):
        workers = min(workers or execution.api_concurrency, execution.api_concurrency)
    size = CHUNK if work.world.kind == "sim" else 1
    if workers != 1:  # spread the tasks over the workers: a few chunks each
        size = max(1, min(size, math.ceil(len(items) / (4 * (workers or os.cpu_count() or 1)))))
    chunks = chunks_of(list(items), size)
    if execution.executor != "ray" or not chunks:
        run_locally(work, chunks, workers or 1, sink)
        return 0, None
    lost = 0

    def give_up(lines: bytes) -> None:
        nonlocal lost
        with (out / FAILED).open("ab") as failed:
            failed.write(lines)
        lost += lines.count(b"\n")

    needs = WorkerNeeds() if work.world.kind == "sim" else WorkerNeeds(memory_mib=execution.worker_memory_mib)
    report = run_on_ray(work, chunks, execution, workers, needs, sink, give_up)
    return lost, report
