"""MINDcraft's houses, as its generator makes them, measured in one run on both worlds.

    .venv/bin/python benchmarks/construction.py [DIR] [--generated N] [--minecraft M]

DIR (default: ../shared/data/mindcraft/construction) is every ``*.json`` under it, read as
MINDcraft ships them (its generated houses and its custom blueprints); ``--generated N`` adds N
houses per team size (2, 3, 4, 5 and 8 agents) from ``tasks/generate_houses.py``, their
materials, room count, windows and carpets drawn from the producer's axes. Reported side by side:

  * by team size and by each generator axis (rooms, materials, windows, carpets): tasks refused
    before any action (with their codes), houses with cells vanilla cannot hold as asked (a
    carpet over air: no build reaches zero mismatches, so they are built to the best score),
    built, success of the houses some build can finish, and the lowest score;
  * per house: blocks, scaffolding (blocks under floating parts, and tower blocks pillared up
    and dug down), wire bytes of the exchange, and the bytes the same commitment costs with
    every cell spelled out; planning seconds (judging and drafting, dry runs included);
  * the team's makespan over one agent's (``planning/build.py`` ``alone_makespan``), and blocks
    placed per second per agent, over the world's clock;
  * with ``--minecraft M``: M houses per team size, of the shipped ones and of the generated ones,
    that the simulator built, on the embedded real server: success, score, real over simulated
    time, and whether the build ended within MINDcraft's time limit.

Results are printed and written to benchmarks/results/construction.json. Not a test: nothing
here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import re
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.dsl.serialize import serialize
from gencoord.planning.build import judge_build, plan_build
from gencoord.prior.load import team_prior
from gencoord.run.build import run_build_task
from gencoord.tasks.build import BuildTask
from gencoord.tasks.generate_houses import ROOM_COUNTS, house_task
from gencoord.tasks.team_files import read_task_file
from gencoord.worlds.actions import Pillar
from gencoord.worlds.executor import Executor

SHIPPED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mindcraft" / "construction"
OUT = Path(__file__).parent / "results" / "construction.json"
TEAM_SIZES = (2, 3, 4, 5, 8)
AXES = ("materials", "rooms", "window", "carpet")
PRIOR = team_prior()


def _read(paths: list[Path]) -> list[BuildTask]:
    return [task for path in paths for task in read_task_file(path, prior=PRIOR).tasks if isinstance(task, BuildTask)]


def _generated(per_size: int, seed: int) -> list[BuildTask]:
    folder = Path(tempfile.mkdtemp(prefix="gencoord-houses-"))
    paths = []
    for agents in TEAM_SIZES:
        rng = random.Random(f"{seed}/{agents}")
        document = {}
        for variant in range(per_size):
            m, r, w, c = rng.randrange(5), rng.randrange(3), rng.randrange(3), rng.randrange(3)
            name = f"materials_{m}_rooms_{r}_window_{w}_carpet_{c}_variant_{variant}"
            document[name] = house_task(
                rng.getrandbits(31), agents, materials=m, rooms=ROOM_COUNTS[r], window=w, carpet=c
            )
        path = folder / f"houses_{agents}_agents.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        paths.append(path)
    return _read(paths)


def _key(task: BuildTask) -> str:
    """A house's name and team size: MINDcraft names a house alike in each team size's file."""
    return f"{task.id}/{len(task.agents)}"


def _axes(task: BuildTask) -> dict[str, str]:
    """The generator's settings, read back from MINDcraft's task name (``materials_3_rooms_1_...``)."""
    found = dict(re.findall(r"(materials|rooms|window|carpet)_(\d+)", task.id))
    return {axis: found.get(axis, "-") for axis in AXES}


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _measure(task: BuildTask) -> dict[str, object]:
    """One house on the simulator: planning, the exchange, the world."""
    lead = task.agents[0].name
    began = time.perf_counter()
    verdict = judge_build(task)
    plans = {form: plan_build(task, lead, PRIOR, form=form) for form in ("share", "cells")} if verdict.feasible else {}
    planning_s = (time.perf_counter() - began) / (2 if plans else 1)  # the two forms plan alike: one's time
    result = run_build_task(task, PRIOR)
    towers = 0 if result.execution is None else sum(isinstance(r.action, Pillar) for r in result.execution.records)
    row: dict[str, object] = {
        "task": task.id,
        "agents": len(task.agents),
        **_axes(task),
        "blocks": len(task.blueprint.blocks()),
        "refused": not result.feasible,
        "unbuildable_cells": len(verdict.unbuildable),
        "success": result.success,
        "score": None if result.built is None else round(result.built.score, 4),
        "code": result.code,
        "message": result.message,
        "planning_s": round(planning_s, 3),
        "wire_bytes": result.wire.total_bytes,
        "largest_message_bytes": max((m.nbytes for m in result.wire.messages), default=0),
        "proposal_bytes_share": len(serialize(plans["share"].proposal).encode()) if plans else None,
        "proposal_bytes_cells": len(serialize(plans["cells"].proposal).encode()) if plans else None,
        "draft": plans["share"].draft if plans else None,
        "scaffolding_blocks": plans["share"].scaffolding if plans else None,
        "tower_blocks": towers,
        "makespan_s": result.duration_s,
        "alone_s": result.single_crafter_s,
        "time_limit_s": task.time_limit_s,
    }
    if result.success and result.duration_s:
        row["blocks_per_s_per_agent"] = round(len(task.blueprint.blocks()) / result.duration_s / len(task.agents), 3)
        if result.single_crafter_s:
            row["team_over_alone"] = round(result.duration_s / result.single_crafter_s, 3)
    return row


def _summary(rows: list[dict[str, object]]) -> dict[str, object]:
    feasible = [r for r in rows if not r["refused"]]
    possible = [r for r in feasible if not r["unbuildable_cells"]]  # houses some build finishes at zero mismatches
    codes: dict[str, int] = defaultdict(int)
    drafts: dict[str, int] = defaultdict(int)  # which draft the planner chose (the least makespan on its dry run)
    for row in rows:
        if not row["success"]:
            codes[str(row["code"])] += 1
        if row.get("draft"):
            drafts[str(row["draft"])] += 1

    def values(key: str) -> list[float]:
        return [float(r[key]) for r in rows if isinstance(r.get(key), int | float)]  # type: ignore[arg-type]

    return {
        "tasks": len(rows),
        "refused": len(rows) - len(feasible),
        "succeeded": sum(bool(r["success"]) for r in rows),
        "success_of_buildable": round(sum(bool(r["success"]) for r in feasible) / len(feasible), 3)
        if feasible
        else None,
        "with_unbuildable_cells": sum(bool(r["unbuildable_cells"]) for r in rows),
        "success_of_possible": round(sum(bool(r["success"]) for r in possible) / len(possible), 3)
        if possible
        else None,
        "min_score": min(values("score"), default=None),
        "codes": dict(sorted(codes.items())),
        "drafts": dict(sorted(drafts.items())),
        "median_blocks": _median(values("blocks")),
        "median_planning_s": _median(values("planning_s")),
        "max_planning_s": max(values("planning_s"), default=None),
        "median_wire_bytes": _median(values("wire_bytes")),
        "max_message_bytes": max(values("largest_message_bytes"), default=None),
        "median_proposal_bytes_share": _median(values("proposal_bytes_share")),
        "median_proposal_bytes_cells": _median(values("proposal_bytes_cells")),
        "median_scaffolding_blocks": _median(values("scaffolding_blocks")),
        "median_tower_blocks": _median(values("tower_blocks")),
        "median_team_over_alone": _median(values("team_over_alone")),
        "median_blocks_per_s_per_agent": _median(values("blocks_per_s_per_agent")),
    }


def _grouped(rows: list[dict[str, object]], key: str) -> dict[str, dict[str, object]]:
    groups: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        groups[str(row[key])].append(row)
    return {value: _summary(group) for value, group in sorted(groups.items())}


def _minecraft(
    origins: dict[str, list[BuildTask]], rows: dict[str, dict[str, object]], per_size: int
) -> dict[str, object]:
    """The first ``per_size`` houses of each origin (shipped, generated) and team size that the simulator built."""
    from gencoord.worlds.mineflayer import MinecraftExecutor  # noqa: PLC0415 - only when asked for

    chosen: dict[tuple[str, int], list[BuildTask]] = defaultdict(list)
    for origin, tasks in origins.items():
        for task in tasks:
            if rows[_key(task)]["success"] and len(chosen[origin, len(task.agents)]) < per_size:
                chosen[origin, len(task.agents)].append(task)
    executor = MinecraftExecutor()
    real_rows = []
    try:
        for (origin, _), group in chosen.items():
            for task in group:
                real_rows.append(_built_on_minecraft(task, origin, rows, executor))
    finally:
        executor.close()
    ratios = [float(r["real_over_simulated"]) for r in real_rows if r["real_over_simulated"] is not None]  # type: ignore[arg-type]
    return {
        "tasks": len(real_rows),
        "succeeded": sum(bool(r["success"]) for r in real_rows),
        "median_real_over_simulated": _median(ratios),
        "within_time_limit": sum(bool(r["within_time_limit"]) for r in real_rows),
        "rows": real_rows,
    }


def _built_on_minecraft(
    task: BuildTask, origin: str, rows: dict[str, dict[str, object]], executor: Executor
) -> dict[str, object]:
    began = time.perf_counter()
    real = run_build_task(task, PRIOR, executor=executor)
    simulated = rows[_key(task)]["makespan_s"]
    return {
        "task": task.id,
        "origin": origin,
        "agents": len(task.agents),
        "success": real.success,
        "score": None if real.built is None else round(real.built.score, 4),
        "code": real.code,
        "message": real.message,
        "real_s": real.duration_s,
        "simulated_s": simulated,
        "time_limit_s": task.time_limit_s,
        "within_time_limit": bool(real.duration_s is not None and real.duration_s <= task.time_limit_s),
        "wall_s": round(time.perf_counter() - began, 1),
        "real_over_simulated": round(real.duration_s / simulated, 3)  # type: ignore[operator]
        if real.success and real.duration_s and simulated
        else None,
    }


def _print(console: Console, title: str, groups: dict[str, dict[str, object]], label: str) -> None:
    table = Table(title=title)
    columns: tuple[str, ...] = (
        label,
        "tasks",
        "refused",
        "unbuildable",
        "built",
        "of possible",
        "min score",
        "planning s",
        "wire B",
    )
    columns += ("share B", "cells B")
    for column in (*columns, "scaffold", "tower", "team/alone", "blocks/s/agent"):
        table.add_column(column, justify="right")
    for value, row in groups.items():
        keys = (
            "tasks",
            "refused",
            "with_unbuildable_cells",
            "succeeded",
            "success_of_possible",
            "min_score",
            "median_planning_s",
            "median_wire_bytes",
            "median_proposal_bytes_share",
            "median_proposal_bytes_cells",
            "median_scaffolding_blocks",
            "median_tower_blocks",
            "median_team_over_alone",
            "median_blocks_per_s_per_agent",
        )
        table.add_row(value, *(str(row[key]) for key in keys))
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=SHIPPED)
    parser.add_argument("--generated", type=int, default=0, help="generated houses per team size (2, 3, 4, 5, 8)")
    parser.add_argument("--seed", type=int, default=1, help="what the generated houses are drawn from")
    parser.add_argument("--minecraft", type=int, default=0, help="built houses per team size on real Minecraft too")
    parser.add_argument(
        "--out", type=Path, default=OUT, help="the results file (a simulator-only rerun beside a real one)"
    )
    args = parser.parse_args()
    shipped = _read(sorted(args.folder.rglob("*.json"))) if args.folder.is_dir() else []
    generated = _generated(args.generated, args.seed) if args.generated else []
    began = time.perf_counter()
    measured = {_key(task): _measure(task) for task in shipped + generated}
    seconds = time.perf_counter() - began
    shipped_rows = [measured[_key(t)] for t in shipped]
    generated_rows = [measured[_key(t)] for t in generated]
    summary: dict[str, object] = {
        "folder": str(args.folder),
        "shipped": {"all": _summary(shipped_rows), "by_agents": _grouped(shipped_rows, "agents")},
        "generated": {
            "all": _summary(generated_rows),
            "by_agents": _grouped(generated_rows, "agents"),
            **{f"by_{axis}": _grouped(generated_rows, axis) for axis in AXES},
        },
        "simulator_s": round(seconds, 1),
        "rows": list(measured.values()),
    }
    if args.minecraft:
        summary["minecraft"] = _minecraft({"shipped": shipped, "generated": generated}, measured, args.minecraft)
    summary |= {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    console = Console(width=200)
    if shipped_rows:
        _print(console, f"{args.folder.name}: by team size", summary["shipped"]["by_agents"], "agents")  # type: ignore[index]
    if generated_rows:
        for axis in ("agents", *AXES):
            key = "by_agents" if axis == "agents" else f"by_{axis}"
            _print(console, f"generated houses: by {axis}", summary["generated"][key], axis)  # type: ignore[index]
    real = summary.get("minecraft")
    if isinstance(real, dict):
        table = Table(title="real Minecraft")
        for column in ("task", "origin", "agents", "success", "score", "real s", "simulated s", "real/simulated"):
            table.add_column(column, justify="right")
        for row in real["rows"]:
            keys = ("task", "origin", "agents", "success", "score", "real_s", "simulated_s", "real_over_simulated")
            table.add_row(*(str(row[key]) for key in keys))
        console.print(table)
    console.print(f"{len(measured)} houses on the simulator in {seconds:.0f} s → {args.out}")


if __name__ == "__main__":
    main()
