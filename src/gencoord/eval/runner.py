"""Run an experiment into ``runs/<name>-<timestamp>/``: a manifest and append-only records.

``episodes.jsonl`` gets one line per episode, each written with a single append, so a
crash can leave at most one torn line at the end; ``resume`` drops it, reads which job
keys are done, and runs only the rest. Nothing is duplicated, nothing is lost. Jobs go
to a local process pool in chunks (one process when ``workers == 1``).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from gencoord import __version__
from gencoord.errors import ConfigError
from gencoord.eval.config import Experiment, experiment_from
from gencoord.eval.jobs import AnyJob, expand, run_job

MANIFEST = "manifest.json"
RECORDS = "episodes.jsonl"
CHUNK = 48

Progress = Callable[[int, int], None]
"""Called at the start and after each chunk with (episodes recorded in all, of those written now that failed)."""


@dataclass(frozen=True)
class RunSummary:
    run_dir: Path
    total: int
    already_done: int
    ran: int
    seconds: float


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def create_run(config: Experiment, root: Path | None = None) -> Path:
    """A fresh run folder with the manifest (full config, package and platform versions)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    base = (root or Path(config.output)) / f"{config.name}-{stamp}"
    run_dir, suffix = base, 1
    while run_dir.exists():
        suffix += 1
        run_dir = base.with_name(f"{base.name}-{suffix}")
    run_dir.mkdir(parents=True)
    manifest = {
        "name": config.name,
        "kind": config.kind.value,
        "config": config.model_dump(mode="json"),
        "episodes": len(expand(config)),
        "gencoord": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    _write_atomically(run_dir / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    (run_dir / RECORDS).touch()
    return run_dir


def read_manifest(run_dir: Path) -> tuple[Experiment, dict[str, object]]:
    path = run_dir / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        return experiment_from(manifest["config"]), manifest
    except OSError as exc:
        raise ConfigError("NOT_A_RUN", f"{run_dir}: no readable {MANIFEST} ({exc.strerror})") from None
    except (ValueError, KeyError) as exc:
        raise ConfigError("BAD_MANIFEST", f"{path}: {exc}") from None


def read_records(run_dir: Path, repair: bool = False) -> list[dict[str, object]]:
    """Every complete record. A torn last line (a crash mid-append) is skipped, or cut off with ``repair``."""
    path = run_dir / RECORDS
    data = path.read_bytes() if path.exists() else b""
    complete, newline, tail = data.rpartition(b"\n")
    records: list[dict[str, object]] = []
    for number, line in enumerate(complete.split(b"\n"), start=1):
        if line:
            try:
                records.append(json.loads(line))
            except ValueError:
                raise ConfigError("RECORDS_CORRUPT", f"{path}: line {number} is not a JSON record") from None
    if tail:
        try:
            records.append(json.loads(tail))
        except ValueError:  # torn by a crash: the job will run again
            if repair:
                with path.open("r+b") as handle:
                    handle.truncate(len(complete) + len(newline))
        else:
            if repair:  # a whole record that only lacks its newline
                with path.open("ab") as handle:
                    handle.write(b"\n")
    return records


@cache
def _config(config_json: str) -> Experiment:
    return experiment_from(json.loads(config_json))


def run_chunk(config_json: str, jobs: Sequence[AnyJob]) -> tuple[bytes, int]:
    """Run jobs in this process: their JSON lines, and how many failed the original task."""
    config = _config(config_json)
    lines, failed = [], 0
    for job in jobs:
        record = run_job(config, config_json, job)
        outcome = record["outcome"]
        failed += not (isinstance(outcome, dict) and outcome.get("G"))
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode("utf-8"), failed


def _chunks(jobs: list[AnyJob], size: int = CHUNK) -> Iterator[list[AnyJob]]:
    for start in range(0, len(jobs), size):
        yield jobs[start : start + size]


def _append(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def run_experiment(
    config: Experiment, run_dir: Path, workers: int | None = None, progress: Progress | None = None
) -> RunSummary:
    """Run every job of ``config`` not yet recorded in ``run_dir`` (so it also resumes)."""
    started = time.perf_counter()
    jobs = expand(config)
    done = {str(record["job"]) for record in read_records(run_dir, repair=True)}
    todo = [job for job in jobs if job.key not in done]
    config_json = config.model_dump_json()
    count = workers if workers is not None else (config.workers or os.cpu_count() or 1)
    world = getattr(config, "world", None)
    # a real world takes seconds an episode: record each one as it ends; bots of one
    # name fit on a shared server only once
    size = CHUNK if world is None or world.kind == "sim" else 1
    if world is not None and world.shared_server:
        count = 1
    fd = os.open(run_dir / RECORDS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    written = failed = 0
    already = len(jobs) - len(todo)
    if progress:
        progress(already, 0)
    try:
        if count <= 1 or len(todo) <= size:
            for chunk in _chunks(todo, size):
                data, bad = run_chunk(config_json, chunk)
                _append(fd, data)
                written, failed = written + len(chunk), failed + bad
                if progress:
                    progress(already + written, failed)
        else:
            with ProcessPoolExecutor(max_workers=count) as pool:
                futures = {pool.submit(run_chunk, config_json, chunk): len(chunk) for chunk in _chunks(todo, size)}
                for future in as_completed(futures):
                    data, bad = future.result()
                    _append(fd, data)
                    written, failed = written + futures[future], failed + bad
                    if progress:
                        progress(already + written, failed)
        os.fsync(fd)
    finally:
        os.close(fd)
    return RunSummary(run_dir, len(jobs), len(jobs) - len(todo), written, time.perf_counter() - started)
