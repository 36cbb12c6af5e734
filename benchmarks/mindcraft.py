"""MINDcraft's crafting and cooking files as they ship, measured in one run: planning, the simulator, real Minecraft.

    .venv/bin/python benchmarks/mindcraft.py [DIR] [--minecraft N] [--generated N] [--cooking [DIR]]

DIR (default: ../shared/data/mindcraft/crafting, MINDcraft's train split) is every ``*.json``
in it, read as MINDcraft ships them. Reported, by agent count:
  * per-task planning + commitment time, in-process (the lead's whole exchange: supply
    questions, the planner's drafts and their dry runs, peers' answers, resolution);
  * simulator tasks per second end to end (records included), and success;
  * messages per task, and the committed plan's simulated makespan over the best
    single-crafter plan's (one agent makes and gathers everything);
  * with ``--minecraft N``: N tasks (evenly drawn) on the embedded real server, wall time
    per task and whether each ends as it did on the simulator;
  * with ``--generated N``: N generated tasks per team size 2–5 in the same format
    (``random_mindcraft_task``, half of them with logs to dig), for the team sizes the
    train split lacks; with ``--minecraft-generated M``, 3·M of those with 3–5 agents (evenly
    drawn) on real Minecraft as well.
  * with ``--generated-cooking N``: N cooking tasks from MINDcraft's cooking generators
    (``tasks/generate_cooking.py``: every dish, variant, team size 2–5, 1–3 dishes, and bags
    dealt evenly, by kind or not at all), reported as the cooking files are;
  * with ``--cooking`` (default DIR: ../shared/data/mindcraft/cooking): the cooking files, by
    agent count and variant (plain, blocked recipe, hells kitchen): simulator tasks per second,
    success, the plan's makespan against the task's time limit, and what teaching recipes cost
    in bytes; with ``--minecraft-cooking N``, N of them (evenly drawn) on real Minecraft too,
    wall time per task and agreement with the simulator.
Results are printed and written to benchmarks/results/mindcraft.json. Not a test: nothing
here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.backends.registry import team_players
from gencoord.dsl.surface import SurfaceName
from gencoord.prior.load import team_prior
from gencoord.prior.prior import Prior
from gencoord.run.kinds import task_kind
from gencoord.run.team import run_team_task
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_run import TeamResult
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.generate import random_mindcraft_task
from gencoord.tasks.generate_cooking import cooking_tasks
from gencoord.tasks.mindcraft_data import mindcraft_world
from gencoord.tasks.team import TeamTask, gathered_from
from gencoord.tasks.team_files import read_task_file
from gencoord.worlds.sim.physics import TICKS_PER_S

TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "mindcraft" / "crafting"
COOKING = TRAIN.parent / "cooking"
OUT = Path(__file__).parent / "results" / "mindcraft.json"
DIGGING_S = 6.0  # two logs by hand: from here, splitting the digging can beat one hand-over's 2.1 s


def _load(folder: Path) -> tuple[list[TeamTask], int]:
    prior = team_prior()
    tasks: list[TeamTask] = []
    refused = 0
    for path in sorted(folder.glob("*.json")):
        loaded = read_task_file(path, prior=prior)
        tasks += loaded.tasks
        refused += len(loaded.refused)
    return tasks, refused


def _generated(per_size: int, seed: int = 0) -> list[TeamTask]:
    prior, rng = team_prior(), random.Random(seed)
    document = {}
    for size in range(2, 6):
        made = 0
        while made < per_size:
            entry = random_mindcraft_task(prior, rng, size, mindcraft_world(), gathered=0.5)
            if entry is not None:
                document[f"generated_{size}_{made}"] = entry
                made += 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "generated.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        return list(read_task_file(path, prior=prior).tasks)


def _ratio(result: TeamResult) -> float | None:
    planned, single = result.planned_makespan_s, result.single_crafter_s
    return planned / single if planned is not None and single else None


def _digging_s(result: TeamResult, prior: Prior) -> float:
    """Seconds by hand the committed plan spends breaking blocks: work a team can split, unlike a hand-over."""
    if result.commitment is None:
        return 0.0
    ticks = 0
    for path in result.commitment.paths:
        for task in path.tasks:
            block = gathered_from(str(task.get("item")), prior) if task.skill == "resource.obtain" else None
            if block is not None:
                ticks += int(task.get("q") or 0) * prior.game.break_ticks(block, ())
    return ticks / TICKS_PER_S


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def _simulate(tasks: list[TeamTask]) -> tuple[list[TeamResult], float]:
    prior = team_prior()
    began = time.perf_counter()
    results = [run_team_task(task, prior) for task in tasks]
    return results, time.perf_counter() - began


def _by_agents(results: list[TeamResult]) -> dict[str, dict[str, object]]:
    prior = team_prior()
    groups: dict[int, list[TeamResult]] = defaultdict(list)
    for result in results:
        groups[len(result.task.agents)].append(result)
    rows: dict[str, dict[str, object]] = {}
    for agents, group in sorted(groups.items()):
        feasible = [r for r in group if r.feasible]
        ratios = [ratio for r in group if (ratio := _ratio(r)) is not None]
        digging = [ratio for r in group if (ratio := _ratio(r)) is not None and _digging_s(r, prior) >= DIGGING_S]
        rows[str(agents)] = {
            "tasks": len(group),
            "feasible": len(feasible),
            "succeeded": sum(r.success for r in group),
            "success_of_feasible": round(sum(r.success for r in feasible) / len(feasible), 4) if feasible else None,
            "median_protocol_ms": _median([1000 * r.seconds.get("protocol", 0.0) for r in group]),
            "median_messages": _median([float(len(r.wire.messages)) for r in group]),
            "mean_messages": round(statistics.mean(len(r.wire.messages) for r in group), 2),
            "succeeded_without_messages": sum(1 for r in group if r.success and not r.wire.messages),
            "median_makespan_s": _median([r.planned_makespan_s for r in group if r.planned_makespan_s is not None]),
            "median_single_crafter_s": _median([r.single_crafter_s for r in group if r.single_crafter_s is not None]),
            "median_makespan_over_single_crafter": _median(ratios),
            "mean_makespan_over_single_crafter": round(statistics.mean(ratios), 4) if ratios else None,
            "tasks_digging": len(digging),
            "median_ratio_digging": _median(digging),
        }
    return rows


def _run(task: TeamTask | CookingTask, prior: Prior, executor: object = None) -> TeamResult:
    """Any task as ``gencoord tasks run`` runs it: its kind's runner, the planner leading, private bags."""
    players = team_players("planner", prior)
    return task_kind(task).play(task, prior, TeamMode.PRIVATE, SurfaceName.DSL, players, executor)  # type: ignore[arg-type]


