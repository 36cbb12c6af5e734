"""Run an experiment's chunks of jobs as Ray tasks; the driver stays the only writer of the records.

Each chunk of jobs is one Ray task (batching keeps scheduling overhead per episode small).
Ray reuses its worker processes, and each keeps its warm world between chunks (the
simulator, the loaded checkpoint: ``executor_for`` and the model cache live per process).
A task whose worker dies is run again by Ray, up to ``retries`` times, from the start of
its chunk; a chunk's records reach the driver only when the whole chunk ended, so a job is
written once whatever died. A chunk that fails every try is written to ``failed.jsonl``
with its reason and the run goes on; ``--resume`` runs those jobs again.

With no address a local Ray instance is started for the run and stopped after it; with
``auto`` or ``host:port`` the run joins that cluster and leaves it running.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from gencoord.errors import ConfigError
from gencoord.eval.config import ExecutionSpec
from gencoord.eval.jobs import AnyJob

FAILED = "failed.jsonl"
Sink = Callable[[bytes, int, int], None]
"""Called on the driver for each finished chunk: (its JSON lines, jobs, failed tasks)."""


def _ray() -> Any:
    try:
        import ray  # noqa: PLC0415  (Ray loads only when a run asks for it)
    except ImportError:
        raise ConfigError(
            "MISSING_EXTRA", "--executor ray needs Ray: pip install 'gencoord[scale]' (or run 'make')"
        ) from None
    return ray


def _chunk_task(config_json: str, jobs: Sequence[AnyJob]) -> tuple[bytes, int]:
    from gencoord.eval.runner import run_chunk  # noqa: PLC0415  (the worker imports the runner itself)

    return run_chunk(config_json, jobs)


def failure_lines(jobs: Sequence[AnyJob], reason: str, tries: int) -> bytes:
    rows = [json.dumps({"job": job.key, "reason": reason, "tries": tries}, ensure_ascii=False) for job in jobs]
    return ("\n".join(rows) + "\n").encode("utf-8")


def run_on_ray(
    config_json: str,
    chunks: Sequence[Sequence[AnyJob]],
    spec: ExecutionSpec,
    workers: int,
    sink: Sink,
    failed: Callable[[bytes], None],
) -> None:
    """Every chunk on Ray; ``sink`` gets each finished chunk, ``failed`` the lines of a chunk that never finished."""
    ray = _ray()
    started_here = not ray.is_initialized()
    if started_here:
        try:
            if spec.ray_address is None:
                ray.init(
                    address="local",
                    num_cpus=workers,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            else:
                ray.init(address=spec.ray_address, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as error:
            where = spec.ray_address or "a local instance"
            raise ConfigError("RAY_UNAVAILABLE", f"cannot start or reach Ray at {where}: {error}") from None
    try:
        task = ray.remote(max_retries=spec.retries, retry_exceptions=False)(_chunk_task)
        pending = {task.remote(config_json, chunk): chunk for chunk in chunks}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            chunk = pending.pop(done[0])
            try:
                data, bad = ray.get(done[0])
            except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as error:
                failed(failure_lines(chunk, f"{type(error).__name__}: the worker died", spec.retries + 1))
                continue
            sink(data, len(chunk), bad)
    finally:
        if started_here:
            ray.shutdown()
