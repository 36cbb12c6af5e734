"""Run folders are safe: one writer at a time, interruptions stop the workers, reports trust the records."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gencoord.errors import ConfigError
from gencoord.eval import run_files
from gencoord.eval.config import parse_experiment
from gencoord.eval.report import write_report
from gencoord.eval.run_files import LOCK
from gencoord.eval.runner import MANIFEST, RECORDS, create_run, read_records, run_experiment, run_lock

SMALL = 'name = "small"\npool = "request_intervention"\nclusters = 4\nconditions = ["request", "no_request"]\n'
BIG = (
    'name = "big"\npool = "request_intervention"\nconditions = ["request", "no_request", "alternative_request"]\n'
    f"seeds = {list(range(36))}\n"  # about 20 s on two workers: an interruption lands mid-run even on a loaded machine
)


def test_a_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path: Path) -> None:
    config = parse_experiment(SMALL)
    run_dir = create_run(config, tmp_path)
    with run_lock(run_dir):
        with pytest.raises(ConfigError) as caught:
            run_experiment(config, run_dir, workers=1)
        assert caught.value.reason == "RUN_LOCKED" and str(os.getpid()) in caught.value.message
    assert run_experiment(config, run_dir, workers=1).ran == len(read_records(run_dir))  # released: it runs
    assert not (run_dir / LOCK).exists()  # a finished run leaves no lock behind


def test_a_lock_file_removed_under_a_waiting_opener_is_not_held_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file a writer opened goes (its holder released) before the writer locks it: it locks the new one."""
    real_flock, removed = run_files.fcntl.flock, []

    def flock_after_a_release(fd: int, operation: int) -> None:
        if not removed:  # the previous holder releases between this writer's open and its lock
            (tmp_path / LOCK).unlink()
            removed.append(fd)
        real_flock(fd, operation)

    monkeypatch.setattr(run_files.fcntl, "flock", flock_after_a_release)
    with run_lock(tmp_path):
        monkeypatch.setattr(run_files.fcntl, "flock", real_flock)
        assert removed and (tmp_path / LOCK).exists()  # it tried again, on the folder's own file
        with pytest.raises(ConfigError) as caught, run_lock(tmp_path):
            pass
        assert caught.value.reason == "RUN_LOCKED"  # and that file is the one held


