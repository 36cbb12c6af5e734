"""MINDcraft's construction tasks, as they ship and generated, measured in one run on both worlds.

    .venv/bin/python benchmarks/construction.py [DIR] [--generated N] [--minecraft M]

DIR (default: ../shared/data/mindcraft/construction) is every ``*.json`` in it, read as MINDcraft
ships them; ``--generated N`` adds N generated blueprints (``random_build_task``, 3 levels) per
team size 1–5, the same blueprint drawn for every team size so sizes compare like for like.
Reported, by agent count, side by side from one run:
  * simulator tasks per second end to end, and success;
  * blocks placed per second per agent (simulated time);
  * the team's makespan over one agent building alone (every teammate first hands it what it
    holds; both dry-run on the simulator from the true bags);
  * with ``--minecraft M``: the shipped files and M generated tasks per team size on the embedded
    real server: blocks per second per agent in real time, real over simulated time, success.
Kept apart from benchmarks/mindcraft.py (crafting) because its measures differ: blocks, not items.
Results are printed and written to benchmarks/results/construction.json. Not a test: nothing
here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.prior.load import team_prior
from gencoord.run.build import run_build_task
from gencoord.run.team import TeamResult
from gencoord.tasks.build import BuildTask
from gencoord.tasks.generate_builds import random_build_task
from gencoord.tasks.team_files import read_task_file

SHIPPED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mindcraft" / "construction"
OUT = Path(__file__).parent / "results" / "construction.json"


def _read(paths: list[Path]) -> list[BuildTask]:
    prior = team_prior()
    return [task for path in paths for task in read_task_file(path, prior=prior).tasks if isinstance(task, BuildTask)]


def _generated(per_size: int) -> list[BuildTask]:
    folder = Path(tempfile.mkdtemp(prefix="gencoord-builds-"))
    paths = []
    for agents in range(1, 6):
        document = {f"g{seed}_{agents}a": random_build_task(seed, agents, levels=3) for seed in range(per_size)}
        path = folder / f"{agents}_agents.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        paths.append(path)
    return _read(paths)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _blocks(result: TeamResult) -> int:
    return 0 if result.built is None else result.built.matches


def _rate(result: TeamResult) -> float | None:
    """Blocks placed per second per agent, over the world's own clock."""
    seconds = result.duration_s
    if not result.success or not seconds:
        return None
    return _blocks(result) / seconds / len(result.task.agents)


def _row(results: list[TeamResult]) -> dict[str, object]:
    ratios = [
        r.planned_makespan_s / r.single_crafter_s
        for r in results
        if r.success and r.planned_makespan_s is not None and r.single_crafter_s
    ]
    return {
        "tasks": len(results),
        "succeeded": sum(r.success for r in results),
        "median_blocks": _median([float(_blocks(r)) for r in results]),
        "median_makespan_s": _median([r.duration_s for r in results if r.success and r.duration_s is not None]),
        "median_alone_s": _median([r.single_crafter_s for r in results if r.single_crafter_s is not None]),
        "median_team_over_alone": _median(ratios),
        "median_blocks_per_s_per_agent": _median([rate for r in results if (rate := _rate(r)) is not None]),
        "failures": [{"task": r.task.id, "code": r.code, "message": r.message} for r in results if not r.success],
    }


def _by_agents(results: list[TeamResult]) -> dict[str, dict[str, object]]:
    groups: dict[int, list[TeamResult]] = defaultdict(list)
    for result in results:
        groups[len(result.task.agents)].append(result)
    return {str(agents): _row(rows) for agents, rows in sorted(groups.items())}