def _variant(task: CookingTask) -> str:
    if task.own_work:
        return "hells kitchen"
    return "blocked recipe" if task.recipes else "plain"


def _cooking(folder: Path, minecraft: int) -> dict[str, object]:
    prior = team_prior()
    tasks: list[CookingTask] = []
    refused = 0
    for path in sorted(folder.glob("*.json")):
        loaded = read_task_file(path, prior=prior)
        tasks += [task for task in loaded.tasks if isinstance(task, CookingTask)]
        refused += len(loaded.refused)
    began = time.perf_counter()
    results = [_run(task, prior) for task in tasks]
    seconds = time.perf_counter() - began
    groups: dict[tuple[int, str], list[TeamResult]] = defaultdict(list)
    for result in results:
        assert isinstance(result.task, CookingTask)
        groups[(len(result.task.agents), _variant(result.task))].append(result)
    rows: dict[str, dict[str, object]] = {}
    for (agents, variant), group in sorted(groups.items()):
        refusals: dict[str, int] = defaultdict(int)
        for r in group:
            if not r.success:
                refusals[str(r.code)] += 1
        rows[f"{agents} {variant}"] = {
            "tasks": len(group),
            "feasible": sum(r.feasible for r in group),
            "succeeded": sum(r.success for r in group),
            "failures": dict(refusals),
            "median_makespan_s": _median([r.duration_s for r in group if r.success and r.duration_s is not None]),
            "median_makespan_over_time_limit": _median(
                [r.duration_s / r.task.time_limit_s for r in group if r.success and r.duration_s is not None]
            ),
            "median_makespan_over_one_cook": _median(
                [r.duration_s / r.single_crafter_s for r in group if r.success and r.duration_s and r.single_crafter_s]
            ),
            "mean_recipe_bytes": round(statistics.mean(r.recipe_bytes for r in group), 1),
            "median_wire_bytes": _median([float(r.wire.total_bytes) for r in group]),
        }
    summary: dict[str, object] = {
        "folder": str(folder),
        "tasks": len(tasks),
        "refused_as_written": refused,
        "simulator_s": round(seconds, 3),
        "simulator_tasks_per_s": round(len(tasks) / seconds, 1) if seconds else None,
        "by_agents_and_variant": rows,
    }
    if minecraft:
        summary["minecraft"] = _minecraft(tasks, {r.task.id: r for r in results}, minecraft)  # type: ignore[arg-type]
    return summary


