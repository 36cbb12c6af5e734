"""The process pool against Ray, measured side by side in one run on the simulator.

For the request-intervention experiment (160 clusters, 6 seeds: 5,760 episodes; rule backends, simulator):
  * episodes/s of the pool and of Ray (a local instance) at 1 and 2 workers, end to end
    and steady (from the first chunk's arrival to the last's), Ray's instance start-up
    timed apart from the run and its workers' start-up estimated from the difference;
  * Ray's overhead per episode once its workers are up: worker time per episode, Ray − pool;
  * a simulated cluster (ray.cluster_utils.Cluster, one CPU per node) as nodes are added.
and with real Minecraft (the embedded server, one per worker) on the first eight shipped
generated team tasks (2 and 3 agents):
  * tasks/s of the pool and of Ray actors at 1 and 2 workers, each setting starting its
    own servers and bots;
  * the peak memory of one Minecraft worker's process tree (Python, the bridge and its
    bots, the server), sampled during the one-worker pool run, which runs in this process;
  * the cost model a user sizes a cluster with: episodes per hour per worker, MiB per worker.
Results are printed and written to benchmarks/results/scale.json. Not a test: no
assertion on time.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
import threading
import time
from pathlib import Path

import ray
from ray import cluster_utils
from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.eval.config import ExecutionSpec, find_experiment, load_experiment
from gencoord.eval.experiment import plan_run
from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig
from gencoord.eval.kinds.team.config import TeamExperimentConfig
from gencoord.eval.runner import create_run, read_records, run_experiment
from gencoord.worlds.choice import WorldChoice, close_executors

CLUSTERS = 160
SEEDS = 6  # 160 clusters × 3 conditions × 6 seeds × 2 roles: 5,760 simulator episodes a setting
MINECRAFT_TASKS = 8
OUT = Path(__file__).parent / "results" / "scale.json"


def _config(execution: ExecutionSpec | None = None) -> EpisodeExperimentConfig:
    config = load_experiment(find_experiment("request_intervention"))
    assert isinstance(config, EpisodeExperimentConfig)
    config = config.model_copy(update={"clusters": CLUSTERS, "seeds": list(range(SEEDS))})
    return config.model_copy(update={"execution": execution}) if execution else config


def _timed(config: EpisodeExperimentConfig, workers: int) -> tuple[int, float, float]:
    """(episodes, seconds end to end, steady episodes/s: from the first chunk's arrival to the last's)."""
    arrivals: list[tuple[float, int]] = []
    with tempfile.TemporaryDirectory() as folder:
        run_dir = create_run(config, Path(folder))
        started = time.perf_counter()
        summary = run_experiment(
            config, run_dir, workers=workers, progress=lambda done, _: arrivals.append((time.perf_counter(), done))
        )
        seconds = time.perf_counter() - started
    (first_t, first_n), (last_t, last_n) = arrivals[1], arrivals[-1]  # arrivals[0] is the call at the start
    steady = (last_n - first_n) / (last_t - first_t) if last_t > first_t else float("nan")
    return summary.ran, seconds, steady


def _tree_rss_mib(root: int) -> tuple[float, float]:
    """Resident memory of ``root``, and of all its descendants together, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            status = (entry / "status").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
        kib = next((line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")), "0")
        rss[int(entry.name)] = int(kib)
    below, stack = 0, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        below += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return rss.get(root, 0) / 1024, below / 1024


class _PeakMemory:
    """Samples this process tree's memory twice a second while a block runs: peaks of itself and of its children."""

    def __init__(self) -> None:
        self.own = self.children = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.5):
            own, children = _tree_rss_mib(os.getpid())
            self.own, self.children = max(self.own, own), max(self.children, children)

    def __enter__(self) -> _PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _minecraft(workers: int, executor: str) -> tuple[int, int, float, float]:
    """(tasks, succeeded, seconds, MiB: peak of this process plus peak of its children) for the Minecraft workload."""
    path = find_experiment("team_tasks").parent / "team" / "generated.json"
    execution = ExecutionSpec(scheduler=executor)  # type: ignore[arg-type]
    config = TeamExperimentConfig(
        name="scale-minecraft",
        tasks=[str(path)],
        clusters=MINECRAFT_TASKS,
        world=WorldChoice(kind="minecraft"),
        execution=execution,
    )
    plan = plan_run(config)
    with tempfile.TemporaryDirectory() as folder, _PeakMemory() as memory:
        started = time.perf_counter()
        run_experiment(plan, Path(folder), workers)
        seconds = time.perf_counter() - started
        rows = read_records(Path(folder))
        close_executors()  # the one-worker pool ran here: end its server before the next setting
    succeeded = sum(1 for row in rows if row["success"])
    return len(plan.jobs), succeeded, seconds, memory.own + memory.children


def _minecraft_rows() -> tuple[list[dict[str, object]], float]:
    rows: list[dict[str, object]] = []
    worker_mib = 0.0
    for workers in (1, 2):
        tasks, pool_ok, pool_s, peak = _minecraft(workers, "pool")
        if workers == 1:  # the one-worker pool runs in this process: it is a worker, with its server and bots
            worker_mib = peak
        ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
        _, ray_ok, ray_s, _ = _minecraft(workers, "ray")
        ray.shutdown()
        rows.append(
            {
                "setting": f"Minecraft, {workers} worker(s)",
                "tasks": tasks,
                "pool_succeeded": pool_ok,
                "ray_succeeded": ray_ok,
                "pool_tasks_per_s": tasks / pool_s,
                "ray_tasks_per_s": tasks / ray_s,
                "ray_vs_pool": pool_s / ray_s,
                "episodes_per_hour_per_worker": 3600 * tasks / ray_s / workers,
            }
        )
    return rows, worker_mib


def main() -> None:
    rows: list[dict[str, object]] = []
    for workers in (1, 2):
        episodes, pool_s, pool_steady = _timed(_config(), workers)
        started = time.perf_counter()
        ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
        startup_s = time.perf_counter() - started
        # joins the instance started above
        _, ray_s, ray_steady = _timed(_config(ExecutionSpec(scheduler="ray")), workers)
        ray.shutdown()
        rows.append(
            {
                "setting": f"simulator, {workers} worker(s)",
                "episodes": episodes,
                "pool_eps": episodes / pool_s,
                "ray_eps": episodes / ray_s,
                "pool_steady_eps": pool_steady,
                "ray_steady_eps": ray_steady,
                # worker time Ray adds to each episode once its workers are up (batched: 48 per task)
                "ray_overhead_ms_per_episode": 1000 * workers * (1 / ray_steady - 1 / pool_steady),
                "ray_instance_startup_s": startup_s,
                "ray_workers_startup_s": (ray_s - pool_s) - episodes * (1 / ray_steady - 1 / pool_steady) / workers,
            }
        )
    scaling: list[dict[str, object]] = []
    cores = os.cpu_count() or 1
    for nodes in sorted({1, 2, min(4, cores)}):
        cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        execution = ExecutionSpec(scheduler="ray", ray_address=str(cluster.address))
        episodes, seconds, steady = _timed(_config(execution), nodes)
        cluster.shutdown()
        scaling.append({"nodes": nodes, "episodes": episodes, "eps": episodes / seconds, "steady_eps": steady})
    console = Console(width=150)
    table = Table(
        "setting",
        "episodes",
        "pool eps/s",
        "Ray eps/s",
        "pool steady eps/s",
        "Ray steady eps/s",
        "Ray overhead ms/episode",
        "Ray instance start s",
        "Ray workers start s",
    )
    for row in rows:
        table.add_row(
            str(row["setting"]),
            str(row["episodes"]),
            f"{row['pool_eps']:.0f}",
            f"{row['ray_eps']:.0f}",
            f"{row['pool_steady_eps']:.0f}",
            f"{row['ray_steady_eps']:.0f}",
            f"{row['ray_overhead_ms_per_episode']:.2f}",
            f"{row['ray_instance_startup_s']:.1f}",
            f"{row['ray_workers_startup_s']:.1f}",
        )
    console.print(table)
    base = scaling[0]["steady_eps"]
    assert isinstance(base, float)
    console.print(
        "simulated cluster (one CPU per node): "
        + ", ".join(
            f"{s['nodes']} node(s) {s['eps']:.0f} eps/s end to end, {s['steady_eps']:.0f} steady "
            f"(×{float(s['steady_eps']) / base:.2f})"  # type: ignore[arg-type]
            for s in scaling
        )
    )
    minecraft, worker_mib = _minecraft_rows()
    table = Table("setting", "tasks", "pool ok", "Ray ok", "pool tasks/s", "Ray tasks/s", "Ray/pool", "eps/h/worker")
    for row in minecraft:
        table.add_row(
            str(row["setting"]),
            str(row["tasks"]),
            str(row["pool_succeeded"]),
            str(row["ray_succeeded"]),
            f"{row['pool_tasks_per_s']:.3f}",
            f"{row['ray_tasks_per_s']:.3f}",
            f"{row['ray_vs_pool']:.2f}",
            f"{row['episodes_per_hour_per_worker']:.0f}",
        )
    console.print(table)
    console.print(f"one Minecraft worker (Python + bridge + bots + server), peak: {worker_mib:.0f} MiB")
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "version": __version__,
                "ray": ray.__version__,
                "python": platform.python_version(),
                "cpus": cores,
                "clusters": CLUSTERS,
                "seeds": SEEDS,
                "one_machine": rows,
                "simulated_cluster": scaling,
                "minecraft": minecraft,
                "minecraft_worker_peak_mib": worker_mib,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
