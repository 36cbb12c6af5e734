"""The experiment harness end to end, and the statistics it runs, timed in one run.

  * the four shipped experiments (request intervention, feedback intervention, controlled
    faults, representation) with deterministic backends on the simulator: run (process
    pool, one worker per core) and report, wall time per experiment and in total;
  * a 10,000-resample cluster bootstrap over 160 clusters, and a paired one.
Results are printed and written to benchmarks/results/harness.json. Not a test.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.eval.config import load_experiment
from gencoord.eval.report import write_report
from gencoord.eval.runner import create_run, run_experiment
from gencoord.eval.stats import bootstrap_mean, paired_difference

ROOT = Path(__file__).parents[1]
OUT = Path(__file__).parent / "results" / "harness.json"
SHIPPED = ("request_intervention", "feedback_intervention", "controlled_faults", "representation")


def _experiments(folder: Path) -> dict[str, dict[str, float]]:
    timings = {}
    for name in SHIPPED:
        config = load_experiment(ROOT / "experiments" / f"{name}.toml")
        start = time.perf_counter()
        run_dir = create_run(config, folder)
        summary = run_experiment(config, run_dir)
        ran = time.perf_counter()
        write_report(run_dir)
        done = time.perf_counter()
        timings[name] = {"episodes": summary.ran, "run_s": ran - start, "report_s": done - ran, "total_s": done - start}
    return timings


def _bootstrap() -> dict[str, float]:
    clusters = {f"c{i}": float(i % 2) for i in range(160)}
    other = {f"c{i}": float(i % 3 == 0) for i in range(160)}
    single, paired = [], []
    for repeat in range(5):
        start = time.perf_counter()
        bootstrap_mean(clusters, 10_000, 8901 + repeat)
        single.append(time.perf_counter() - start)
        start = time.perf_counter()
        paired_difference(clusters, other, 10_000, 8911 + repeat)
        paired.append(time.perf_counter() - start)
    return {"bootstrap_160_clusters_s": statistics.median(single), "paired_160_clusters_s": statistics.median(paired)}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        experiments = _experiments(Path(folder))
    stats = _bootstrap()
    table = Table(title=f"Shipped experiments, rule backends, embedded world, {os.cpu_count()} worker processes")
    for column in ("experiment", "episodes", "run s", "report s", "total s"):
        table.add_column(column)
    for name, row in experiments.items():
        table.add_row(
            name, str(row["episodes"]), f"{row['run_s']:.2f}", f"{row['report_s']:.2f}", f"{row['total_s']:.2f}"
        )
    total = sum(row["total_s"] for row in experiments.values())
    episodes = sum(int(row["episodes"]) for row in experiments.values())
    table.add_row("all four", str(episodes), "", "", f"{total:.2f}")
    console = Console(width=120)
    console.print(table)
    console.print(
        f"10,000-resample cluster bootstrap over 160 clusters: {1000 * stats['bootstrap_160_clusters_s']:.1f} ms "
        f"(paired: {1000 * stats['paired_160_clusters_s']:.1f} ms), median of 5"
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "cpus": os.cpu_count()}
    OUT.write_text(json.dumps({"meta": meta, "experiments": experiments, "all_s": total, **stats}, indent=2) + "\n")
    console.print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