def test_the_report_drops_and_flags_duplicate_jobs(tmp_path: Path) -> None:
    config = parse_experiment(SMALL)
    run_dir = create_run(config, tmp_path)
    run_experiment(config, run_dir, workers=1)
    lines = (run_dir / RECORDS).read_text(encoding="utf-8").splitlines()
    with (run_dir / RECORDS).open("a", encoding="utf-8") as handle:  # a second writer's copies of three jobs
        handle.write("\n".join(lines[:3]) + "\n")
    written = write_report(run_dir)
    text = written.markdown.read_text(encoding="utf-8")
    assert f"Episodes: {len(lines)} of {len(lines)}" in text
    assert "3 duplicate records of jobs already recorded were dropped" in text
    assert written.tables[0].rows[0][3] == str(len(lines) // 2)  # each row counts each job once


def test_the_report_header_comes_from_the_records(tmp_path: Path) -> None:
    config = parse_experiment(SMALL)
    run_dir = create_run(config, tmp_path)
    run_experiment(config, run_dir, workers=1)
    clean = write_report(run_dir).markdown.read_text(encoding="utf-8")
    assert "Warning" not in clean and "Recorded by gencoord" in clean
    manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    manifest["config"]["description"] = "edited afterwards"
    manifest["gencoord"] = "9.9.9"
    (run_dir / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    edited = write_report(run_dir).markdown.read_text(encoding="utf-8")
    assert "not the one these records were made with" in edited
    assert "9.9.9" not in edited  # the version shown is the one in the records


def _processes_running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode("utf-8", "replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


FORKED_CHILD_TERMINATED = """
import os, signal, time
from gencoord.cli.application import stoppable

with stoppable():
    child = os.fork()
    if child == 0:  # a worker before its pool's initializer ran: it holds the parent's handler
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
        os._exit(0)
    _, status = os.waitpid(child, 0)
print(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM)
"""


def test_a_forked_child_ends_on_sigterm_instead_of_raising_the_parents_interruption() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", FORKED_CHILD_TERMINATED], capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.stdout.strip() == "True" and ran.stderr == "", ran.stdout + ran.stderr


WORKER_ENDED_WHILE_HANDING_BACK = """
import os, signal, time
from multiprocessing.connection import Connection
from gencoord.eval.dispatch import run_locally

whole = Connection._send

def slow(self, buf, write=os.write):  # a large message crosses the pipe slowly, as on a loaded machine
    if len(buf) < 1_000_000:
        return whole(self, buf, write)
    for start in range(0, len(buf), 65_536):
        whole(self, buf[start : start + 65_536], write)
        time.sleep(0.01)

Connection._send = slow

def interrupt(signum, frame):
    time.sleep(0.3)  # the worker is sending by now
    raise KeyboardInterrupt

signal.signal(signal.SIGUSR1, interrupt)

def large(chunk):
    if not chunk[0]:
        return b"", 0
    os.kill(os.getppid(), signal.SIGUSR1)  # the parent ends this worker as it hands its lines back
    return b"x" * 10_000_000, 0

try:
    run_locally(large, [[False], [True]], 2, lambda data, jobs, bad: None)
except KeyboardInterrupt:
    print("stopped")
"""


def test_a_run_interrupted_while_a_worker_hands_back_a_large_chunk_still_exits() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", WORKER_ENDED_WHILE_HANDING_BACK], capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.returncode == 0 and ran.stdout.strip() == "stopped" and ran.stderr == "", ran.stderr


IDLE_WORKER_TERMINATED = """
import os, signal, time
from gencoord.cli.application import Terminated, stoppable
from gencoord.eval.dispatch import run_locally

def nap(chunk):
    time.sleep(chunk[0])
    return b"", 0

def stop_on_first(data, jobs, bad):
    os.kill(os.getpid(), signal.SIGTERM)  # as a user would, once one worker has gone idle

try:
    with stoppable():
        run_locally(nap, [[0.0], [30.0]], 2, stop_on_first)
except Terminated:
    print("stopped")
"""


def test_workers_ended_by_sigterm_print_nothing() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", IDLE_WORKER_TERMINATED], capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.returncode == 0 and ran.stdout.strip() == "stopped", ran.stderr
    assert ran.stderr == ""  # no worker traceback, from the idle worker or the busy one


OTHER_CHILD_KEPT = """
import multiprocessing, time
from gencoord.eval.dispatch import run_locally

def fail(chunk):
    time.sleep(0.5)  # both workers have started
    raise RuntimeError("a chunk failed")

bystander = multiprocessing.Process(target=time.sleep, args=(60,))
bystander.start()
try:
    run_locally(fail, [[0], [1]], 2, lambda data, jobs, bad: None)
except RuntimeError:
    print(bystander.is_alive())
bystander.terminate()
"""


def test_an_interrupted_run_ends_only_its_own_workers() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", OTHER_CHILD_KEPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.returncode == 0 and ran.stdout.strip() == "True", ran.stdout + ran.stderr


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_run_stops_its_workers_and_says_how_to_resume(tmp_path: Path, stop: signal.Signals) -> None:
    config_file = tmp_path / f"interrupted-{stop.name}.toml"
    config_file.write_text(BIG, encoding="utf-8")
    command = [sys.executable, "-m", "gencoord.cli", "run", str(config_file), "--workers", "2", "--no-report"]
    process = subprocess.Popen(
        [*command, "--out", str(tmp_path / "runs")], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list((tmp_path / "runs").glob("big-*/episodes.jsonl"))
        if found and found[0].stat().st_size > 50_000:
            break
        time.sleep(0.01)
    assert process.poll() is None, "the run ended before it could be interrupted: BIG is too small for this machine"
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=60)
    message = stderr.decode("utf-8")
    assert process.returncode == 130, message
    assert "the workers are stopped" in message and "gencoord run --resume" in message and "Traceback" not in message
    time.sleep(0.5)
    assert _processes_running(str(config_file)) == []  # no orphaned worker
    run_dir = next((tmp_path / "runs").glob("big-*"))
    keys = [record["job"] for record in read_records(run_dir)]
    assert keys and len(keys) == len(set(keys))
    if stop is signal.SIGINT:
        return  # resuming is the same after either signal: the SIGTERM case runs it to the end
    resumed = subprocess.run(
        [sys.executable, "-m", "gencoord.cli", "run", "--resume", str(run_dir), "--no-report"],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    final = [record["job"] for record in read_records(run_dir)]
    assert len(final) == len(set(final)) > len(keys)
