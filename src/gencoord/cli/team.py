"""``gencoord tasks ...``: team-task files (gencoord's own format or MINDcraft's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from gencoord.backends.registry import team_backend
from gencoord.cli.common import app, command, console
from gencoord.cli.options import HostOption, OriginOption, PortOption, VersionOption, WorldKind, world_choice
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.team_report import TEAM_RECORDS, read_team_records, record_key, write_team_report
from gencoord.planning.feasibility import diagnose
from gencoord.prior.load import team_prior
from gencoord.run.team import TeamMode, run_team_task
from gencoord.run.team_record import SUMMARY_FIELDS, team_record
from gencoord.tasks.team_files import TaskFormat, load_team_tasks
from gencoord.worlds.choice import WorldChoice, executor_for

tasks_app = typer.Typer(
    help="Team tasks: any number of agents, private inventories, a crafting goal.", no_args_is_help=True
)
app.add_typer(tasks_app, name="tasks")

FilesArgument = Annotated[list[Path], typer.Argument(help="Task files: gencoord TOML/JSON or MINDcraft JSON.")]
FormatOption = Annotated[TaskFormat, typer.Option("--format", help="The files' format (auto: tell from the content).")]
JsonlOption = Annotated[bool, typer.Option("--jsonl", help="One JSON object per task on stdout, for scripts.")]


@command(
    app=tasks_app,
    name="check",
    epilog="Example: gencoord tasks check my_tasks.toml mindcraft_tasks.json --jsonl",
)
def check(
    files: FilesArgument,
    fmt: FormatOption = TaskFormat.AUTO,
    jsonl: JsonlOption = False,
) -> None:
    """Validate task files and say, before any action, whether each goal is reachable and why not.

    Exit 0 when every task was checked, whatever its verdict; 2 when a file does not load.
    """
    prior = team_prior()
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


_SURFACES = (SurfaceName.DSL, SurfaceName.FREEFORM)


@command(
    app=tasks_app,
    name="run",
    epilog="Example: gencoord tasks run my_tasks.toml mindcraft_tasks.json --out runs/team --jsonl",
)
def run_tasks(
    files: FilesArgument,
    fmt: FormatOption = TaskFormat.AUTO,
    world: Annotated[WorldKind, typer.Option(help="Where actions run: the embedded simulator, or real Minecraft.")] = (
        WorldKind.SIM
    ),
    backend: Annotated[
        str, typer.Option(help="Who leads: planner, model:<checkpoint>, constrained:<checkpoint>, api:<url>#<model>.")
    ] = "planner",
    mode: Annotated[
        TeamMode, typer.Option(help="private: bags stay private, supplies are asked; centralized: the reference.")
    ] = TeamMode.PRIVATE,
    surface: Annotated[
        SurfaceName, typer.Option(help="The wire form: the Short DSL, or controlled free-form sentences.")
    ] = SurfaceName.DSL,
    out: Annotated[Path, typer.Option(help="Run folder: records are appended there and the report written.")] = Path(
        "runs/team"
    ),
    jsonl: JsonlOption = False,
    host: HostOption = None,
    port: PortOption = 25565,
    mc_version: VersionOption = "1.21.4",
    origin: OriginOption = "0,0,0",
) -> None:
    """Coordinate every task of the files, execute and verify it, and write records and a report.

    Tasks already recorded in --out with the same settings are not run again (the run resumes).
    Exit 0 when every task ran, whatever its outcome; 2 on usage errors or a file that does not load.
    """
    if surface not in _SURFACES:
        raise ConfigError("BAD_SURFACE", f"team tasks speak dsl or freeform, not {surface.value}")
    prior = team_prior()
    loaded = [(path, task) for path in files for task in load_team_tasks(path, fmt, prior)]
    choice = world_choice(world, host, port, mc_version, origin) or WorldChoice()
    lead = team_backend(backend, prior)
    if out.exists() and not out.is_dir():
        raise ConfigError("BAD_OUT", f"--out {out} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    done = {record_key(record): record for record in read_team_records(out)}
    executor = executor_for(choice)
    err = console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=jsonl) as progress, (out / TEAM_RECORDS).open("a") as sink:
        bar = progress.add_task("team tasks", total=len(loaded))
        for path, task in loaded:
            key = (str(path), task.id, mode.value, surface.value, choice.kind, lead.name)
            record = done.get(key)
            if record is None:
                result = run_team_task(task, prior, mode=mode, surface=surface, lead_backend=lead, executor=executor)
                record = team_record(result, str(path), choice.kind)
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                sink.flush()
            if jsonl:
                typer.echo(json.dumps({field: record[field] for field in SUMMARY_FIELDS}, ensure_ascii=False))
            progress.advance(bar)
    report = write_team_report(out)
    if not jsonl:
        records = read_team_records(out)
        wins = sum(1 for r in records if r["success"])
        console().print(f"{wins}/{len(records)} team tasks succeeded · records {out / TEAM_RECORDS} · report {report}")
