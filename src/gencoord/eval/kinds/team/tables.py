"""Tables of a team experiment: success by team size with exact intervals, traffic by surface, privacy's cost.

Rows are computed from the records alone. Success is the task's own test; a row's 95%
interval is Clopper–Pearson over its tasks (tasks are independent draws, so there is no
cluster structure to bootstrap). Bytes and messages compare surfaces and information
modes on identical tasks: a ratio is taken over the tasks both rows ran.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import median
from typing import Any

from gencoord.backends.families import recorded_label
from gencoord.eval.stats import clopper_pearson
from gencoord.eval.tables import Table, counted
from gencoord.run.team_record import REFUSED, task_verdict

Record = Mapping[str, Any]


def _pct(successes: int, trials: int) -> str:
    estimate = clopper_pearson(successes, trials)
    return f"{100 * estimate.value:.1f} [{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]"


def _success(records: Sequence[Record]) -> Table:
    groups: dict[tuple[str, str, str, int], list[Record]] = defaultdict(list)
    for record in records:
        groups[(_lead(record), record["mode"], record["surface"], record["agents"])].append(record)
    table = Table(
        "team_success",
        "Team tasks: success and feasibility by team size",
        [
            "who plays",
            "information",
            "surface",
            "agents",
            "tasks",
            "success % [95% CI]",
            "judged feasible",
            "median s",
            "recipe bytes",
            "model calls",
            "median makespan / single crafter",
        ],
        caption="Success: the task's own test on the final world within its time limit. Judged feasible: the team's "
        "verdict before any action. Exact (Clopper–Pearson) intervals over tasks. Who plays: the lead's backend, and "
        "the peers' where they are not the truthful rule (which answers from its own bag with zero model calls, as "
        "the planner lead writes with none). Makespan / single crafter: "
        "the committed plan's simulated completion time over that of the fastest plan in which one agent makes "
        "every item, both from the true bags (below 1: the team is faster).",
    )
    for (backend, mode, surface, agents), rows in sorted(groups.items()):
        wins = sum(1 for row in rows if row["success"])
        durations = [row["duration_s"] for row in rows if row["duration_s"] is not None]
        table.rows.append(
            [
                backend,
                mode,
                surface,
                str(agents),
                str(len(rows)),
                _pct(wins, len(rows)),
                f"{sum(1 for row in rows if row['feasible'])}/{len(rows)}",
                f"{median(durations):.1f}" if durations else "–",
                str(sum(row.get("recipe_bytes", 0) for row in rows)),
                str(sum(row["model_calls"] for row in rows)),
                _makespan_ratio(rows),
            ]
        )
    return table


def _lead(record: Record) -> str:
    return recorded_label(str(record["backend"]))


def _headline(records: Sequence[Record], refused: int) -> Table:
    """Success by setting (who plays, information, surface) against team size: the whole run on one screen."""
    sizes = sorted({int(record["agents"]) for record in records})
    groups: dict[tuple[str, str, str], list[Record]] = defaultdict(list)
    for record in records:
        groups[(_lead(record), record["mode"], record["surface"])].append(record)
    failed = sum(1 for record in records if not record["success"])
    outcome = (
        f"All {len(records)} tasks that acted succeeded."
        if not failed
        else f"{len(records) - failed} tasks succeeded and {failed} failed (why is tabled below)."
    )
    if refused:
        outcome += (
            f" {refused} more {'was' if refused == 1 else 'were'} refused before acting, each with its reason (tabled "
            "below): in no cell and no rate here."
        )
    table = Table(
        "team_headline",
        "Headline: team-task success by setting and team size",
        [
            "who plays · information · surface",
            *[counted(size, "agent") for size in sizes],
            "tasks",
            "success",
            "95% CI",
        ],
        caption=f"{outcome} Cells: tasks that succeeded of those that acted at that team size. Success is the "
        "task's own test on the final world within its time limit, with an exact (Clopper–Pearson) interval over "
        "tasks. No paper reports these tasks, so there is no paper column.",
    )
    for (lead, mode, surface), rows in sorted(groups.items()):
        cells = []
        for size in sizes:
            at = [row for row in rows if int(row["agents"]) == size]
            cells.append(f"{sum(1 for row in at if row['success'])}/{len(at)}" if at else "–")
        wins = sum(1 for row in rows if row["success"])
        estimate = clopper_pearson(wins, len(rows))
        table.rows.append(
            [
                f"{lead} · {mode} · {surface}",
                *cells,
                str(len(rows)),
                f"{100 * estimate.value:.1f}%",
                f"[{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]",
            ]
        )
    return table


def _makespan_ratio(rows: Sequence[Record]) -> str:
    """The median over tasks of the chosen plan's simulated makespan over the best single-crafter plan's."""
    ratios = [
        planned / single
        for row in rows
        if (planned := row.get("planned_makespan_s")) is not None and (single := row.get("single_crafter_s"))
    ]
    return f"{median(ratios):.2f}" if ratios else "–"


def _traffic(records: Sequence[Record]) -> Table:
    by_setting: dict[tuple[str, str, str], dict[str, Record]] = defaultdict(dict)
    for record in records:
        by_setting[(_lead(record), record["mode"], record["surface"])][f"{record['file']}:{record['task']}"] = record
    table = Table(
        "team_traffic",
        "Team tasks: coordination traffic on identical tasks",
        [
            "who plays",
            "information",
            "surface",
            "tasks",
            "messages (median)",
            "wire bytes (median)",
            "bytes vs DSL, private",
        ],
        caption="The last column is this row's total bytes over the private DSL row's, on the tasks both ran: "
        "free-form against DSL is the surface's cost, centralized against private is the cost of privacy.",
    )
    for (backend, mode, surface), tasks in sorted(by_setting.items()):
        base = by_setting.get((backend, "private", "dsl"), {})
        shared = [key for key in tasks if key in base]
        ours = sum(tasks[key]["wire_bytes"] for key in shared)
        theirs = sum(base[key]["wire_bytes"] for key in shared)
        ratio = f"{ours / theirs:.2f}" if shared and theirs else "–"
        table.rows.append(
            [
                backend,
                mode,
                surface,
                str(len(tasks)),
                f"{median(r['messages'] for r in tasks.values()):.0f}",
                f"{median(r['wire_bytes'] for r in tasks.values()):.0f}",
                ratio,
            ]
        )
    return table


def _messages(records: Sequence[Record]) -> Table:
    """What the messages cost by who wrote them: calls, tokens, parse failures, and their time in the world."""
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for record in records:
        groups[(_lead(record), record["surface"])].append(record)
    table = Table(
        "team_messages",
        "Team tasks: what writing the messages cost",
        ["who plays", "surface", "tasks", "model calls/task", "tokens/task", "parse failures", "thinking s/task"],
        caption="Model calls and tokens count every message a model wrote, lead's and peers'. Parse failures: tasks "
        "whose exchange stopped on a message its reader could not parse (PARSE_FAILURE). Thinking: the world time "
        "the exchange took to write, which every agent waited before acting (0 when no thinking is configured).",
    )
    for (who, surface), rows in sorted(groups.items()):
        tokens = [int(row["tokens"]) for row in rows if row.get("tokens") is not None]
        table.rows.append(
            [
                who,
                surface,
                str(len(rows)),
                f"{sum(row['model_calls'] for row in rows) / len(rows):.2f}",
                f"{sum(tokens) / len(rows):.0f}" if tokens else "–",
                str(sum(1 for row in rows if row.get("failure") == "PARSE_FAILURE")),
                f"{sum(row.get('thinking_s', 0.0) for row in rows) / len(rows):.2f}",
            ]
        )
    return table


def _failures(records: Sequence[Record]) -> Table:
    codes: dict[str, int] = defaultdict(int)
    for record in records:
        if not record["success"]:
            codes[str(record["code"])] += 1
    table = Table("team_failures", "Team tasks: why tasks did not succeed", ["code", "tasks"])
    table.rows = [[code, str(count)] for code, count in sorted(codes.items(), key=lambda item: -item[1])]
    return table


def _axes(records: Sequence[Record]) -> Table | None:
    """Success by what MINDcraft's generators vary (plan availability, depth, blocked actions, cooking
    variant, dishes, levels), each axis on its own rows: the breakdown its papers report."""
    table = Table(
        "team_axes",
        "Team tasks: success by what MINDcraft varies",
        ["axis", "value", "tasks", "succeeded", "success"],
        caption="Tasks that acted, by each axis on its own. The planner plans with full recipe knowledge whatever "
        "the plan availability: its rows are an upper bound for agents that must be told a recipe or find one.",
    )
    values: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for record in records:
        for axis, value in (record.get("axes") or {}).items():
            values[(axis, str(value))].append(record)
    for (axis, value), rows in sorted(values.items()):
        wins = sum(1 for row in rows if row["success"])
        table.rows.append([axis, value, str(len(rows)), str(wins), _pct(wins, len(rows))])
    return table if table.rows else None


def _refused(records: Sequence[Record]) -> Table:
    table = Table(
        "team_refused",
        "Refused before acting",
        ["file", "task", "code", "why"],
        caption="Tasks refused before any action, each alone while the rest of its file ran: unreadable as written, "
        "or a goal out of the team's reach, with the reason.",
    )
    table.rows = [[Path(str(r["file"])).name, str(r["task"]), str(r["code"]), str(r["message"])] for r in records]
    return table


def team_tables(records: Sequence[Record]) -> tuple[Table | None, list[Table]]:
    """The headline and the detail tables of a team run. Each task counts under its one verdict: those refused
    before acting get a table of their own and count nowhere else; a task an outage kept from running has no
    record (the report says how many of the planned tasks are recorded)."""
    ran = [record for record in records if task_verdict(record) != REFUSED]
    refused = [record for record in records if task_verdict(record) == REFUSED]
    tables = [_success(ran), _traffic(ran)] if ran else []
    axes = _axes(ran)
    if axes is not None:
        tables.append(axes)
    if any(record["model_calls"] or record.get("thinking_s") for record in ran):
        tables.append(_messages(ran))
    if any(not record["success"] for record in ran):
        tables.append(_failures(ran))
    headline = _headline(ran, len(refused)) if ran else None
    return headline, [*tables, *([_refused(refused)] if refused else [])]
