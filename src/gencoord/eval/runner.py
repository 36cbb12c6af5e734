"""Run an experiment into ``runs/<name>-<timestamp>/``: a manifest and append-only records.

``episodes.jsonl`` gets one line per episode, each written with a single append, so a
crash can leave at most one torn line at the end; ``resume`` drops it, reads which job
keys are done, and runs only the rest. Nothing is duplicated, nothing is lost. Jobs go
to a local process pool in chunks (one process when ``workers == 1``), or to Ray actors
(``[execution] scheduler = "ray"``, ``eval/ray_runner.py``), with this process the only writer.

One process at a time may write a run folder: a run holds an exclusive lock on it, so two
resumes of one folder cannot record the same jobs twice. An interrupted run (Ctrl-C,
SIGTERM) ends its worker processes before it returns, so nothing is left writing.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from gencoord import __version__
from gencoord.errors import ConfigError
from gencoord.eval.budget import Budget, spent_by, spent_in
from gencoord.eval.config import ExecutionSpec, calls_models, uses_api
from gencoord.eval.dispatch import chunks_of, run_locally
from gencoord.eval.experiment import Experiment, Job, RunPlan, as_plan, config_digest, experiment_from, experiment_kind
from gencoord.eval.ray_runner import FAILED, RayReport, WorkerNeeds, run_on_ray
from gencoord.eval.run_files import LOCK, read_jsonl, run_lock
from gencoord.reasons import Reason
from gencoord.worlds.choice import WorldChoice

MANIFEST = "manifest.json"
RECORDS = "episodes.jsonl"
CHUNK = 48

Sink = Callable[[bytes], None]
"""Called with JSON lines of records as they are reused or written (``gencoord tasks run --jsonl`` prints them)."""

Progress = Callable[[int, int], None]
"""Called at the start and after each chunk with (episodes recorded in all, of those written now that failed)."""


@dataclass(frozen=True)
class RunSummary:
    run_dir: Path
    total: int
    already_done: int
    ran: int
    seconds: float
    lost: int = 0  # jobs whose worker died on every try (Ray): in failed.jsonl, run again by --resume
    ray: RayReport | None = None  # where the jobs ran, when they ran on Ray
    stale: int = 0  # recorded jobs whose record no longer held (their task or gencoord changed): run again


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _make_folder(run_dir: Path) -> None:
    try:
        run_dir.mkdir(parents=True)
    except OSError as exc:
        where = next((parent for parent in run_dir.parents if parent.exists()), run_dir)
        why = "it is a file, not a folder" if where.is_file() else exc.strerror
        raise ConfigError(Reason.BAD_OUTPUT, f"cannot make the run folder {run_dir}: {why} ({where})") from None


def create_run(run: RunPlan | Experiment, root: Path | None = None) -> Path:
    """A fresh run folder, ``<output>/<name>-<timestamp>``, with the manifest.

    A config that cannot be planned fails before any folder exists.
    """
    plan = as_plan(run)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    base = (root or Path(plan.config.output)) / f"{plan.config.name}-{stamp}"
    run_dir, suffix = base, 1
    while run_dir.exists():
        suffix += 1
        run_dir = base.with_name(f"{base.name}-{suffix}")
    _make_folder(run_dir)
    _write_manifest(plan, run_dir)
    return run_dir


def _write_manifest(plan: RunPlan, run_dir: Path) -> None:
    """The manifest (full config, its digest and job count, package and platform versions) and empty records."""
    config = plan.config
    manifest = {
        "name": config.name,
        "kind": config.kind,
        "config": config.model_dump(mode="json"),
        "config_sha256": config_digest(config),
        "episodes": len(plan.jobs),
        "report_facts": plan.kind.report_facts(config, plan.prepared),
        "gencoord": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    try:
        _write_atomically(run_dir / MANIFEST, json.dumps(manifest, indent=2) + "\n")
        (run_dir / RECORDS).touch()
    except OSError as exc:
        discard_run(run_dir)
        raise ConfigError(Reason.BAD_OUTPUT, f"cannot write into {run_dir}: {exc.strerror}") from None


def adopt_run(plan: RunPlan, run_dir: Path) -> None:
    """A folder without a manifest becomes this plan's run; one that holds another config's run is refused."""
    if not (run_dir / MANIFEST).exists():
        _write_manifest(plan, run_dir)
        return
    recorded, _ = read_manifest(run_dir)
    if config_digest(recorded) != config_digest(plan.config):
        raise ConfigError(
            Reason.OTHER_RUN,
            f"{run_dir} holds a run of other settings ({recorded.name}: {recorded.summary()}); "
            "continue that one with the settings it began with, or write this one to another folder",
        )


def discard_run(run_dir: Path) -> None:
    """Remove a run folder that never recorded an episode (a failed start leaves nothing behind)."""
    records = run_dir / RECORDS
    if records.exists() and records.stat().st_size:
        return
    for name in (MANIFEST, MANIFEST + ".tmp", RECORDS, LOCK):
        (run_dir / name).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        run_dir.rmdir()


def read_manifest(run_dir: Path) -> tuple[Experiment, dict[str, object]]:
    path = run_dir / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        return experiment_from(manifest["config"], str(path)), manifest
    except OSError as exc:
        raise ConfigError(Reason.NOT_A_RUN, f"{run_dir}: no readable {MANIFEST} ({exc.strerror})") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(Reason.BAD_MANIFEST, f"{path}: {exc}") from None


def _made_alike(first: Mapping[str, object], second: Mapping[str, object]) -> bool:
    """Two records of one job made by the same gencoord from the same task: one of them should not exist."""
    return all(first.get(field) == second.get(field) for field in ("gencoord", "task_sha256"))


def unique_records(records: Sequence[dict[str, object]]) -> tuple[list[dict[str, object]], int]:
    """The latest record of each job key, in first-recorded order, and how many duplicates were dropped.

    A record a resumed run replaced because it was stale (another gencoord, or a task whose
    content changed since) is superseded, not a duplicate; two alike records of one job are.
    """
    latest: dict[str, dict[str, object]] = {}
    duplicates = 0
    for record in records:
        key = str(record.get("job"))
        earlier = latest.get(key)
        duplicates += earlier is not None and _made_alike(earlier, record)
        latest[key] = record
    return list(latest.values()), duplicates


def read_records(run_dir: Path, repair: bool = False) -> list[dict[str, object]]:
    """Every complete record. A torn last line (a crash mid-append) is skipped, or cut off with ``repair``."""
    return read_jsonl(run_dir / RECORDS, repair)


def goal_met(record: Mapping[str, object]) -> bool:
    """Whether a record's job met its goal (``outcome.G``: the original task's success)."""
    outcome = record.get("outcome")
    return isinstance(outcome, dict) and bool(outcome.get("G"))


@cache
def _config(kind: str, config_json: str) -> Experiment:
    config: Experiment = experiment_kind(kind).config.model_validate_json(config_json)
    return config


@dataclass(frozen=True)
class ChunkWork:
    """An experiment's work as a worker runs it: the config, and what its kind prepared once on the driver.

    Shipping the prepared part (pools, gate instances, loaded task files) lets a worker on
    another node run tasks whose files only the driver has, and spares every worker the
    preparing.
    """

    kind: str
    config_json: str
    prepared: Any

    def __call__(self, chunk: Sequence[Job]) -> tuple[bytes, int]:
        """Run jobs in this process: their JSON lines, and how many failed the original task."""
        config = _config(self.kind, self.config_json)
        kind = experiment_kind(self.kind)
        tags: dict[str, object] = {
            "experiment": config.name,
            "config_sha256": config_digest(config),
            "gencoord": __version__,
        }
        lines, failed = [], 0
        for job in chunk:
            record = kind.run_job(config, self.prepared, job) | {"job": job.key} | tags
            failed += not goal_met(record)
            lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        return ("\n".join(lines) + "\n").encode("utf-8"), failed


def worker_needs(world: WorldChoice | None, execution: ExecutionSpec) -> WorkerNeeds:
    """What one worker's world reserves on a Ray node: a Minecraft server and its bots need memory."""
    if world is None or world.world.in_process:
        return WorkerNeeds()
    return WorkerNeeds(memory_mib=execution.worker_memory_mib)


