"""Run chunks of jobs on Ray actors; the driver stays the only writer of the records.

One actor per worker keeps its warm world for the whole run: the simulator, a loaded
checkpoint, or a Minecraft server and its bots, closed when the run ends. Each actor asks
Ray for what its world needs (a CPU, and for Minecraft the memory of a server and its
bots), so Ray places no more worlds on a node than it can hold; the driver sizes the run
to what the cluster can place and hands a chunk only to an actor that is up.

An actor that dies is restarted by Ray and its chunk run again from the start, up to
``retries`` times; a chunk's records reach the driver only when the whole chunk ended, so
a job is written once whatever died. A chunk that fails every try is written to
``failed.jsonl`` with its reason and the run goes on; ``--resume`` runs those jobs again.

With no address a local Ray instance is started for the run and stopped after it; with
``auto`` or ``host:port`` the run joins that cluster and leaves it running.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gencoord.errors import ConfigError
from gencoord.eval.config import ExecutionSpec
from gencoord.eval.dispatch import Keyed, Sink, Work
from gencoord.reasons import Reason

FAILED = "failed.jsonl"
MIB = 1024 * 1024
CLOSE_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class WorkerNeeds:
    """What one worker's world takes on a node: Ray reserves it for the actor's lifetime."""

    cpus: float = 1.0
    memory_mib: int = 0  # 0: nothing reserved beyond the CPU (the simulator)


@dataclass(frozen=True)
class WorkerReport:
    """What a worker did, reported when the run ends (how often it loaded a checkpoint, say)."""

    pid: int
    node: str
    chunks: int
    checkpoint_loads: int


@dataclass(frozen=True)
class RayReport:
    capacity: int  # how many workers the cluster could place
    workers: tuple[WorkerReport, ...]  # those that ran


def ray_line(report: RayReport) -> str:
    """One line for the user: where the run went, and how often workers loaded checkpoints."""
    nodes = len({worker.node for worker in report.workers})
    loads = [worker.checkpoint_loads for worker in report.workers]
    line = f"on Ray: {len(report.workers)} workers on {nodes} nodes (room for {report.capacity})"
    if any(loads):
        low, high = min(loads), max(loads)
        line += f"; checkpoints loaded per worker: {low}" + (f" to {high}" if high != low else "")
    return line


def _ray() -> Any:
    try:
        import ray  # noqa: PLC0415  (Ray loads only when a run asks for it)
    except ImportError:
        raise ConfigError(
            Reason.MISSING_EXTRA, "--scheduler ray needs Ray: pip install 'gencoord[scale]' (or run 'make')"
        ) from None
    return ray


def _checkpoint_loads() -> int:
    local = sys.modules.get("gencoord.backends.local")
    return 0 if local is None else int(local.loaded.cache_info().misses)


class EpisodeWorker:
    """A Ray actor: runs chunks with its own warm world until the driver closes it."""

    def __init__(self, work: Work) -> None:
        self._work = work
        self._chunks = 0

    def ready(self) -> bool:
        return True

    def run(self, chunk: Sequence[Any]) -> tuple[bytes, int]:
        self._chunks += 1
        return self._work(chunk)

    def close(self) -> WorkerReport:
        from gencoord.worlds.choice import close_executors  # noqa: PLC0415  (in the worker's process)

        close_executors()
        import ray  # noqa: PLC0415

        node = str(ray.get_runtime_context().get_node_id())
        return WorkerReport(os.getpid(), node, self._chunks, _checkpoint_loads())


def failure_lines(jobs: Sequence[Keyed], reason: str, tries: int) -> bytes:
    rows = [json.dumps({"job": job.key, "reason": reason, "tries": tries}, ensure_ascii=False) for job in jobs]
    return ("\n".join(rows) + "\n").encode("utf-8")


def _capacity(ray: Any, needs: WorkerNeeds) -> int:
    """How many workers the live nodes can hold at once."""
    total = 0
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        resources = node.get("Resources", {})
        fits = int(resources.get("CPU", 0) // needs.cpus)
        if needs.memory_mib:
            fits = min(fits, int(resources.get("memory", 0) // (needs.memory_mib * MIB)))
        total += fits
    return total


def _answering(address: str) -> str | None:
    """Why nothing answers at a ``host:port`` address (None when something does, or for ``auto``).

    Ray itself would wait minutes on an address where no head node listens.
    """
    if address == "auto":
        return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not (port.isascii() and port.isdigit()):
        return f"{address!r} is not auto or host:port"
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            return None
    except OSError as error:
        return f"nothing answers at {host}:{port} ({error.strerror or error}); is `ray start --head` running there?"


def _start(ray: Any, spec: ExecutionSpec, workers: int | None) -> None:
    if spec.ray_address is not None:
        problem = _answering(spec.ray_address)
        if problem is not None:
            raise ConfigError(Reason.RAY_UNAVAILABLE, f"cannot reach Ray: {problem}")
    try:
        if spec.ray_address is None:
            ray.init(
                address="local",
                num_cpus=workers or os.cpu_count() or 1,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        else:
            ray.init(address=spec.ray_address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        where = spec.ray_address or "a local instance"
        raise ConfigError(Reason.RAY_UNAVAILABLE, f"cannot start or reach Ray at {where}: {error}") from None


def run_on_ray(
    work: Work,
    chunks: Sequence[Sequence[Keyed]],
    spec: ExecutionSpec,
    workers: int | None,
    needs: WorkerNeeds,
    sink: Sink,
    failed: Callable[[bytes], None],
) -> RayReport:
    """Every chunk on Ray actors; ``sink`` gets each finished chunk, ``failed`` the lines of one that never finished.

    ``workers`` caps the actors (None: as many as the cluster can place).
    """
    ray = _ray()
    started_here = not ray.is_initialized()
    if started_here:
        _start(ray, spec, workers)
    actors: list[Any] = []
    try:
        capacity = _capacity(ray, needs)
        if capacity == 0:
            raise ConfigError(
                Reason.RAY_NO_ROOM,
                f"no Ray node can hold a worker that needs {needs.cpus:g} CPU"
                + (f" and {needs.memory_mib} MiB of memory" if needs.memory_mib else ""),
            )
        count = max(1, min(workers or capacity, capacity, len(chunks)))
        options: dict[str, Any] = {"num_cpus": needs.cpus, "max_restarts": -1, "max_task_retries": spec.retries}
        if needs.memory_mib:
            options["memory"] = needs.memory_mib * MIB
        worker_class = ray.remote(EpisodeWorker).options(**options)
        actors = [worker_class.remote(work) for _ in range(count)]
        placed = _dispatch(ray, actors, chunks, spec, sink, failed)
        return RayReport(capacity, _close(ray, placed))
    finally:
        for actor in actors:
            ray.kill(actor, no_restart=True)
        if started_here:
            ray.shutdown()


def _dispatch(
    ray: Any,
    actors: list[Any],
    chunks: Sequence[Sequence[Keyed]],
    spec: ExecutionSpec,
    sink: Sink,
    failed: Callable[[bytes], None],
) -> list[Any]:
    """Hand each actor one chunk at a time, once it is up; stop when every chunk has an outcome.

    Returns the actors that came up (an actor the cluster never placed held no chunk).
    """
    queue = deque(chunks)
    waiting: dict[Any, tuple[Any, Sequence[Keyed] | None]] = {actor.ready.remote(): (actor, None) for actor in actors}
    in_flight = 0
    placed: dict[int, Any] = {}
    lost = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError)
    while queue or in_flight:
        done, _ = ray.wait(list(waiting), num_returns=1)
        actor, chunk = waiting.pop(done[0])
        try:
            result = ray.get(done[0])
        except lost as error:
            if chunk is not None:
                in_flight -= 1
                failed(failure_lines(chunk, _died(error), spec.retries + 1))
        else:
            placed.setdefault(id(actor), actor)
            if chunk is not None:
                in_flight -= 1
                data, bad = result
                sink(data, len(chunk), bad)
        if queue:
            chunk = queue.popleft()
            waiting[actor.run.remote(chunk)] = (actor, chunk)
            in_flight += 1
    return list(placed.values())


def _died(error: Exception) -> str:
    detail = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: the worker died" + (f" ({detail[:200]})" if detail else "")


def _close(ray: Any, actors: list[Any]) -> tuple[WorkerReport, ...]:
    """Close every placed actor's world (Minecraft servers end with it) and collect what each did."""
    refs = [actor.close.remote() for actor in actors]
    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=CLOSE_TIMEOUT_S)
    reports = []
    for ref in ready:
        try:
            reports.append(ray.get(ref))
        except ray.exceptions.RayError:
            continue
    return tuple(report for report in reports if report.chunks)
