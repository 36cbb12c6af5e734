"""A model folder served as users serve theirs: ``transformers serve`` on a free local port.

The API backend is measured and tested against a real OpenAI-compatible server, not a stub:
the benchmarks and the tests start it the same way, through this one helper. The server is
the ``transformers`` command installed beside this Python, so it serves with the same
library version the in-process backend loads with.
"""

from __future__ import annotations

import atexit
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gencoord.errors import BackendError
from gencoord.reasons import Reason

_PR_SET_PDEATHSIG = 1  # prctl(2)
READY_S = 300.0
"""How long the server may take to load the model and answer its health check."""


@dataclass(frozen=True, slots=True)
class Served:
    """A running server: its process (a test may kill it to see an outage) and its OpenAI base URL."""

    process: subprocess.Popen[bytes]
    url: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _dying_with_parent(command: list[str]) -> list[str]:
    """``command`` started so that, on Linux, the kernel kills it when the process that started it dies, however
    that dies (a server answering a long call outlives a polite SIGTERM). A one-line Python asks for that
    (``prctl(PR_SET_PDEATHSIG)``, kept across ``exec``) and becomes the server: nothing runs between fork and exec
    in this, perhaps threaded, process. The kernel ties it to the thread that started it, which for gencoord is the
    one that calls the backends (a short-lived thread must not start one)."""
    if sys.platform != "linux":
        return command
    become = (
        "import ctypes, os, sys; "
        f"ctypes.CDLL(None).prctl({_PR_SET_PDEATHSIG}, {int(signal.SIGKILL)}); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", become, *command]


@contextmanager
def transformers_serve(model: Path, log: Path, ready_s: float = READY_S) -> Iterator[Served]:
    """``transformers serve MODEL`` on the CPU, its output in ``log``; yields once it answers, kills it after.

    Raises BackendError (``API_UNAVAILABLE``) with the end of the server's log when it exits
    or does not answer within ``ready_s``.
    """
    port = _free_port()
    command = [str(Path(sys.executable).with_name("transformers")), "serve", str(model)]
    command += ["--device", "cpu", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as output:
        server = subprocess.Popen(_dying_with_parent(command), stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + ready_s
        while not _answers(port):
            if server.poll() is not None or time.monotonic() > deadline:
                why = "exited" if server.poll() is not None else f"did not answer in {ready_s:.0f} s"
                tail = log.read_text(errors="replace")[-2000:]
                raise BackendError(Reason.API_UNAVAILABLE, f"transformers serve {model} {why}: {tail}")
            time.sleep(0.5)
        yield Served(server, f"http://127.0.0.1:{port}/v1")
    finally:
        server.kill()
        server.wait()


_SERVERS = ExitStack()
atexit.register(_SERVERS.close)


@cache
def serving(name: str) -> str:
    """``<base url>#<model>`` of a pretrained base (a shipped base's name, or a local model folder or ``.gguf``)
    served by ``transformers serve`` from this process, started at the first call and stopped when the process
    ends: the ``prompted:`` backends send it the paper's rules and worked examples as they send any endpoint."""
    from gencoord.models.pretrained import base_folder, cache_root  # noqa: PLC0415  (torch loads only to serve)

    folder = base_folder(name)
    log = cache_root() / f"serve-{folder.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    served = _SERVERS.enter_context(transformers_serve(folder, log))
    return f"{served.url}#{folder}"


def stop_serving() -> None:
    """Stop every base :func:`serving` started here (each stops when this process ends in any case)."""
    _SERVERS.close()
    serving.cache_clear()
