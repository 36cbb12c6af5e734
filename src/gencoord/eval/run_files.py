"""Run folders' shared mechanics: one writer at a time, and append-only JSON lines that survive a crash.

Every run folder, ``gencoord run``'s and ``gencoord tasks run``'s, is written through these:
an exclusive lock held for the whole run (a second writer fails at once, naming the first),
and records appended a whole line at a time, so a crash leaves at most one torn line at
the end, which a resumed run cuts off before it appends.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gencoord.errors import ConfigError
from gencoord.reasons import Reason

LOCK = ".lock"


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold the folder's exclusive lock, or fail at once naming the process that holds it.

    The lock file goes when the lock is released, so a finished run leaves none behind. A
    process that opened the file just before it went may then lock a file no longer in
    the folder: after locking, each checks that its file is still the folder's, and tries
    again if not, so two writers never both hold the lock.
    """
    path = run_dir / LOCK
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ConfigError(Reason.BAD_OUTPUT, f"cannot lock {run_dir}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "another process"
            os.close(fd)
            raise ConfigError(
                Reason.RUN_LOCKED, f"{run_dir} is being written by process {holder}; wait for it, or stop it first"
            ) from None
        if _still_there(fd, path):
            break
        os.close(fd)  # the holder before us removed it on release: lock the folder's new file
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # while still locked: nobody can take a lock on it in between
        os.close(fd)  # closing releases the lock


def _still_there(fd: int, path: Path) -> bool:
    try:
        mine, theirs = os.fstat(fd), path.stat()
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def read_jsonl(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """Every complete record of ``path``; a torn last line (a crash mid-append) is skipped, or cut with ``repair``."""
    data = path.read_bytes() if path.exists() else b""
    complete, newline, tail = data.rpartition(b"\n")
    records: list[dict[str, Any]] = []
    for number, line in enumerate(complete.split(b"\n"), start=1):
        if line:
            try:
                records.append(json.loads(line))
            except ValueError:
                raise ConfigError(Reason.RECORDS_CORRUPT, f"{path}: line {number} is not a JSON record") from None
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