def _minecraft(tasks: list[TeamTask], sim: dict[str, TeamResult], count: int) -> dict[str, object]:
    from gencoord.worlds.mineflayer import MinecraftExecutor  # noqa: PLC0415 - only when asked for

    prior = team_prior()
    step = max(1, len(tasks) // count)
    chosen = tasks[::step][:count]
    executor = MinecraftExecutor()
    walls: list[float] = []
    rows = []
    try:
        for task in chosen:
            began = time.perf_counter()
            real = _run(task, prior, executor)
            walls.append(time.perf_counter() - began)
            twin = sim[task.id]
            rows.append(
                {
                    "task": task.id,
                    "agents": len(task.agents),
                    "success": real.success,
                    "code": real.code,
                    "message": real.message,
                    "agrees_with_simulator": (real.success, real.code) == (twin.success, twin.code),
                    "wall_s": round(walls[-1], 2),
                }
            )
    finally:
        executor.close()
    return {
        "tasks": len(rows),
        "succeeded": sum(1 for row in rows if row["success"]),
        "agree": sum(1 for row in rows if row["agrees_with_simulator"]),
        "median_wall_s": _median(walls),
        "cold_start": executor.timings,
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=TRAIN)
    parser.add_argument("--minecraft", type=int, default=0, help="tasks to run on real Minecraft as well")
    parser.add_argument("--generated", type=int, default=0, help="generated tasks per team size 2-5")
    parser.add_argument(
        "--minecraft-generated", type=int, default=0, help="of those, tasks per team size 3-5 to run on Minecraft too"
    )
    parser.add_argument("--cooking", nargs="?", type=Path, const=COOKING, default=None, help="cooking files too")
    parser.add_argument("--minecraft-cooking", type=int, default=0, help="cooking tasks to run on Minecraft too")
    parser.add_argument(
        "--generated-cooking", type=int, default=0, help="cooking tasks from MINDcraft's generators, every axis"
    )
    args = parser.parse_args()
    tasks, refused = _load(args.folder)
    results, seconds = _simulate(tasks)
    summary: dict[str, object] = {
        "folder": str(args.folder),
        "tasks": len(tasks),
        "refused_as_written": refused,
        "simulator_s": round(seconds, 3),
        "simulator_tasks_per_s": round(len(tasks) / seconds, 1) if seconds else None,
        "by_agents": _by_agents(results),
    }
    if args.generated:
        generated = _generated(args.generated)
        made, made_s = _simulate(generated)
        summary["generated"] = {"tasks": len(generated), "simulator_s": round(made_s, 3), "by_agents": _by_agents(made)}
        if args.minecraft_generated:
            larger = [task for task in generated if len(task.agents) >= 3]
            summary["generated"]["minecraft"] = _minecraft(  # type: ignore[index]
                larger, {r.task.id: r for r in made}, 3 * args.minecraft_generated
            )
    if args.minecraft:
        summary["minecraft"] = _minecraft(tasks, {r.task.id: r for r in results}, args.minecraft)
    if args.cooking is not None:
        summary["cooking"] = _cooking(args.cooking, args.minecraft_cooking)
    if args.generated_cooking:
        with tempfile.TemporaryDirectory() as folder:
            made = Path(folder) / "generated_cooking.json"
            made.write_text(json.dumps(cooking_tasks(args.generated_cooking)), encoding="utf-8")
            summary["generated_cooking"] = _cooking(Path(folder), 0)
    summary |= {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    console = Console()
    for title, rows in [("MINDcraft files", summary["by_agents"])] + (
        [("generated, same format", summary["generated"]["by_agents"])] if args.generated else []  # type: ignore[index]
    ):
        table = Table(title=title)
        columns = ("agents", "tasks", "succeeded", "protocol ms", "messages", "makespan s", "single s", "ratio")
        for column in (*columns, f"ratio, digging ≥ {DIGGING_S:g} s (n)"):
            table.add_column(column, justify="right")
        for agents, row in rows.items():  # type: ignore[attr-defined]
            table.add_row(
                agents,
                str(row["tasks"]),
                f"{row['succeeded']}/{row['feasible']}",
                str(row["median_protocol_ms"]),
                str(row["mean_messages"]),
                str(row["median_makespan_s"]),
                str(row["median_single_crafter_s"]),
                str(row["median_makespan_over_single_crafter"]),
                f"{row['median_ratio_digging']} ({row['tasks_digging']})",
            )
        console.print(table)
    console.print(
        f"{len(tasks)} tasks on the simulator in {seconds:.2f} s ({summary['simulator_tasks_per_s']} tasks/s)"
    )
    for title, real in (
        ("Minecraft, the files", summary.get("minecraft")),
        ("Minecraft, generated 3-5 agents", summary.get("generated", {}).get("minecraft")),  # type: ignore[attr-defined]
    ):
        if real:
            line = f"{real['succeeded']}/{real['tasks']} succeeded, {real['agree']} agree with the simulator"
            console.print(f"{title}: {line}, median {real['median_wall_s']} s a task")
    for name, title in (("cooking", "MINDcraft cooking files"), ("generated_cooking", "generated cooking tasks")):
        cooking = summary.get(name)
        if not isinstance(cooking, dict):
            continue
        table = Table(title=title)
        columns = (
            "agents, variant",
            "tasks",
            "feasible",
            "succeeded",
            "makespan s",
            "/ limit",
            "/ one cook",
            "recipe B",
        )
        for column in columns:
            table.add_column(column, justify="right")
        for key, row in cooking["by_agents_and_variant"].items():
            table.add_row(
                key,
                str(row["tasks"]),
                str(row["feasible"]),
                f"{row['succeeded']}/{row['feasible']}",
                str(row["median_makespan_s"]),
                str(row["median_makespan_over_time_limit"]),
                str(row["median_makespan_over_one_cook"]),
                str(row["mean_recipe_bytes"]),
            )
        console.print(table)
        console.print(f"{cooking['tasks']} {title} on the simulator: {cooking['simulator_tasks_per_s']} tasks/s")
        real = cooking.get("minecraft")
        if isinstance(real, dict):
            line = f"{real['succeeded']}/{real['tasks']} succeeded, {real['agree']} agree with the simulator"
            console.print(f"Minecraft, cooking: {line}, median {real['median_wall_s']} s a task")
    console.print(f"→ {OUT}")


if __name__ == "__main__":
    main()
