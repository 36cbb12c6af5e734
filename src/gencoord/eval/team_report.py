"""The report of a team-task run: outcomes by team size, traffic, and every task's n-agent trace.

Read back from the run folder's records (append-only), so a report can be rebuilt at
any time and a resumed run reports every task once. Rule peers and the planner make no
model calls; the report says which backend led each row.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from statistics import median
from typing import Any

TEAM_RECORDS = "team_records.jsonl"
TEAM_REPORT = "report.md"


def read_team_records(run_dir: Path) -> list[dict[str, Any]]:
    """Every record once (the last one recorded for a task, mode, surface and world)."""
    path = run_dir / TEAM_RECORDS
    if not path.exists():
        return []
    latest: dict[tuple[str, ...], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
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
        "| median wire bytes | model calls | median duration (s) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (backend, mode, surface, agents), rows in sorted(groups.items()):
        lines.append(
            f"| {backend} | {mode} | {surface} | {agents} | {len(rows)} | {_rate(rows, 'success')} "
            f"| {_rate(rows, 'feasible')} | {_median(r['messages'] for r in rows)} "
            f"| {_median(r['wire_bytes'] for r in rows)} | {sum(r['model_calls'] for r in rows)} "
            f"| {_median(r['duration_s'] for r in rows)} |"
        )
    return lines


def _trace(record: dict[str, Any]) -> list[str]:
    verdict = "success" if record["success"] else f"{record['code']}: {record['message']}"
    lines = [
        f"### {record['task']} ({record['agents']} agents, {record['mode']}, {record['surface']}, {record['world']})",
        "",
        f"Goal: {record['goal']['count']} {record['goal']['item']} held by {record['goal']['holder']} "
        f"within {record['time_limit_s']:.0f} s. Lead: {record['lead']} ({record['backend']}). {verdict}.",
        "",
    ]
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
    records = sorted(read_team_records(run_dir), key=lambda r: (r["agents"], r["task"], r["mode"], r["surface"]))
    lines = [
        f"# Team tasks: {run_dir.name}",
        "",
        f"{len(records)} task runs. Success is each task's own test on the final world within its time limit; "
        "'judged feasible' is the team's verdict before any action. Peers answer by a deterministic rule from "
        "their own bag (zero model calls); the planner lead makes none either.",
        "",
        *_summary(records),
        "",
        "## Traces",
        "",
    ]
    for record in records:
        lines += _trace(record)
    path = run_dir / TEAM_REPORT
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
