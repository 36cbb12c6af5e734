"""The report of a team-task run: outcomes by team size, traffic, and every task's n-agent trace.

Read back from the run folder's records (append-only), so a report can be rebuilt at
any time and a resumed run reports every task once. Rule peers and the planner make no
model calls; the report says which backend led each row.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from statistics import median
from typing import Any

from gencoord.eval.build_figures import build_figure
from gencoord.eval.records import read_jsonl

TEAM_RECORDS = "team_records.jsonl"
TEAM_REPORT = "report.md"
BUILD_FIGURES = "builds"
"""Beside the report: one image per construction task run, its levels as grids of verdicts."""


def read_team_records(run_dir: Path, repair: bool = False) -> list[dict[str, Any]]:
    """Every record once (the last one recorded for a task, mode, surface, world and lead).

    A torn last line (a crash mid-append) is skipped, or cut off with ``repair``.
    """
    latest: dict[tuple[str, ...], dict[str, Any]] = {}
    for record in read_jsonl(run_dir / TEAM_RECORDS, repair):
        latest[record_key(record)] = record
    return list(latest.values())


def record_key(record: dict[str, Any]) -> tuple[str, ...]:
    return (record["file"], record["task"], record["mode"], record["surface"], record["world"], record["backend"])


def _rate(rows: list[dict[str, Any]], field: str) -> str:
    hits = sum(1 for row in rows if row[field])
    return f"{hits}/{len(rows)} ({100 * hits / len(rows):.0f}%)" if rows else "–"


def _median(values: Iterable[float | None]) -> str:
    present = [value for value in values if value is not None]
    return f"{median(present):.1f}" if present else "–"


def _summary(records: list[dict[str, Any]]) -> list[str]:
    groups: dict[tuple[str, str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["backend"], record["mode"], record["surface"], record["agents"])].append(record)
    lines = [
        "| lead backend | information | surface | agents | tasks | success | judged feasible | median messages "
        "| median wire bytes | recipe bytes | model calls | median duration (s) | median makespan / single crafter |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (backend, mode, surface, agents), rows in sorted(groups.items()):
        lines.append(
            f"| {backend} | {mode} | {surface} | {agents} | {len(rows)} | {_rate(rows, 'success')} "
            f"| {_rate(rows, 'feasible')} | {_median(r['messages'] for r in rows)} "
            f"| {_median(r['wire_bytes'] for r in rows)} | {sum(r.get('recipe_bytes', 0) for r in rows)} "
            f"| {sum(r['model_calls'] for r in rows)} "
            f"| {_median(r['duration_s'] for r in rows)} | {_ratio(rows)} |"
        )
    return lines


def _speedup(record: dict[str, Any]) -> float | None:
    """The chosen plan's simulated makespan over the best single-crafter plan's (below 1: the team is faster)."""
    planned, single = record.get("planned_makespan_s"), record.get("single_crafter_s")
    return planned / single if planned is not None and single else None


def _ratio(rows: list[dict[str, Any]]) -> str:
    ratios = [ratio for row in rows if (ratio := _speedup(row)) is not None]
    return f"{median(ratios):.2f}" if ratios else "–"


def _refused(records: list[dict[str, Any]]) -> list[str]:
    lines = ["## Refused as written", "", "| file | task | code | why |", "|---|---|---|---|"]
    for record in records:
        why = str(record["message"]).replace("|", "\\|")
        lines.append(f"| {Path(record['file']).name} | {record['task']} | {record['code']} | {why} |")
    return [*lines, ""]


def _goal(record: dict[str, Any]) -> str:
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


def _picture(record: dict[str, Any], run_dir: Path) -> list[str]:
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


def _trace(record: dict[str, Any], run_dir: Path) -> list[str]:
    verdict = "success" if record["success"] else f"{record['code']}: {record['message']}"
    lines = [
        f"### {record['task']} ({record['agents']} agents, {record['mode']}, {record['surface']}, {record['world']})",
        "",
        f"{_goal(record)} within {record['time_limit_s']:.0f} s. Lead: {record['lead']} ({record['backend']}). "
        f"{verdict}.",
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


def write_team_report(run_dir: Path) -> Path:
    every = sorted(read_team_records(run_dir), key=lambda r: (r["agents"], r["task"], r["mode"], r["surface"]))
    records = [record for record in every if not record.get("refused")]
    refused = [record for record in every if record.get("refused")]
    lines = [
        f"# Team tasks: {run_dir.name}",
        "",
        f"{len(records)} task runs. Success is each task's own test on the final world within its time limit; "
        "'judged feasible' is the team's verdict before any action. Peers answer by a deterministic rule from "
        "their own bag (zero model calls); the planner lead makes none either. Makespan / single crafter: the "
        "committed plan's simulated completion time over that of the fastest plan in which one agent makes "
        "every item, both from the true bags.",
        "",
        *_summary(records),
        "",
        *(_refused(refused) if refused else []),
        "## Traces",
        "",
    ]
    for record in records:
        lines += _trace(record, run_dir)
    path = run_dir / TEAM_REPORT
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
