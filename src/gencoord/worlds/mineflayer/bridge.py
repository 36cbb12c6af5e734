"""The Python end of the Node bridge: JSON lines over a child process's stdin/stdout.

One Node process per world holds the bots (and the embedded server). Calls may come from
several threads at once (each agent's action queue has one); answers are matched to
calls by id. Every call has a timeout; the process runs in its own session so that
closing the bridge, or this interpreter exiting, ends it and everything it started: no
orphan servers.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
from collections import deque
from pathlib import Path
from typing import Any, Protocol

from gencoord.errors import WorldError
from gencoord.reasons import Reason

JS_DIR = Path(os.environ.get("GENCOORD_MINECRAFT_JS", Path(__file__).with_name("js")))
STDERR_LINES = 40


class Bridge(Protocol):
    """What the Minecraft executor needs from a bridge (the Node one, or a test fake)."""

    def call(self, op: str, args: dict[str, Any], timeout_s: float) -> dict[str, Any]: ...

    @property
    def alive(self) -> bool: ...

    def close(self) -> None: ...


class BridgeCallError(WorldError):
    """The bridge answered a call with an error (its code is the reason)."""


def node_ready(js_dir: Path = JS_DIR) -> str | None:
    """Why the Node side cannot start here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not on PATH (Node.js 20 or newer is needed for the Minecraft world)"
    if not (js_dir / "node_modules" / "mineflayer").is_dir():
        return (
            f"the Minecraft world's npm packages are not installed: run `npm ci --prefix {js_dir}` "
            "(in a source checkout, `make run` or `make test` does it)"
        )
    return None


class NodeBridge:
    def __init__(self, js_dir: Path = JS_DIR, hello_timeout_s: float = 20.0) -> None:
        problem = node_ready(js_dir)
        if problem is not None:
            raise WorldError(Reason.NODE_UNAVAILABLE, problem)
        self._process = subprocess.Popen(
            ["node", str(js_dir / "bridge.js")],
            cwd=js_dir,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            start_new_session=True,  # its own process group: close() ends the server and bots with it
        )
        self._events: queue.Queue[dict[str, Any] | WorldError] = queue.Queue()  # messages no call waits for
        self._pending: dict[int, queue.Queue[dict[str, Any] | WorldError]] = {}
        self._lock = threading.Lock()  # ids, the pending table and stdin writes
        self._gone: WorldError | None = None  # set once the process has ended
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._next_id = 0
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        atexit.register(self.close)
        try:
            hello = self._events.get(timeout=hello_timeout_s)
        except queue.Empty:
            hello = WorldError(
                Reason.BRIDGE_TIMEOUT, f"no answer from the Minecraft bridge within {hello_timeout_s:g} s"
            )
        if isinstance(hello, WorldError) or hello.get("event") != "hello":
            self.close()
            if isinstance(hello, WorldError):
                raise hello
            raise WorldError(Reason.BRIDGE_PROTOCOL, f"the bridge began with {hello!r}, not a hello")

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    @property
    def pid(self) -> int:
        return self._process.pid

    def _read_stdout(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            try:
                message: dict[str, Any] = json.loads(line)
            except json.JSONDecodeError:
                self._deliver_all(
                    WorldError(Reason.BRIDGE_PROTOCOL, f"the bridge wrote a line that is not JSON: {line[:200]!r}")
                )
                continue
            ident = message.get("id")
            with self._lock:
                slot = self._pending.pop(ident, None) if isinstance(ident, int) else None
            if slot is not None:
                slot.put(message)
            elif "event" in message:
                self._events.put(message)
            # else: the late answer of a call that timed out; nobody waits for it
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=2)  # reap it: a dead bridge must not linger as a zombie
        tail = " | ".join(list(self._stderr)[-5:])
        self._gone = WorldError(Reason.BRIDGE_DIED, "the Minecraft bridge exited" + (f": {tail}" if tail else ""))
        self._deliver_all(self._gone)
        self._events.put(self._gone)

    def _deliver_all(self, error: WorldError) -> None:
        with self._lock:
            waiting, self._pending = list(self._pending.values()), {}
        for slot in waiting:
            slot.put(error)

    def _read_stderr(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            self._stderr.append(_printable(line))

    def _died(self, doing: str) -> WorldError:
        reason = self._gone.message if self._gone is not None else "the Minecraft bridge exited"
        return WorldError(Reason.BRIDGE_DIED, reason.replace("exited", f"exited while {doing}", 1))

    def call(self, op: str, args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        slot: queue.Queue[dict[str, Any] | WorldError] = queue.Queue(maxsize=1)
        with self._lock:
            if self._gone is not None or not self.alive:
                raise self._died(f"asked to {op}")
            self._next_id += 1
            ident = self._next_id
            self._pending[ident] = slot
            assert self._process.stdin is not None
            try:
                self._process.stdin.write(json.dumps({"id": ident, "op": op, "args": args}) + "\n")
                self._process.stdin.flush()
            except (BrokenPipeError, OSError):
                del self._pending[ident]
                raise self._died(f"sending {op}") from None
        try:
            answer = slot.get(timeout=timeout_s)
        except queue.Empty:
            with self._lock:
                self._pending.pop(ident, None)
            raise WorldError(
                Reason.BRIDGE_TIMEOUT, f"no answer from the Minecraft bridge within {timeout_s:g} s while running {op}"
            ) from None
        if isinstance(answer, WorldError):
            if answer.reason == Reason.BRIDGE_DIED:
                raise self._died(f"running {op}")
            raise answer
        if not answer.get("ok"):
            error = answer.get("error") or {}
            code, message = str(error.get("code", "")), str(error.get("message", answer))
            if code in Reason.__members__:
                raise BridgeCallError(Reason(code), message)
            raise BridgeCallError(Reason.BRIDGE_ERROR, f"{code or 'no code'}: {message}")
        result: dict[str, Any] = answer.get("result") or {}
        return result

    def close(self) -> None:
        """Ask the bridge to stop; kill its process group if it does not within 5 s."""
        atexit.unregister(self.close)
        if self.alive:
            try:
                assert self._process.stdin is not None
                self._process.stdin.close()
                self._process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait()


_TERMINAL_CODES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|[\x00-\x08\x0b-\x1f\x7f]")


def _printable(line: str) -> str:
    """A line of the bridge's stderr as a message may quote it: terminal escapes (a prompt's cursor moves) removed."""
    return _TERMINAL_CODES.sub("", line).strip()
