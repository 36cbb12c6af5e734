"""Real Minecraft against the simulator, side by side in one run.

For one episode of every forward template and both Goal×Capability modes (the cases of
tests/test_minecraft_episodes.py), with rule backends, the paper's recorded episode
(Table S9's setting), and shipped team tasks of 2, 3 and 5 agents with the planner: the
wall time of the actions in real Minecraft (Mineflayer bots on the embedded flying-squid
server, kept warm across episodes, agents acting at once), the simulator's *simulated*
duration of the same plan, their ratio, and the verdicts of both. For team tasks also the
sum of the agents' own action times, whose ratio to the wall time shows how much the
agents overlapped. Also the cold start (bridge + server start + logins, paid once per
worker) and episodes per hour per warm worker. ``--pool N`` runs the first N clusters of
the request-intervention pool instead of the templates. Results:
benchmarks/results/minecraft.json. Not a test: nothing here asserts a time.
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
from gencoord.prior.load import team_prior
from gencoord.run.episode import run_episode
from gencoord.run.team import run_team_task
from gencoord.runtime.verify import Execution
from gencoord.tasks import build_episode, default_suites, paper_pool
from gencoord.tasks.cluster import Cluster, make_cluster
from gencoord.tasks.team_files import load_team_tasks
from gencoord.worlds.mineflayer import MinecraftExecutor
from gencoord.worlds.sim import SimExecutor

OUT = Path(__file__).parent / "results" / "minecraft.json"
CAPABILITY = [("GC_STICK_ORDER", "RAW_PROCESSOR"), ("GC_TABLE_ORDER", "FINISHED_RECEIVER")]
RECORDED = ("ACTIVE_ORDER_BRANCH", "WORK_BRANCH", 7, 1)  # template, binding, seed, role: `gencoord episode` flags
PAPER_RECORDED_S = 22.36  # Table S9: the recorded episode's actions on the official server
# Team tasks of 2, 3 and 5 agents where each peer holds one ingredient: the givers walk and hand
# over at once, so the wall time shows whether agents really work in parallel (shared with soak.py).
TEAM_TASKS = tuple(load_team_tasks(Path(__file__).with_name("parallel_teams.json"), prior=team_prior()))


def _clusters(pool: int | None) -> list[Cluster]:
    suites = default_suites()
    if pool:
        return list(paper_pool("request_intervention", suites=suites)[:pool])
    forward = [
        make_cluster(name, sorted(suites.forward.templates[name].goals)[-1], 3, param_choice=1, suites=suites)
        for name in sorted(suites.forward.templates)
    ]
    return forward + [make_cluster(goal, mode, 3, suites=suites) for goal, mode in CAPABILITY]


def _busy_s(execution: Execution | None) -> float | None:
    """The agents' own action times added up: what the wall time would be if nobody overlapped."""
    return None if execution is None else sum(r.end_s - r.start_s for r in execution.records)


