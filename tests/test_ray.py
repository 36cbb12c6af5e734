"""Experiments on Ray: a real Ray instance started by the tests (no mocks), the driver the only writer.

Pool and Ray runs of one config give the same job keys and records; a worker killed in
the middle of its chunk loses nothing; a driver killed mid-run resumes to a complete run;
workers load a checkpoint once each; API-backed runs keep to the endpoint's limit; team
tasks run on Ray from the CLI, and Minecraft workers are placed by the memory they declare.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.eval.config import ExecutionSpec, Experiment, find_experiment, load_experiment
from gencoord.eval.experiment import RunPlan, experiment_kind_of
from gencoord.eval.kinds.team.config import TeamExperimentConfig
from gencoord.eval.kinds.team.kind import TEAM
from gencoord.eval.ray_runner import FAILED, RayReport
from gencoord.eval.runner import RECORDS, create_run, run_experiment
from gencoord.run.record import DEADLINES_S
from gencoord.worlds.choice import WorldChoice
from tests.chat_stub import ComposerApi, serving

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


_WALL_CLOCK = {f"V{deadline}" for deadline in DEADLINES_S}


def _comparable(record: dict[str, object]) -> tuple[object, ...]:
    """What a run must reproduce wherever it runs: the world's verdicts and the messages.

    Deadline success V(30)/V(60) adds the measured wall time to commitment, which a loaded
    machine stretches (a Ray actor restarted after a kill, two nodes on two cores), so it is
    a measurement of the run, not of the episode, and is left out.
    """
    protocol, outcome = record["protocol"], record["outcome"]
    assert isinstance(protocol, dict) and isinstance(outcome, dict)
    generations = [g["text"] for g in protocol["generations"]]
    verdicts = {key: value for key, value in outcome.items() if key not in _WALL_CLOCK}
    return verdicts, protocol["wire_bytes"], generations, record["config_sha256"]


def _differing(pooled: dict[str, dict[str, object]], rayed: dict[str, dict[str, object]]) -> list[object]:
    """Each job whose records differ, with both, so a failure shows what differed."""
    return [
        (key, _comparable(pooled[key]), _comparable(rayed[key]))
        for key in pooled
        if _comparable(pooled[key]) != _comparable(rayed[key])
    ]


def test_pool_and_a_two_node_ray_cluster_record_the_same_jobs_and_outcomes(tmp_path: Path, cluster: str) -> None:
    pool_config = _config("request_intervention", 6)
    ray_config = _config("request_intervention", 6, ExecutionSpec(scheduler="ray", ray_address=cluster))
    pool_dir, ray_dir = create_run(pool_config, tmp_path / "pool"), create_run(ray_config, tmp_path / "ray")
    run_experiment(pool_config, pool_dir, workers=2)
    summary = run_experiment(ray_config, ray_dir, workers=2)
    assert summary.lost == 0 and summary.ray is not None
    assert summary.ray.capacity == 2 and {worker.checkpoint_loads for worker in summary.ray.workers} == {0}
    pooled, rayed = _records(pool_dir), _records(ray_dir)
    assert set(pooled) == set(rayed) and len(pooled) == summary.total
    assert _differing(pooled, rayed) == []


def _parent(pid: int) -> int:
    """The parent pid from /proc/<pid>/stat; the command name in field 2 may hold spaces or brackets."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])


def _descends_from_this_process(pid: int) -> bool:
    while pid > 1:
        pid = _parent(pid)
        if pid == os.getpid():
            return True
    return False