def _minecraft(tasks: list[BuildTask], simulated: dict[str, TeamResult]) -> dict[str, object]:
    from gencoord.worlds.mineflayer import MinecraftExecutor  # noqa: PLC0415 - only when asked for

    prior = team_prior()
    executor = MinecraftExecutor()
    rows = []
    try:
        for task in tasks:
            real = run_build_task(task, prior, executor=executor)
            twin = simulated[task.id]
            rate = _rate(real)
            rows.append(
                {
                    "task": task.id,
                    "agents": len(task.agents),
                    "blocks": _blocks(real),
                    "success": real.success,
                    "score": None if real.built is None else round(real.built.score, 4),
                    "code": real.code,
                    "message": real.message,
                    "real_s": None if real.duration_s is None else round(real.duration_s, 2),
                    "simulated_s": None if twin.duration_s is None else round(twin.duration_s, 2),
                    "blocks_per_s_per_agent": None if rate is None else round(rate, 3),
                }
            )
    finally:
        executor.close()
    ratios = [row["real_s"] / row["simulated_s"] for row in rows if row["success"] and row["simulated_s"]]  # type: ignore[operator]
    return {
        "tasks": len(rows),
        "succeeded": sum(1 for row in rows if row["success"]),
        "median_real_over_simulated": _median(ratios),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=SHIPPED)
    parser.add_argument("--generated", type=int, default=0, help="generated blueprints per team size 1-5")
    parser.add_argument("--minecraft", type=int, default=0, help="generated tasks per team size on Minecraft too")
    args = parser.parse_args()
    prior = team_prior()
    shipped = _read(sorted(args.folder.glob("*.json"))) if args.folder.is_dir() else []
    generated = _generated(args.generated) if args.generated else []
    began = time.perf_counter()
    results = [run_build_task(task, prior) for task in shipped + generated]
    seconds = time.perf_counter() - began
    simulated = {r.task.id: r for r in results}
    summary: dict[str, object] = {
        "folder": str(args.folder),
        "shipped": _by_agents(results[: len(shipped)]),
        "generated": _by_agents(results[len(shipped) :]),
        "simulator_s": round(seconds, 3),
        "simulator_tasks_per_s": round(len(results) / seconds, 1) if seconds else None,
    }
    if args.minecraft:
        chosen = shipped + [t for t in generated if int(t.id.split("_")[0][1:]) < args.minecraft]
        summary["minecraft"] = _minecraft(chosen, simulated)
    summary |= {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    console = Console()
    for title, rows in (("shipped files", summary["shipped"]), ("generated, 3 levels", summary["generated"])):
        if not rows:
            continue
        table = Table(title=title)
        for column in (
            "agents",
            "tasks",
            "succeeded",
            "blocks",
            "makespan s",
            "alone s",
            "team / alone",
            "blocks/s/agent",
        ):
            table.add_column(column, justify="right")
        for agents, row in rows.items():  # type: ignore[attr-defined]
            table.add_row(
                agents,
                str(row["tasks"]),
                str(row["succeeded"]),
                str(row["median_blocks"]),
                str(row["median_makespan_s"]),
                str(row["median_alone_s"]),
                str(row["median_team_over_alone"]),
                str(row["median_blocks_per_s_per_agent"]),
            )
        console.print(table)
    console.print(
        f"{len(results)} tasks on the simulator in {seconds:.2f} s ({summary['simulator_tasks_per_s']} tasks/s)"
    )
    real = summary.get("minecraft")
    if isinstance(real, dict):
        table = Table(title="real Minecraft")
        for column in ("task", "agents", "blocks", "success", "real s", "simulated s", "blocks/s/agent"):
            table.add_column(column, justify="right")
        for row in real["rows"]:
            keys = ("task", "agents", "blocks", "success", "real_s", "simulated_s", "blocks_per_s_per_agent")
            table.add_row(*(str(row[key]) for key in keys))
        console.print(table)
        console.print(
            f"Minecraft: {real['succeeded']}/{real['tasks']} succeeded; real over simulated time, median "
            f"{real['median_real_over_simulated']}"
        )
    console.print(f"→ {OUT}")


if __name__ == "__main__":
    main()