def _append(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def run_experiment(
    run: RunPlan | Experiment,
    run_dir: Path,
    workers: int | None = None,
    progress: Progress | None = None,
    sink: Sink | None = None,
) -> RunSummary:
    """Run every job of the plan (or config) not yet recorded in ``run_dir`` (so it also resumes).

    ``run_dir`` is a folder ``create_run`` made, or any folder: one without a manifest
    becomes this run's (``gencoord tasks run --out``), one with another config's run is
    refused. A recorded job is reused only if its kind says the record still holds (a
    team task's record is stale once the task's content or gencoord changed): a stale one
    runs again and its new record is appended. Holds the folder's lock throughout; an
    interruption ends the worker processes and propagates, with every finished chunk
    already on disk. ``sink`` sees the reused records' lines first, then each new chunk's.
    """
    plan = as_plan(run)
    with run_lock(run_dir):
        adopt_run(plan, run_dir)
        return _run_locked(plan, run_dir, workers, progress, sink)


def _workers_and_chunk(config: Experiment, workers: int | None, todo: int) -> tuple[int | None, int]:
    """How many workers run the jobs (None: one per core) and how many jobs each chunk holds."""
    requested = workers if workers is not None else (config.workers or None)
    world = getattr(config, "world", None)
    # a real world or a model takes seconds an episode: record each one as it ends (a stop loses
    # none of that work); bots of one name fit on a shared server only once
    size = CHUNK if (world is None or world.world.in_process) and not calls_models(config) else 1
    if world is not None and world.one_worker:
        requested = 1
    if uses_api(config):
        limit = config.execution.api_concurrency
        requested = min(requested or limit, limit)
    if requested != 1:  # a few chunks for each worker, so that the work spreads over all of them
        size = max(1, min(size, math.ceil(todo / (4 * (requested or os.cpu_count() or 1)))))
    return requested, size


def _run_locked(
    plan: RunPlan, run_dir: Path, workers: int | None, progress: Progress | None, sink: Sink | None
) -> RunSummary:
    started = time.perf_counter()
    config, jobs = plan.config, plan.jobs
    recorded = read_records(run_dir, repair=True)
    budget = Budget(config.execution.api_budget_tokens, config.execution.api_budget_charge)
    spent = spent_by(recorded)
    budget.check(spent, str(run_dir))  # spent already: refuse before any worker starts
    latest = {str(record["job"]): record for record in recorded}
    reused = [
        latest[job.key]
        for job in jobs
        if job.key in latest and plan.kind.reusable(config, plan.prepared, job, latest[job.key])
    ]
    done = {str(record["job"]) for record in reused}
    stale = sum(1 for job in jobs if job.key in latest and job.key not in done)
    todo = [job for job in jobs if job.key not in done]
    if sink and reused:
        sink("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in reused).encode("utf-8"))
    world = getattr(config, "world", None)
    requested, size = _workers_and_chunk(config, workers, len(todo))
    work = ChunkWork(config.kind, config.model_dump_json(), plan.prepared)
    fd = os.open(run_dir / RECORDS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    written = failed = 0
    already = len(jobs) - len(todo)
    if progress:
        progress(already, 0)
    lost = 0

    def record(data: bytes, jobs: int, bad: int) -> None:
        nonlocal written, failed, spent
        _append(fd, data)
        written, failed = written + jobs, failed + bad
        if sink:
            sink(data)
        if progress:
            progress(already + written, failed)
        spent += spent_in(data)
        budget.check(spent, str(run_dir))  # ends the workers as an interruption does; the records are on disk

    def give_up(lines: bytes) -> None:
        nonlocal lost
        with (run_dir / FAILED).open("ab") as failed_file:
            failed_file.write(lines)
        lost += lines.count(b"\n")

    ray_report = None
    try:
        chunks = chunks_of(todo, size)
        if config.execution.scheduler == "ray" and chunks:
            needs = worker_needs(world, config.execution)
            ray_report = run_on_ray(work, chunks, config.execution, requested, needs, record, give_up)
        else:
            run_locally(work, chunks, requested or os.cpu_count() or 1, record)
        os.fsync(fd)
    finally:
        os.close(fd)
    seconds = time.perf_counter() - started
    return RunSummary(run_dir, len(jobs), len(done), written, seconds, lost, ray_report, stale)
