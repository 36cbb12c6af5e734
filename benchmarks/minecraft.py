"""Real Minecraft against the simulator, side by side in one run.

For one episode of every forward template and both Goal×Capability modes (the cases of
tests/test_minecraft_episodes.py), with rule backends: the wall time of the episode's
actions in real Minecraft (Mineflayer bots on the embedded flying-squid server, kept
warm across episodes), the simulator's *simulated* duration of the same plan, and the
verdicts of both. Also the cold start: bridge + server start + both logins, and the
reset (world set-up) time per episode. ``--pool N`` runs the first N clusters of the
request-intervention pool instead. Results: benchmarks/results/minecraft.json. Not a
test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.prior import default_prior
from gencoord.run.episode import run_episode
from gencoord.tasks import build_episode, default_suites, paper_pool
from gencoord.tasks.cluster import Cluster, make_cluster
from gencoord.worlds.mineflayer import MinecraftExecutor
from gencoord.worlds.sim import SimExecutor

OUT = Path(__file__).parent / "results" / "minecraft.json"
CAPABILITY = [("GC_STICK_ORDER", "RAW_PROCESSOR"), ("GC_TABLE_ORDER", "FINISHED_RECEIVER")]


def _clusters(pool: int | None) -> list[Cluster]:
    suites = default_suites()
    if pool:
        return list(paper_pool("request_intervention", suites=suites)[:pool])
    forward = [
        make_cluster(name, sorted(suites.forward.templates[name].goals)[-1], 3, param_choice=1, suites=suites)
        for name in sorted(suites.forward.templates)
    ]
    return forward + [make_cluster(goal, mode, 3, suites=suites) for goal, mode in CAPABILITY]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=int, default=None, help="run the first N request-intervention clusters")
    args = parser.parse_args()
    prior, suites = default_prior(), default_suites()
    minecraft = MinecraftExecutor(game=prior.game)
    rows = []
    try:
        for cluster in _clusters(args.pool):
            spec = build_episode(cluster, 0, 3, prior, suites)
            simulated = run_episode(spec, executor=SimExecutor(prior.game), prior=prior, suites=suites)
            began = time.perf_counter()
            real = run_episode(spec, executor=minecraft, prior=prior, suites=suites)
            total = time.perf_counter() - began
            rows.append(
                {
                    "cluster": cluster.id,
                    "template": cluster.template,
                    "actions": 0 if real.execution is None else len(real.execution.records),
                    "minecraft_actions_s": real.outcome.duration_s,
                    "minecraft_episode_s": total,
                    "reset_s": minecraft.timings.get("reset_s"),
                    "sim_simulated_s": simulated.outcome.duration_s,
                    "verdicts_agree": real.outcome.stages == simulated.outcome.stages,
                    "minecraft_G": real.outcome.success,
                    "failure": real.outcome.reason,
                }
            )
            Console().print(rows[-1])
    finally:
        cold = dict(minecraft.timings)
        minecraft.close()
    timed = [r for r in rows if r["minecraft_actions_s"] and r["sim_simulated_s"]]
    ratio = statistics.mean(r["minecraft_actions_s"] / r["sim_simulated_s"] for r in timed) if timed else None
    summary = {
        "episodes": len(rows),
        "verdicts_agree": sum(bool(r["verdicts_agree"]) for r in rows),
        "minecraft_G": sum(bool(r["minecraft_G"]) for r in rows),
        "mean_minecraft_episode_s": statistics.mean(r["minecraft_episode_s"] for r in rows) if rows else None,
        "mean_minecraft_actions_s": statistics.mean(r["minecraft_actions_s"] for r in timed) if timed else None,
        "mean_sim_simulated_s": statistics.mean(r["sim_simulated_s"] for r in timed) if timed else None,
        "minecraft_over_simulated": ratio,
        "cold_start": {key: cold.get(key) for key in ("bridge_s", "server_s", "login_s")},
        "paper_episode_s": 22.6,
    }
    table = Table(title="Real Minecraft vs simulated time, per episode")
    for column in ("template", "actions", "minecraft s", "sim s", "agree", "G"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            str(r["template"]),
            str(r["actions"]),
            f"{r['minecraft_actions_s'] or 0:.1f}",
            f"{r['sim_simulated_s'] or 0:.1f}",
            "✓" if r["verdicts_agree"] else "✗",
            "✓" if r["minecraft_G"] else "✗",
        )
    Console().print(table)
    Console().print(summary)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    OUT.write_text(json.dumps({"meta": meta, "summary": summary, "episodes": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
