"""The gate ablation on real Minecraft against the same episodes on the simulator.

Runs ``gencoord run experiments/gate_ablation.toml --clusters N`` on both worlds (or reads
two finished runs with ``--runs MINECRAFT_DIR SIMULATOR_DIR``) and compares, episode by
episode: whether the outcome agrees, the actions on which the Minecraft run's own simulator
twin disagreed (each with its reason, as the record keeps them), and the real against the
simulated duration. Results: benchmarks/results/gate_minecraft.json. Not a test: nothing
here asserts a figure. Target (issue 15): the simulator agrees on each episode's outcome,
or the record says why not.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from gencoord import __version__
from gencoord.eval.runner import read_records

OUT = Path(__file__).parent / "results" / "gate_minecraft.json"


def _run(world: str, clusters: int, workers: int, out: Path) -> Path:
    command = [sys.executable, "-m", "gencoord.cli", "run", "gate_ablation", "--clusters", str(clusters)]
    command += ["--world", world, "--workers", str(workers), "--no-report", "--out", str(out)]
    subprocess.run(command, check=True)
    return next(out.glob("gate_ablation-*"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2, help="Minecraft workers (each runs its own server)")
    parser.add_argument("--runs", nargs=2, type=Path, metavar=("MINECRAFT_DIR", "SIMULATOR_DIR"))
    args = parser.parse_args()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        if args.runs:
            real_dir, sim_dir = args.runs
        else:
            real_dir = _run("minecraft", args.clusters, args.workers, Path(scratch) / "minecraft")
            sim_dir = _run("sim", args.clusters, 1, Path(scratch) / "sim")
        real = {str(r["job"]): r for r in read_records(real_dir)}
        simulated = {str(r["job"]): r for r in read_records(sim_dir)}
    episodes = [
        {
            "job": job,
            "minecraft_success": record["success"],
            "simulator_success": simulated[job]["success"],
            "outcome_agrees": record["success"] == simulated[job]["success"],
            "real_s": record["duration_s"],
            "simulated_s": simulated[job]["duration_s"],
            "twin_disagrees": record["simulator_disagrees"],
        }
        for job, record in real.items()
        if job in simulated
    ]
    real_s = sum(float(str(e["real_s"])) for e in episodes)
    simulated_s = sum(float(str(e["simulated_s"])) for e in episodes)
    summary = {
        "episodes": len(episodes),
        "outcome_agrees": sum(bool(e["outcome_agrees"]) for e in episodes),
        "minecraft_successes": sum(bool(e["minecraft_success"]) for e in episodes),
        "simulator_successes": sum(bool(e["simulator_success"]) for e in episodes),
        "episodes_with_action_disagreements": sum(bool(e["twin_disagrees"]) for e in episodes),
        "real_over_simulated_duration": real_s / simulated_s if simulated_s else None,
        "wall_s": None if args.runs else time.perf_counter() - began,  # both runs, when this script ran them
    }
    Console().print(summary)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    OUT.write_text(json.dumps({"meta": meta, "summary": summary, "episodes": episodes}, indent=2) + "\n")


if __name__ == "__main__":
    main()
