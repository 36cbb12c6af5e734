"""Experiments on Ray: a real Ray instance started by the tests (no mocks), the driver the only writer.

Pool and Ray runs of one config give the same job keys and records; a worker killed in
the middle of its chunk loses nothing; a driver killed mid-run resumes to a complete run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gencoord.eval.config import ExecutionSpec, Experiment, find_experiment, load_experiment
from gencoord.eval.ray_runner import FAILED
from gencoord.eval.runner import RECORDS, create_run, run_experiment

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A head and a second node, one CPU each: two Ray nodes on this machine."""
    made = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    made.add_node(num_cpus=1)
    made.wait_for_nodes()
    yield str(made.address)
    made.shutdown()


def _config(name: str, clusters: int, execution: ExecutionSpec | None = None) -> Experiment:
    config = load_experiment(find_experiment(name)).model_copy(update={"clusters": clusters})
    return config.model_copy(update={"execution": execution}) if execution else config


def _records(run_dir: Path) -> dict[str, dict[str, object]]:
    lines = (run_dir / RECORDS).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    keyed = {str(record["job"]): record for record in records}
    assert len(keyed) == len(records), "a job was recorded twice"
    return keyed


def _comparable(record: dict[str, object]) -> tuple[object, ...]:
    protocol = record["protocol"]
    assert isinstance(protocol, dict)
    generations = [g["text"] for g in protocol["generations"]]
    return record["outcome"], protocol["wire_bytes"], generations, record["config_sha256"]


def test_pool_and_a_two_node_ray_cluster_record_the_same_jobs_and_outcomes(tmp_path: Path, cluster: str) -> None:
    pool_config = _config("request_intervention", 6)
    ray_config = _config("request_intervention", 6, ExecutionSpec(executor="ray", ray_address=cluster))
    pool_dir, ray_dir = create_run(pool_config, tmp_path / "pool"), create_run(ray_config, tmp_path / "ray")
    run_experiment(pool_config, pool_dir, workers=2)
    summary = run_experiment(ray_config, ray_dir, workers=2)
    assert summary.lost == 0
    pooled, rayed = _records(pool_dir), _records(ray_dir)
    assert set(pooled) == set(rayed) and len(pooled) == summary.total
    assert all(_comparable(pooled[key]) == _comparable(rayed[key]) for key in pooled)


def _chunk_workers() -> list[int]:
    """Ray actor processes executing a chunk right now (Ray titles them after the running method)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"EpisodeWorker.run" in title and int(entry.name) != os.getpid():
                found.append(int(entry.name))
    return found


def test_a_worker_killed_mid_chunk_loses_nothing_and_writes_nothing_twice(tmp_path: Path, cluster: str) -> None:
    execution = ExecutionSpec(executor="ray", ray_address=cluster, retries=3)
    config = _config("learned_backends", 4, execution)  # tiny-model episodes: chunks last seconds
    run_dir = create_run(config, tmp_path / "ray")
    killed, summary = _kill_the_first_chunk(config, run_dir)
    assert killed, "no chunk was running to kill"
    records = _records(run_dir)
    assert len(records) == summary.total and summary.lost == 0  # type: ignore[attr-defined]
    pool_config = _config("learned_backends", 4)
    pool_dir = create_run(pool_config, tmp_path / "pool")
    run_experiment(pool_config, pool_dir, workers=2)
    pooled = _records(pool_dir)
    assert all(_comparable(pooled[key]) == _comparable(records[key]) for key in pooled)


def _kill_the_first_chunk(config: Experiment, run_dir: Path) -> tuple[list[int], object]:
    killed: list[int] = []
    outcome: dict[str, object] = {}
    thread = threading.Thread(target=lambda: outcome.update(summary=run_experiment(config, run_dir, workers=2)))
    thread.start()
    deadline = time.monotonic() + 120
    while not killed and thread.is_alive() and time.monotonic() < deadline:
        for pid in _chunk_workers():
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            break
        time.sleep(0.02)
    thread.join(timeout=600)
    return killed, outcome["summary"]


def test_a_job_whose_worker_dies_on_every_try_is_recorded_as_failed_and_resume_runs_it(
    tmp_path: Path, cluster: str
) -> None:
    config = _config("learned_backends", 4, ExecutionSpec(executor="ray", ray_address=cluster, retries=0))
    run_dir = create_run(config, tmp_path / "ray")
    killed, summary = _kill_the_first_chunk(config, run_dir)
    assert killed
    failed = [json.loads(line) for line in (run_dir / FAILED).read_text().splitlines()]
    assert failed and all("the worker died" in row["reason"] and row["tries"] == 1 for row in failed)
    assert summary.lost == len(failed) and summary.ran + summary.lost == summary.total  # type: ignore[attr-defined]
    assert not {row["job"] for row in failed} & set(_records(run_dir) if (run_dir / RECORDS).exists() else {})
    run_experiment(_config("learned_backends", 4), run_dir, workers=1)  # resume, on the pool
    assert len(_records(run_dir)) == summary.total  # type: ignore[attr-defined]


def test_a_killed_driver_resumes_to_a_complete_run(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "gencoord.cli", "run", "request_intervention", "--clusters", "40"]
    command += ["--executor", "ray", "--workers", "2", "--out", str(tmp_path), "--no-report"]
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    records: Path | None = None
    while time.monotonic() < deadline and driver.poll() is None:
        found = list(tmp_path.glob(f"*/{RECORDS}"))
        if found and found[0].stat().st_size:
            records = found[0]
            break
        time.sleep(0.05)
    driver.kill()
    driver.wait()
    assert records is not None, "the driver recorded nothing before it was killed"
    run_dir = records.parent
    before = len(records.read_text().splitlines())
    resumed = subprocess.run(
        [sys.executable, "-m", "gencoord.cli", "run", "--resume", str(run_dir), "--executor", "ray", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    config = _config("request_intervention", 40)
    keyed = _records(run_dir)
    from gencoord.eval.jobs import expand  # noqa: PLC0415

    assert set(keyed) == {job.key for job in expand(config)} and before < len(keyed)