def _chunk_workers() -> list[int]:
    """This test's Ray actor processes executing a chunk right now (Ray titles them after the running method).

    Only descendants of this process count: the cluster fixture's nodes are its children. An
    actor left behind by another Ray instance (a driver killed by another test, whose workers
    live on briefly) has the same title, and killing it would leave this run untouched.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"EpisodeWorker.run" in title and _descends_from_this_process(int(entry.name)):
                found.append(int(entry.name))
    return found


def test_a_worker_killed_mid_chunk_loses_nothing_and_writes_nothing_twice(tmp_path: Path, cluster: str) -> None:
    execution = ExecutionSpec(scheduler="ray", ray_address=cluster, retries=3)
    config = _config("learned_backends", 2, execution)  # tiny-model episodes (12): chunks last seconds
    run_dir = create_run(config, tmp_path / "ray")
    killed, summary = _kill_the_first_chunk(config, run_dir)
    assert killed, "no chunk was running to kill"
    records = _records(run_dir)
    assert len(records) == summary.total and summary.lost == 0  # type: ignore[attr-defined]
    report = summary.ray  # type: ignore[attr-defined]
    assert isinstance(report, RayReport) and report.workers
    # two checkpoints in the config: each worker (a restarted one included) loads each at most once
    assert all(0 < worker.checkpoint_loads <= 2 for worker in report.workers)
    assert sum(worker.checkpoint_loads for worker in report.workers) < summary.total  # type: ignore[attr-defined]
    pool_config = _config("learned_backends", 2)
    pool_dir = create_run(pool_config, tmp_path / "pool")
    run_experiment(pool_config, pool_dir, workers=2)
    pooled = _records(pool_dir)
    assert _differing(pooled, records) == []


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
    config = _config("learned_backends", 4, ExecutionSpec(scheduler="ray", ray_address=cluster, retries=0))
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
    command += ["--scheduler", "ray", "--workers", "2", "--out", str(tmp_path), "--no-report"]
    # its own session, so the local Ray instance it starts can be killed with it and no orphaned
    # actor of it outlives the test
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 180
    records: Path | None = None
    while time.monotonic() < deadline and driver.poll() is None:
        found = list(tmp_path.glob(f"*/{RECORDS}"))
        if found and found[0].stat().st_size:
            records = found[0]
            break
        time.sleep(0.05)
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    assert records is not None, "the driver recorded nothing before it was killed"
    run_dir = records.parent
    before = len(records.read_text().splitlines())
    resumed = subprocess.run(
        [sys.executable, "-m", "gencoord.cli", "run", "--resume", str(run_dir), "--scheduler", "ray", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    config = _config("request_intervention", 40)
    keyed = _records(run_dir)
    from gencoord.eval.experiment import plan_run  # noqa: PLC0415

    assert set(keyed) == {job.key for job in plan_run(config).jobs} and before < len(keyed)


class _CountingApi(ComposerApi):
    """A slow endpoint that remembers the most requests it ever had in flight at once."""

    lock = threading.Lock()
    in_flight = 0
    most = 0

    def reply(self, body: dict[str, object]) -> tuple[int, dict[str, object]]:
        with _CountingApi.lock:
            _CountingApi.in_flight += 1
            _CountingApi.most = max(_CountingApi.most, _CountingApi.in_flight)
        try:
            time.sleep(0.03)
            return super().reply(body)  # type: ignore[arg-type]
        finally:
            with _CountingApi.lock:
                _CountingApi.in_flight -= 1


@pytest.mark.parametrize("executor", ["pool", "ray"])
def test_api_backed_runs_keep_to_the_endpoints_concurrency_limit(tmp_path: Path, cluster: str, executor: str) -> None:
    ComposerApi.failures_left, _CountingApi.most = 0, 0
    with serving(_CountingApi) as url:
        execution = ExecutionSpec(scheduler=executor, ray_address=cluster, api_concurrency=1)  # type: ignore[arg-type]
        learned = _config("learned_backends", 4, execution)  # one API backend: 8 jobs, more than one chunk
        config = experiment_kind_of(learned).with_backends(learned, [f"api:{url}#stub"])
        run_dir = create_run(config, tmp_path)
        summary = run_experiment(config, run_dir, workers=2)
    assert len(_records(run_dir)) == summary.total and summary.total > 4
    assert _CountingApi.most == 1  # two workers asked for, one request at a time allowed


def _team_rows(out: Path) -> dict[str, tuple[object, ...]]:
    rows = [json.loads(line) for line in (out / RECORDS).read_text().splitlines()]
    keyed = {row["task"]: (row["success"], row["stages"], row["messages"], row["wire_bytes"]) for row in rows}
    assert len(keyed) == len(rows), "a task was recorded twice"
    return keyed


def test_tasks_run_on_ray_records_what_a_local_run_records(tmp_path: Path, cluster: str) -> None:
    tasks = str(find_experiment("team_tasks").parent / "team" / "generated.json")
    local = CliRunner().invoke(app, ["tasks", "run", tasks, "--out", str(tmp_path / "local"), "--jsonl"])
    command = ["tasks", "run", tasks, "--out", str(tmp_path / "ray"), "--scheduler", "ray", "--ray-address", cluster]
    rayed = CliRunner().invoke(app, command)
    assert local.exit_code == 0 and rayed.exit_code == 0, rayed.output
    # both nodes have room; how many workers took a chunk depends on which came up first
    assert re.search(r"on Ray: [12] workers on [12] nodes \(room for 2\)", " ".join(rayed.output.split()))
    assert _team_rows(tmp_path / "local") == _team_rows(tmp_path / "ray")
    again = CliRunner().invoke(app, [*command, "--jsonl"])  # resumed: nothing runs twice
    assert again.exit_code == 0 and len(again.stdout.splitlines()) == len(_team_rows(tmp_path / "ray"))


@pytest.mark.minecraft
def test_minecraft_workers_are_placed_by_the_memory_they_declare(tmp_path: Path) -> None:
    """Two nodes with CPUs for two workers each but memory for one Minecraft world each: two worlds run."""
    from tests.test_minecraft_team import TASKS  # noqa: PLC0415  (the Minecraft team tasks and their verdicts)

    made = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "memory": 1536 * 2**20})
    made.add_node(num_cpus=2, memory=1536 * 2**20)
    made.wait_for_nodes()
    try:
        execution = ExecutionSpec(scheduler="ray", ray_address=str(made.address), worker_memory_mib=1024)
        config = TeamExperimentConfig(
            name="minecraft-team", tasks=["minecraft_team"], world=WorldChoice(kind="minecraft"), execution=execution
        )
        prepared = tuple(("minecraft_team", task) for task in TASKS)  # the tasks of no file: a plan made by hand
        plan = RunPlan(config, TEAM, prepared, tuple(TEAM.expand(config, prepared)))
        summary = run_experiment(plan, tmp_path, workers=4)
    finally:
        made.shutdown()
    rows = list(_records(tmp_path).values())
    report = summary.ray
    assert summary.lost == 0 and report is not None
    assert report.capacity == 2 and len(report.workers) == 2 and len({w.node for w in report.workers}) == 2
    assert sorted(row["task"] for row in rows) == sorted(task.id for task in TASKS)
    assert all(row["success"] and row["world"] == "minecraft" for row in rows), rows


@pytest.mark.parametrize("address", ["127.0.0.1:1", "not-an-address"])
def test_an_address_where_no_ray_answers_is_a_clear_error_and_leaves_no_run(tmp_path: Path, address: str) -> None:
    command = ["run", "request_intervention", "--clusters", "2", "--scheduler", "ray", "--ray-address", address]
    result = CliRunner().invoke(app, [*command, "--out", str(tmp_path)])
    assert result.exit_code == 2 and "cannot reach Ray" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not list(tmp_path.iterdir())  # the empty run folder was removed
