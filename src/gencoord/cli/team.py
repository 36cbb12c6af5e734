"""``gencoord tasks ...``: team-task files (gencoord's own format or MINDcraft's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from gencoord import __version__
from gencoord.cli.common import INTERRUPTED, Terminated, app, command, console, fail, stoppable
from gencoord.cli.options import (
    ExecutorOption,
    HostOption,
    OriginOption,
    PortOption,
    RayAddressOption,
    RetriesOption,
    VersionOption,
    ViewOption,
    ViewPortOption,
    WorldKind,
    execution_of,
    world_choice,
)
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import ExecutionSpec
from gencoord.eval.kinds.team import team_lead
from gencoord.eval.ray_runner import FAILED, ray_line
from gencoord.eval.records import run_lock
from gencoord.eval.team_batch import TeamItem, TeamTaskWork, run_team_batch
from gencoord.eval.team_report import TEAM_RECORDS, read_team_records, record_key, write_team_report
from gencoord.prior.load import team_prior
from gencoord.run.kinds import kind_of
from gencoord.run.team import TeamMode
from gencoord.run.team_record import SUMMARY_FIELDS, goal_record, refusal_record, task_digest
from gencoord.tasks.team_files import AnyTask, Refusal, TaskFile, TaskFormat, read_task_file
from gencoord.worlds.choice import DEFAULT_VIEW_PORT, WorldChoice

tasks_app = typer.Typer(
    help="Team tasks: any number of agents, private inventories, a crafting goal or a blueprint.", no_args_is_help=True
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

    A task that cannot be read as written is refused on its own line, with its code; the
    rest of its file is checked. Exit 0 when every file was read, whatever the verdicts; 2
    when a file cannot be read as a task file at all.
    """
    prior = team_prior()
    read = [read_task_file(path, fmt, prior) for path in files]
    out = console()
    table = Table("file", "task", "agents", "goal", "feasible", "why not / notes")
    for refusal, source in ((refusal, loaded.path) for loaded in read for refusal in loaded.refused):
        if jsonl:
            row = {"file": source, "task": refusal.task, "agents": 0, "goal": None, "feasible": False}
            typer.echo(json.dumps({**row, "code": refusal.code, "message": refusal.message, "notes": []}))
        else:
            table.add_row(
                *(Text(cell) for cell in (Path(source).name, refusal.task, "–", "–", "refused", refusal.message))
            )
    for path, task in ((Path(loaded.path), task) for loaded in read for task in loaded.tasks):
        verdict = kind_of(task).judge(task, prior)
        if jsonl:
            typer.echo(
                json.dumps(
                    {
                        "file": str(path),
                        "task": task.id,
                        "agents": len(task.agents),
                        "goal": goal_record(task),
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
                    kind_of(task).describe(task),
                    feasible,
                    why,
                )
            )
        )
    if not jsonl:
        out.print(table)


_SURFACES = (SurfaceName.DSL, SurfaceName.FREEFORM)


