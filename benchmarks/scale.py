"""The process pool against Ray, measured side by side in one run on the simulator.

For the request-intervention experiment cut to N clusters (rule backends, simulator):
  * episodes/s of the pool and of Ray (a local instance) at 1 and 2 workers, Ray's
    start-up timed apart from the run;
  * Ray's overhead per episode: (Ray run − pool run) / episodes, at the same workers;
  * a simulated cluster (ray.cluster_utils.Cluster, one CPU per node) as nodes are added.
Results are printed and written to benchmarks/results/scale.json. Not a test: no
assertion on time. Real-Minecraft workers are not measured here: Ray runs simulator
worlds only so far.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
import time
from pathlib import Path

import ray
from ray import cluster_utils
from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.eval.config import ExecutionSpec, ExperimentConfig, find_experiment, load_experiment
from gencoord.eval.runner import create_run, run_experiment

CLUSTERS = 80
OUT = Path(__file__).parent / "results" / "scale.json"


def _config(execution: ExecutionSpec | None = None) -> ExperimentConfig:
    config = load_experiment(find_experiment("request_intervention"))
    assert isinstance(config, ExperimentConfig)
    config = config.model_copy(update={"clusters": CLUSTERS})
    return config.model_copy(update={"execution": execution}) if execution else config


def _timed(config: ExperimentConfig, workers: int) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as folder:
        run_dir = create_run(config, Path(folder))
        started = time.perf_counter()
        summary = run_experiment(config, run_dir, workers=workers)
        return summary.ran, time.perf_counter() - started


def main() -> None:
    rows: list[dict[str, object]] = []
    for workers in (1, 2):
        episodes, pool_s = _timed(_config(), workers)
        started = time.perf_counter()
        ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
        startup_s = time.perf_counter() - started
        _, ray_s = _timed(_config(ExecutionSpec(executor="ray")), workers)  # joins the instance started above
        ray.shutdown()
        rows.append(
            {
                "setting": f"{workers} worker(s), one machine",
                "episodes": episodes,
                "pool_eps": episodes / pool_s,
                "ray_eps": episodes / ray_s,
                "ray_overhead_ms_per_episode": 1000 * (ray_s - pool_s) / episodes,
                "ray_startup_s": startup_s,
            }
        )
    scaling: list[dict[str, object]] = []
    cores = os.cpu_count() or 1
    for nodes in sorted({1, 2, min(4, cores)}):
        cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        episodes, seconds = _timed(_config(ExecutionSpec(executor="ray", ray_address=str(cluster.address))), nodes)
        cluster.shutdown()
        scaling.append({"nodes": nodes, "episodes": episodes, "eps": episodes / seconds})
    console = Console()
    table = Table("setting", "pool eps/s", "Ray eps/s", "Ray overhead ms/episode", "Ray start-up s")
    for row in rows:
        table.add_row(
            str(row["setting"]),
            f"{row['pool_eps']:.0f}",
            f"{row['ray_eps']:.0f}",
            f"{row['ray_overhead_ms_per_episode']:.2f}",
            f"{row['ray_startup_s']:.1f}",
        )
    console.print(table)
    console.print("simulated cluster: " + ", ".join(f"{s['nodes']} node(s) {s['eps']:.0f} eps/s" for s in scaling))
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "version": __version__,
                "ray": ray.__version__,
                "python": platform.python_version(),
                "cpus": cores,
                "clusters": CLUSTERS,
                "one_machine": rows,
                "simulated_cluster": scaling,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
