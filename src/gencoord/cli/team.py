"""``gencoord tasks ...``: team-task files (gencoord's own format or MINDcraft's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from gencoord.cli.common import app, command, console
from gencoord.planning.feasibility import diagnose
from gencoord.prior.load import default_prior
from gencoord.tasks.team_files import TaskFormat, load_team_tasks

tasks_app = typer.Typer(
    help="Team tasks: any number of agents, private inventories, a crafting goal.", no_args_is_help=True
)
app.add_typer(tasks_app, name="tasks")


@command(
    app=tasks_app,
    name="check",
    epilog="Example: gencoord tasks check my_tasks.toml mindcraft_tasks.json --jsonl",
)
def check(
    files: Annotated[list[Path], typer.Argument(help="Task files: gencoord TOML/JSON or MINDcraft JSON.")],
    fmt: Annotated[TaskFormat, typer.Option("--format", help="The files' format (auto: tell from the content).")] = (
        TaskFormat.AUTO
    ),
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON object per task on stdout, for scripts.")] = False,
) -> None:
    """Validate task files and say, before any action, whether each goal is reachable and why not.

    Exit 0 when every task was checked, whatever its verdict; 2 when a file does not load.
    """
    prior = default_prior()
    loaded = [(path, task) for path in files for task in load_team_tasks(path, fmt, prior)]
    out = console()
    table = Table("file", "task", "agents", "goal", "feasible", "why not / notes")
    for path, task in loaded:
        verdict = diagnose(task, prior)
        if jsonl:
            typer.echo(
                json.dumps(
                    {
                        "file": str(path),
                        "task": task.id,
                        "agents": len(task.agents),
                        "goal": {"item": task.goal.item, "count": task.goal.count, "holder": task.goal.holder},
                        "feasible": verdict.feasible,
                        "code": verdict.code,
                        "message": verdict.reason or None,
                        "notes": task.notes,
                    },
                    ensure_ascii=False,
                )
            )
            continue
        feasible = {True: "yes", False: "no", None: "undecided"}[verdict.feasible]
        why = "; ".join([verdict.reason, *task.notes] if verdict.reason else task.notes)
        table.add_row(
            *(
                Text(cell)
                for cell in (
                    path.name,
                    task.id,
                    str(len(task.agents)),
                    f"{task.goal.count} {task.goal.item}",
                    feasible,
                    why,
                )
            )
        )
    if not jsonl:
        out.print(table)
