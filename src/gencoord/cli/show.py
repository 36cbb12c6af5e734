"""A person-readable trace of one episode (``gencoord episode``), drawn with rich.

Everything in a record came from a model, a peer or a task file: it is shown as text,
never read as Rich markup (``escape`` or ``Text`` on every field).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

_MARK = {True: "[green]✓[/green]", False: "[red]✗[/red]", None: "[dim]–[/dim]"}


def _items(items: dict[str, int]) -> str:
    return ", ".join(f"{n} {item}" for item, n in sorted(items.items())) or "empty"


def show_episode(console: Console, record: dict[str, Any]) -> None:
    """Messages, commitment, each action with inventories, and the C/H/T/F/G verdict."""
    who = f"sender {record['sender']} → receiver {record['receiver']}"
    private = f"binding {record['binding']}" + (f", peer mode {record['mode']}" if record["mode"] else "")
    console.print(
        Panel(
            Text(
                f"{record['template']} · {private} · {who}\n"
                f"condition {record['condition']} · fault {record['fault']} · backends "
                + ", ".join(f"{a}: {b}" for a, b in record["backends"].items())
            ),
            title=escape(record["episode"]),
            expand=False,
        )
    )
    protocol = record["protocol"]
    for generation in protocol["generations"]:
        calls = generation["model_calls"]
        title = f"{generation['agent']} · {generation['stage']} · {calls} model call{'s' if calls != 1 else ''}"
        console.print(Panel(Text(generation["text"]), title=escape(title), expand=False), highlight=False)
    for message in protocol["messages"]:
        line = f"wire {message['kind']} {message['from']} → {message['to']}: {message['bytes']} B  {message['payload']}"
        console.print(Text(line))
    if "commitment" in protocol:
        commitment = protocol["commitment"]
        console.print(Text(f"commitment ({commitment['direction']}, binding {commitment['binding']})"))
        for handoff in commitment["handoffs"]:
            console.print(
                Text(f"  {handoff['giver']} hands {handoff['quantity']} {handoff['item']} to {handoff['receiver']}")
            )
        for agent, path in commitment["paths"].items():
            console.print(Text(f"  {agent}: {path}"))
    elif "error" in protocol:
        error = protocol["error"]
        console.print(Text(f"{error['code']} ({error['reason']}): {error['message']}", style="red"))
    if record["actions"]:
        console.print(_actions_table(record["actions"]))
    for handoff in record["handoffs"]:
        g, r = handoff["giver"], handoff["receiver"]
        console.print(
            Text(
                f"handoff {handoff['item']}: {g['agent']} {g['before']}→{g['after']}, "
                f"{r['agent']} {r['before']}→{r['after']} (expected +{handoff['quantity']})"
            )
        )
    outcome = record["outcome"]
    stages = "  ".join(f"{stage} {_MARK[outcome[stage]]}" for stage in ("C", "H", "T", "F", "G"))
    duration = "–" if outcome["duration_s"] is None else f"{outcome['duration_s']:.2f} s"
    console.print(
        f"{stages}   duration {duration}   V(30) {_MARK[outcome['V30']]}  V(60) {_MARK[outcome['V60']]}",
        highlight=False,
    )
    if outcome["failure"] or outcome["reason"]:
        console.print(Text(f"{outcome['failure'] or ''} {outcome['reason']}: {outcome['message']}", style="yellow"))
    console.print(Text("goal: " + "; ".join(record["goal"])))


def _actions_table(actions: list[dict[str, Any]]) -> Table:
    """Each executor action: when, who, what (with its failure), and every inventory after it."""
    table = Table(title=f"{len(actions)} executor actions (simulated seconds)")
    for column in ("#", "t", "agent", "action", "task", "inventories after"):
        table.add_column(column)
    for action in actions:
        args = " ".join(str(v) for k, v in action["args"].items() if v is not None and k != "target_kind")
        cell = Text(f"{action['action']} {args}")
        if not action["ok"]:
            cell.append(f"\n{action['failure']['code']}: {action['failure']['message']}", style="red")
        inventories = "\n".join(f"{a}: {_items(i)}" for a, i in action["inventories"].items())
        table.add_row(
            str(action["index"]),
            f"{action['start_s']:.2f}–{action['end_s']:.2f}",
            Text(action["agent"]),
            cell,
            Text(action["task"]),
            Text(inventories),
        )
    return table
