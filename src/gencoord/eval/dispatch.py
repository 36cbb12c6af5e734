"""Run chunks of jobs in this process or on a local process pool; the caller's sink sees every finished chunk.

The same ``Work`` (a picklable callable: a chunk of jobs → their JSON lines and how many
failed the task) runs here, on the pool, or on Ray actors (``eval/ray_runner.py``). Only
the caller writes records, whatever ran the work, so one writer owns each record file.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Any, Protocol, TypeVar

Item = TypeVar("Item")

Sink = Callable[[bytes, int, int], None]
"""Called by the caller's thread for each finished chunk: (its JSON lines, jobs in it, failed tasks)."""


class Keyed(Protocol):
    """A job as dispatch sees it: only its stable key (what a lost job is reported under)."""

    @property
    def key(self) -> str: ...


class Work(Protocol):
    """What a worker runs: a chunk of jobs → (their JSON lines, how many of them failed the task)."""

    def __call__(self, chunk: Sequence[Any]) -> tuple[bytes, int]: ...


def chunks_of(items: Sequence[Item], size: int) -> list[list[Item]]:
    return [list(items[start : start + size]) for start in range(0, len(items), size)]


def _worker_start() -> None:
    """Ctrl-C reaches the whole process group: the parent alone handles it and ends the workers.

    A forked worker inherits the caller's SIGTERM handler, which may turn the signal into an
    exception; the parent ends its workers with SIGTERM, and an idle worker would print that
    exception's traceback on its way out. Workers die quietly instead.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _start_method() -> BaseContext | None:
    """Fork (the default: workers inherit what this process loaded), unless Ray was loaded here.

    Forking a process whose Ray threads hold locks (they outlive ``ray.shutdown``) can leave
    the children waiting on them forever; a fresh interpreter from the fork server has no
    such threads. Its workers import what they need again, and see only what installed
    packages declare, not kinds or backends registered in this process.
    """
    return multiprocessing.get_context("forkserver") if "ray" in sys.modules else None


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Ends the pool's own processes, and no other child of the caller's.

    The executor offers no public way to reach its workers before Python 3.14
    (``terminate_workers``), so this reads its process table.
    """
    workers = list((pool._processes or {}).values())
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(timeout=5)
        if worker.is_alive():
            worker.kill()


def run_locally(work: Work, chunks: Sequence[Sequence[Any]], workers: int, sink: Sink) -> None:
    """Every chunk here (one worker, or one chunk) or on a process pool of ``workers``.

    An interruption ends the pool's processes and propagates; every chunk that finished
    before it has already reached the sink.
    """
    if workers <= 1 or len(chunks) <= 1:
        for chunk in chunks:
            data, bad = work(chunk)
            sink(data, len(chunk), bad)
        return
    with tempfile.TemporaryDirectory(prefix="gencoord-chunks-") as folder:
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_start, mp_context=_start_method())
        try:
            futures = {
                pool.submit(_through_file, work, chunk, Path(folder) / f"{index}.jsonl"): len(chunk)
                for index, chunk in enumerate(chunks)
            }
            for future in as_completed(futures):
                path, bad = future.result()
                data = path.read_bytes()
                path.unlink()  # a long sweep's chunks would otherwise sit beside its records until it ends
                sink(data, futures[future], bad)
        except BaseException:
            # Workers first, then a waiting shutdown: its manager thread sees them gone and ends
            # before the interpreter's exit hook would wake it through a pipe it is closing.
            _end_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown()


def _through_file(work: Work, chunk: Sequence[Any], path: Path) -> tuple[Path, int]:
    """Runs ``work`` in a worker and hands its lines back in ``path``.

    A worker ended part-way through sending a large result would leave half a message in
    the pool's result pipe, and the pool's manager thread would wait for the rest forever,
    so an interrupted run could never exit. A path and a count make a message a single
    pipe write, which an ended worker cannot split.
    """
    data, bad = work(chunk)
    path.write_bytes(data)
    return path, bad


def lines(data: bytes) -> Iterator[bytes]:
    """The non-empty JSON lines of a chunk's output."""
    return (line for line in data.split(b"\n") if line)