def _echo_summary(record: dict[str, Any]) -> None:
    typer.echo(json.dumps({field: record[field] for field in SUMMARY_FIELDS}, ensure_ascii=False))


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
    view: ViewOption = False,
    view_port: ViewPortOption = DEFAULT_VIEW_PORT,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Workers running tasks at once (default: one here; on Ray, what the cluster holds)."),
    ] = None,
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
    retries: RetriesOption = None,
) -> None:
    """Coordinate every task of the files, execute and verify it, and write records and a report.

    Tasks already recorded in --out with the same settings, the same content and the same
    gencoord are not run again (the run resumes); a record made from another version of the
    task, or by another gencoord, is stale and the task runs again. A task its file cannot
    give as written gets a record with its code and message, and the run goes on.
    With several workers (or Ray) records arrive in the order tasks finish.
    Exit 0 when every task ran, whatever its outcome; 2 on usage errors or a file that cannot be read at all.
    """
    if surface not in _SURFACES:
        raise ConfigError("BAD_SURFACE", f"team tasks speak dsl or freeform, not {surface.value}")
    prior = team_prior()
    read = [read_task_file(path, fmt, prior) for path in files]
    choice = world_choice(world, host, port, mc_version, origin, view, view_port) or WorldChoice()
    execution = execution_of(ExecutionSpec(), executor, ray_address, retries)
    lead = team_lead(backend)  # a bad backend fails here, before any task runs
    if out.exists() and not out.is_dir():
        raise ConfigError("BAD_OUT", f"--out {out} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    err = console(stderr=True)
    with run_lock(out):
        done = {record_key(record): record for record in read_team_records(out, repair=True)}
        settings = (mode.value, surface.value, choice.kind, lead.name)
        todo, reused, refusals, stale = _resume(read, done, settings)
        if stale:
            err.print(Text(f"{stale} recorded tasks are stale (their task or gencoord changed) and run again"))
        if jsonl:
            for kept in reused:
                _echo_summary(kept)
        total = len(todo) + len(reused) + len(refusals)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        with Progress(*columns, console=err, transient=jsonl) as progress, (out / TEAM_RECORDS).open("ab") as records:
            bar = progress.add_task("team tasks", total=total, completed=len(reused))

            def append(data: bytes, count: int, failed: int) -> None:
                records.write(data)
                records.flush()
                if jsonl:
                    for line in data.splitlines():
                        _echo_summary(json.loads(line))
                progress.advance(bar, count)

            work = TeamTaskWork(mode, surface, backend, choice)
            try:
                with stoppable():
                    lost, ray_report = run_team_batch(work, todo, out, workers, execution, append)
                    if refusals:  # after every task, in a fresh run as in a resumed one
                        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in refusals)
                        append(lines.encode("utf-8"), len(refusals), len(refusals))
            except KeyboardInterrupt as stop:
                why = "terminated" if isinstance(stop, Terminated) else "interrupted"
                fail(
                    f"team tasks {why}; the workers are stopped and every finished task is kept in "
                    f"{out / TEAM_RECORDS}. Run the same command again to continue.",
                    INTERRUPTED,
                )
        report = write_team_report(out)
    if not jsonl:
        final = read_team_records(out)
        wins = sum(1 for r in final if r["success"])
        refused = sum(1 for r in final if r.get("refused"))
        counted = f"{wins}/{len(final)} team tasks succeeded" + (f" ({refused} refused as written)" if refused else "")
        summary = f"{counted} · records {out / TEAM_RECORDS} · report {report}"
        console().print(Text(summary + (f" · {ray_line(ray_report)}" if ray_report else "")))
    if lost:
        err.print(
            Text(
                f"{lost} tasks lost their worker on every try ({out / FAILED}); "
                "run the same command again to retry them",
                style="yellow",
            )
        )


def _resume(
    read: list[TaskFile], done: dict[tuple[str, ...], dict[str, Any]], settings: tuple[str, str, str, str]
) -> tuple[list[TeamItem], list[dict[str, Any]], list[dict[str, Any]], int]:
    """(tasks to run, records to reuse, refusals to record, stale records) for one run's settings.

    A record is reused only when it was made from the same task content by the same gencoord;
    refusals come after every task, in a fresh run as in a resumed one.
    """
    mode, surface, world, backend = settings
    entries: list[tuple[str, AnyTask | Refusal]] = [(f.path, task) for f in read for task in f.tasks]
    entries += [(f.path, refusal) for f in read for refusal in f.refused]
    todo: list[TeamItem] = []
    reused: list[dict[str, Any]] = []
    refusals: list[dict[str, Any]] = []
    stale = 0
    for source, entry in entries:
        ident = entry.task if isinstance(entry, Refusal) else entry.id
        record = done.get((source, ident, *settings))
        same = record is not None and record.get("task_sha256") == task_digest(entry)
        if same and record is not None and record.get("gencoord") == __version__:
            reused.append(record)
            continue
        stale += record is not None
        if not isinstance(entry, Refusal):
            todo.append(TeamItem(source, entry))
        else:
            refusals.append(refusal_record(entry, source, TeamMode(mode), surface, world, backend))
    return todo, reused, refusals, stale