def _row(kind: str, name: str, agents: int, real: Execution | None, simulated: Execution | None) -> dict[str, object]:
    real_s = None if real is None else real.final.clock_s
    sim_s = None if simulated is None else simulated.final.clock_s
    busy = _busy_s(real)
    return {
        "kind": kind,
        "name": name,
        "agents": agents,
        "actions": 0 if real is None else len(real.records),
        "minecraft_actions_s": real_s,
        "sim_simulated_s": sim_s,
        "real_over_simulated": real_s / sim_s if real_s and sim_s else None,
        "agents_busy_s": busy,
        "wall_over_busy": real_s / busy if real_s and busy else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=int, default=None, help="run the first N request-intervention clusters")
    args = parser.parse_args()
    prior, suites, team = default_prior(), default_suites(), team_prior()
    minecraft = MinecraftExecutor(game=prior.game)
    rows: list[dict[str, object]] = []
    cold: dict[str, float] = {}
    try:
        template, binding, seed, role = RECORDED
        episodes = [("recorded", make_cluster(template, binding, seed, suites=suites), role, seed)]
        episodes += [("template", cluster, 0, 3) for cluster in _clusters(args.pool)]
        for kind, cluster, role, seed in episodes:
            spec = build_episode(cluster, role, seed, prior, suites)
            simulated = run_episode(spec, executor=SimExecutor(prior.game), prior=prior, suites=suites)
            began = time.perf_counter()
            real = run_episode(spec, executor=minecraft, prior=prior, suites=suites)
            total = time.perf_counter() - began
            cold = cold or dict(minecraft.timings)
            row = _row(kind, cluster.template, 2, real.execution, simulated.execution)
            row |= {
                "cluster": cluster.id,
                "episode_s": total,
                "reset_s": minecraft.timings.get("reset_s"),
                "verdicts_agree": real.outcome.stages == simulated.outcome.stages,
                "minecraft_G": real.outcome.success,
                "failure": real.outcome.reason,
            }
            rows.append(row)
            Console().print(row)
        for task in TEAM_TASKS:
            simulated_team = run_team_task(task, team, executor=SimExecutor(team.game))
            began = time.perf_counter()
            real_team = run_team_task(task, team, executor=minecraft)
            total = time.perf_counter() - began
            row = _row("team", task.id, len(task.agents), real_team.execution, simulated_team.execution)
            row |= {
                "episode_s": total,
                "reset_s": minecraft.timings.get("reset_s"),
                "verdicts_agree": (real_team.success, real_team.code) == (simulated_team.success, simulated_team.code),
                "minecraft_G": real_team.success,
                "failure": real_team.code,
            }
            rows.append(row)
            Console().print(row)
    finally:
        cold = cold or dict(minecraft.timings)
        minecraft.close()
    _report(rows, cold)


def _mean(values: list[float]) -> float | None:
    return statistics.mean(values) if values else None


def _report(rows: list[dict[str, object]], cold: dict[str, float]) -> None:
    def numbers(key: str, kind: str | None = None) -> list[float]:
        return [float(r[key]) for r in rows if r[key] is not None and (kind is None or r["kind"] == kind)]  # type: ignore[arg-type]

    recorded = next((r for r in rows if r["kind"] == "recorded"), None)
    ratios = numbers("real_over_simulated")
    five = [r for r in rows if r["kind"] == "team" and r["agents"] == 5 and r["wall_over_busy"] is not None]
    per_episode = _mean(numbers("episode_s"))
    summary = {
        "episodes": len(rows),
        "verdicts_agree": sum(bool(r["verdicts_agree"]) for r in rows),
        "minecraft_G": sum(bool(r["minecraft_G"]) for r in rows),
        "recorded_episode_actions_s": None if recorded is None else recorded["minecraft_actions_s"],
        "paper_recorded_episode_s": PAPER_RECORDED_S,
        "real_over_simulated_max": max(ratios) if ratios else None,
        "real_over_simulated_mean": _mean(ratios),
        "five_agents_wall_over_busy": [r["wall_over_busy"] for r in five],
        "mean_episode_s": per_episode,
        "episodes_per_hour_per_worker": 3600 / per_episode if per_episode else None,
        "cold_start": {key: cold.get(key) for key in ("bridge_s", "server_s", "login_s")},
    }
    table = Table(title="Real Minecraft vs simulated time, per episode (agents act at once)")
    for column in ("kind", "name", "agents", "actions", "real s", "sim s", "real/sim", "wall/busy", "agree", "G"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            str(r["kind"]),
            str(r["name"]),
            str(r["agents"]),
            str(r["actions"]),
            _fmt(r["minecraft_actions_s"]),
            _fmt(r["sim_simulated_s"]),
            _fmt(r["real_over_simulated"], 2),
            _fmt(r["wall_over_busy"], 2),
            "✓" if r["verdicts_agree"] else "✗",
            "✓" if r["minecraft_G"] else "✗",
        )
    Console().print(table)
    Console().print(summary)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    OUT.write_text(json.dumps({"meta": meta, "summary": summary, "episodes": rows}, indent=2) + "\n")


def _fmt(value: object, digits: int = 1) -> str:
    return "–" if value is None else f"{float(value):.{digits}f}"  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
