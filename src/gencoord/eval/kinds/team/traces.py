"""The Markdown trace of every team task in a run: goal, verdict, wire, commitment, stages, the blueprint check.

Read from the records alone, so a report can be rebuilt from a copied run folder. The
HTML report's viewer shows the same traces; these are for reading ``report.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gencoord.backends.families import recorded_label
from gencoord.eval.kinds.team.build_figures import build_figure
from gencoord.eval.tables import counted

BUILD_FIGURES = "builds"
"""Beside the report: one image per construction task run, its levels as grids of verdicts."""


def _goal(record: Mapping[str, Any]) -> str:
    goal = record["goal"]
    if "blueprint" in goal:
        width, levels, depth = goal["blueprint"]["size"]
        return f"Blueprint {width}×{levels}×{depth} ({goal['blueprint']['blocks']} blocks) standing"
    if "goals" in goal:
        said = [
            ", ".join(f"{count} {item}" for item, count in sorted(one["items"].items()))
            + (" held by one agent" if one["holder"] == "any" else f" held by {one['holder']}")
            for one in goal["goals"]
        ]
        return "Goal: " + "; ".join(said) + ", all at once"
    return f"Goal: {goal['count']} {goal['item']} held by {goal['holder']}"


def _picture(record: Mapping[str, Any], run_dir: Path) -> list[str]:
    """The blueprint check as an image beside the report, and its score per level."""
    build = record.get("build")
    if not build:
        return []
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{record['task']}-{record['world']}")[:120]
    path = build_figure(record, run_dir / BUILD_FIGURES / f"{name}.png")
    levels = ", ".join(f"{level['level']}: {level['score']:.2f}" for level in build["levels"])
    return [
        f"Blueprint check: score {build['score']:.3f}, {build['matches']} cells match, "
        f"{build['mismatches']} differ (per level {levels}).",
        "",
        f"![{record['task']}]({BUILD_FIGURES}/{path.name})",
        "",
    ]


def _trace(record: Mapping[str, Any], run_dir: Path) -> list[str]:
    verdict = "success" if record["success"] else f"{record['code']}: {record['message']}"
    lines = [
        f"### {record['task']} ({counted(record['agents'], 'agent')}, {record['mode']}, {record['surface']}, "
        f"{record['world']})",
        "",
        f"{_goal(record)} within {record['time_limit_s']:.0f} s. "
        f"Lead: {record['lead']} ({recorded_label(str(record['backend']))}). {verdict}.",
        "",
        *_picture(record, run_dir),
    ]
    if record.get("recipe_bytes"):
        lines += [f"Teaching recipes cost {record['recipe_bytes']} B on the wire (deliveries and their ACKs).", ""]
    if record.get("planned_makespan_s") is not None:
        single = record.get("single_crafter_s")
        who = "one agent building alone" if record.get("build") else "the best single-crafter plan"
        versus = f"; {who}: {single:.1f} s" if single is not None else ""
        lines += [f"Plan makespan on the simulator: {record['planned_makespan_s']:.1f} s{versus}.", ""]
    if record["wire"]:
        lines += ["Wire:", "", "```"]
        lines += [f"{m['from']} → {m['to']} {m['kind']} ({m['bytes']} B): {m['payload']}" for m in record["wire"]]
        lines += ["```", ""]
    commitment = record["commitment"]
    if commitment is not None:
        lines += ["Commitment:", "", "```"]
        lines += [f"{agent}: {path}" for agent, path in commitment["paths"].items()]
        lines += [
            f"hand-over: {h['giver']} → {h['receiver']} {h['quantity']} {h['item']}" for h in commitment["handoffs"]
        ]
        lines += ["```", ""]
    if record["stages"]:
        marks = {True: "✓", False: "✗", None: "–"}
        lines.append("Stages: " + "  ".join(f"{stage} {marks[value]}" for stage, value in record["stages"].items()))
        lines.append("")
    for note in record["notes"]:
        lines.append(f"- note: {note}")
    return lines


def trace_sections(records: Sequence[Mapping[str, Any]], run_dir: Path) -> list[str]:
    """``## Traces``: one section per task that ran (refused ones have their own table), by team size."""
    ran = sorted(
        (record for record in records if not record.get("refused")),
        key=lambda r: (r["agents"], r["task"], r["mode"], r["surface"]),
    )
    if not ran:
        return []
    lines = ["## Traces", ""]
    for record in ran:
        lines += _trace(record, run_dir)
    return ["\n".join(lines)]
