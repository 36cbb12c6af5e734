"""``gencoord tasks ...``: team-task files (gencoord's own format or MINDcraft's)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from gencoord.cli.application import INTERRUPTED, ReadableGroup, Terminated, app, command, console, fail, stoppable
from gencoord.cli.experiments import report_of
from gencoord.cli.options import (
    ApiBudgetChargeOption,
    ApiBudgetTokensOption,
    HostOption,
    OriginOption,
    PortOption,
    RayAddressOption,
    RetriesOption,
    SchedulerOption,
    VersionOption,
    ViewOption,
    ViewPortOption,
    execution_of,
    world_choice,
)
from gencoord.errors import ConfigError
from gencoord.reasons import Reason
from gencoord.run.team_choices import TeamMode, TeamSurface
from gencoord.worlds.choice import DEFAULT_VIEW_PORT, WorldChoice

if TYPE_CHECKING:
    from gencoord.eval.experiment import RunPlan
    from gencoord.eval.runner import RunSummary
    from gencoord.prior.prior import Prior
    from gencoord.tasks.team_files import TaskFile

# The commands below import the planner, the worlds and the run engine when they run, not here: every other
# command, and --help, starts without them.

tasks_app = typer.Typer(
    cls=ReadableGroup,
    help="Team tasks: any number of agents, private inventories, a crafting goal or a blueprint.",
    no_args_is_help=True,
)
app.add_typer(tasks_app, name="tasks")

FilesArgument = Annotated[list[Path], typer.Argument(help="Task files: gencoord TOML/JSON or MINDcraft JSON.")]
FormatOption = Annotated[
    str | None,
    typer.Option(
        "--format",
        metavar="NAME",
        help="The files' format: gencoord, mindcraft, or an installed plugin's (default: tell from the content).",
    ),
]
JsonlOption = Annotated[bool, typer.Option("--jsonl", help="One JSON object per task on stdout, for scripts.")]


@command(
    app=tasks_app,
    name="check",
    epilog="Example: gencoord tasks check my_tasks.toml mindcraft_tasks.json --jsonl",
)
def check(
    files: FilesArgument,
    fmt: FormatOption = None,
    jsonl: JsonlOption = False,
    notes: Annotated[bool, typer.Option("--notes", help="Also each task's own notes, under its line.")] = False,
) -> None:
    """Validate task files and say, before any action, whether each goal is reachable and why not.

    One line per task, then a summary. A task that cannot be read as written is refused on
    its own line, with its code; the rest of its file is checked. Notes every task of a file
    shares are said once, under the file. Exit 0 when some task can run; 1 when none can; 2
    when a file cannot be read as a task file at all.
    """
    from gencoord.prior.load import team_prior  # noqa: PLC0415 - see the note on imports above
    from gencoord.tasks.team_files import AUTO, read_task_file  # noqa: PLC0415

    prior = team_prior()
    read = [read_task_file(path, fmt or AUTO, prior) for path in files]
    lines = [line for loaded in read for line in _checked(loaded, prior)]
    if jsonl:
        for line in lines:  # the goal as words is the terminal's; scripts read ``goal``
            typer.echo(json.dumps({k: v for k, v in line.items() if k != "describe"}, ensure_ascii=False))
    else:
        _show_checked(read, lines, notes)
    if not any(line["feasible"] is not False for line in lines):
        raise typer.Exit(1)


def _checked(loaded: TaskFile, prior: Prior) -> list[dict[str, Any]]:
    """The ``--jsonl`` line of every task of a file: refusals as written first, then each task judged."""
    from gencoord.run.kinds import task_kind  # noqa: PLC0415 - see the note on imports above
    from gencoord.run.team_record import goal_record  # noqa: PLC0415

    lines: list[dict[str, Any]] = [
        {"file": loaded.path, "task": refusal.task, "agents": 0, "goal": None, "feasible": False}
        | {"code": refusal.code, "message": refusal.message, "notes": []}
        for refusal in loaded.refused
    ]
    for task in loaded.tasks:
        verdict = task_kind(task).judge(task, prior)
        lines.append(
            {
                "file": loaded.path,
                "task": task.id,
                "agents": len(task.agents),
                "goal": goal_record(task),
                "feasible": verdict.feasible,
                "code": verdict.code,
                "message": verdict.reason or None,
                "notes": task.notes,
                "describe": task_kind(task).describe(task),
            }
        )
    return lines


def _show_checked(read: list[TaskFile], lines: list[dict[str, Any]], notes: bool) -> None:
    out = console()
    for loaded in read:
        mine = [line for line in lines if line["file"] == loaded.path]
        shared = [note for note in (mine[0]["notes"] if mine else []) if all(note in line["notes"] for line in mine)]
        out.print(Text(f"{loaded.path}: {len(mine)} tasks", style="bold"))
        for line in mine:
            said = {
                True: f"can run; {line['message']}" if line["message"] else "can run",
                False: f"refused {line['code']}: {line['message']}",
                None: "undecided",
            }
            agents = f"{line['agents']} agents" if line["agents"] else "–"
            goal = line.get("describe") or "–"
            out.print(Text(f"  {line['task']} · {agents} · {goal} · {said[line['feasible']]}"))
            if notes:
                for note in line["notes"]:
                    if note not in shared:
                        out.print(Text(f"      note: {note}", style="dim"))
        for note in shared:
            out.print(Text(f"  every task: {note}", style="dim"))
    can = sum(1 for line in lines if line["feasible"] is not False)
    codes = Counter(str(line["code"]) for line in lines if line["feasible"] is False)
    refused = ", ".join(f"{code} {count}" for code, count in codes.most_common())
    summary = f"{len(lines)} tasks in {len(read)} files: {can} can run"
    summary += f", {sum(codes.values())} refused ({refused})" if codes else ""
    out.print(Text(summary, style="bold"))


def _echo_summary(record: dict[str, Any]) -> None:
    from gencoord.run.team_record import SUMMARY_FIELDS  # noqa: PLC0415 - see the note on imports above

    typer.echo(json.dumps({field: record[field] for field in SUMMARY_FIELDS}, ensure_ascii=False))


@command(
    app=tasks_app,
    name="run",
    epilog="Example: gencoord tasks run my_tasks.toml mindcraft_tasks.json --out runs/team --jsonl",
)
def run_tasks(
    files: FilesArgument,
    fmt: FormatOption = None,
    world: Annotated[
        str,
        typer.Option(
            metavar="WORLD",
            help="Where actions run: sim (the embedded simulator), minecraft (real Minecraft), or an installed world.",
        ),
    ] = "sim",
    backend: Annotated[
        str,
        typer.Option(
            help="Who plays: a lead (planner, model:<checkpoint>, constrained:<checkpoint>, checked:<checkpoint>, "
            "api:<url>#<model>, served:<url>#<model>) with rule peers, or lead=<backend>,peers=<backend> (peers: "
            "rule, model:…, constrained:…, api:…, served:…). A checkpoint may be a fine-tuned pretrained model "
            "(gencoord finetune), e.g. lead=checked:CKPT,peers=constrained:CKPT.",
        ),
    ] = "planner",
    mode: Annotated[
        TeamMode, typer.Option(help="private: bags stay private, supplies are asked; centralized: the reference.")
    ] = TeamMode.PRIVATE,
    surface: Annotated[
        TeamSurface,
        typer.Option(help="The wire form: dsl, the Short DSL; freeform, controlled free-form sentences."),
    ] = TeamSurface.DSL,
    thinking: Annotated[
        str,
        typer.Option(
            metavar="none|measured|paper|SECONDS",
            help="How long writing a message keeps its writer from acting: none; measured (each backend's own "
            "time); paper (the GenCoord paper's TTC, 2.145 s a message); or seconds per message.",
        ),
    ] = "none",
    out: Annotated[
        Path | None,
        typer.Option(
            help="Run folder: records are appended there and the report written; naming an earlier run's folder "
            "resumes it (default: a fresh runs/tasks-<time> folder)."
        ),
    ] = None,
    jsonl: JsonlOption = False,
    host: HostOption = None,
    port: PortOption = 25565,
    mc_version: VersionOption = "1.21.4",
    origin: OriginOption = "0,0,0",
    view: ViewOption = False,
    view_port: ViewPortOption = DEFAULT_VIEW_PORT,
    workers: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Workers running tasks at once, 0 for one per core (default: one; on Ray, what the cluster holds).",
        ),
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option(
            "--task",
            "--match",
            metavar="ID|PATTERN",
            help="Run only tasks whose id is this or matches this shell pattern (repeatable): --match '*golden*'.",
        ),
    ] = None,
    repeats: Annotated[
        int, typer.Option(min=1, help="Run each task N times, each with its own random draws and record.")
    ] = 1,
    scheduler: SchedulerOption = None,
    ray_address: RayAddressOption = None,
    retries: RetriesOption = None,
    api_budget_tokens: ApiBudgetTokensOption = None,
    api_budget_charge: ApiBudgetChargeOption = None,
) -> None:
    """Coordinate every task of the files, execute and verify it, and write records and a report.

    Tasks already recorded in --out with the same settings, the same content and the same
    gencoord are not run again (the run resumes); a record made from another version of the
    task, or by another gencoord, is stale and the task runs again. A task its file cannot
    give as written gets a record with its code and message, and the run goes on.
    With several workers (or Ray) records arrive in the order tasks finish.
    Exit 0 when every task ran, whatever its outcome; 2 on usage errors or a file that cannot be read at all.
    """
    from gencoord.backends.families import parse_team_roles  # noqa: PLC0415
    from gencoord.eval.config import ExecutionSpec, checked_experiment  # noqa: PLC0415 - see the note above
    from gencoord.eval.experiment import plan_run  # noqa: PLC0415
    from gencoord.eval.kinds.team.kind import players_of  # noqa: PLC0415
    from gencoord.eval.runner import RECORDS, run_experiment  # noqa: PLC0415
    from gencoord.runtime.thinking import parse_thinking  # noqa: PLC0415
    from gencoord.tasks.team_files import AUTO  # noqa: PLC0415

    choice = world_choice(world, host, port, mc_version, origin, view, view_port) or WorldChoice()
    execution = execution_of(ExecutionSpec(), scheduler, ray_address, retries, api_budget_tokens, api_budget_charge)
    arguments = {
        "name": "tasks",
        "kind": "team",
        "tasks": [os.path.abspath(path) for path in files],  # the run resumes from any working folder
        "format": fmt or AUTO,
        "modes": [mode.value],
        "surfaces": [surface.value],
        "backends": [backend],
        "thinking": parse_thinking(thinking).model_dump(),
        "world": choice.model_dump(),
        "execution": execution.model_dump(),
        "match": task or [],
        "repeats": repeats,
    }
    config = checked_experiment(arguments, "gencoord tasks run")  # the team experiment these arguments describe
    players_of(parse_team_roles(backend))  # a bad backend fails here, before any task runs
    plan = plan_run(config)  # a file that cannot be read at all fails here
    out = _run_folder(plan, out)
    err = console(stderr=True)

    def echo(data: bytes) -> None:
        if jsonl:
            for line in data.splitlines():
                _echo_summary(json.loads(line))

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=jsonl) as progress:
        bar = progress.add_task("team tasks", total=len(plan.jobs))
        try:
            with stoppable():
                summary = run_experiment(
                    plan,
                    out,
                    workers if workers is not None or execution.scheduler == "ray" else 1,
                    lambda recorded, _failed: progress.update(bar, completed=recorded),
                    echo,
                )
        except KeyboardInterrupt as stop:
            why = "terminated" if isinstance(stop, Terminated) else "interrupted"
            fail(
                f"team tasks {why}; the workers are stopped and every finished task is kept in "
                f"{out / RECORDS}. Run the same command again to continue.",
                INTERRUPTED,
            )
    _told(out, summary, jsonl)


def _run_folder(plan: RunPlan, out: Path | None) -> Path:
    """The folder the run writes: a fresh one under ``runs/``, or the one named (resumed if it is this run's)."""
    from gencoord.eval.runner import MANIFEST, adopt_run, create_run  # noqa: PLC0415 - see the note above

    if out is None:
        return create_run(plan, Path("runs"))
    if out.exists() and not out.is_dir():
        raise ConfigError(Reason.BAD_OUT, f"--out {out} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    if (out / MANIFEST).exists():
        adopt_run(plan, out)  # another run's folder is refused here, before any progress is shown
    return out


def _told(out: Path, summary: RunSummary, jsonl: bool) -> None:
    """After the run: what reran as stale, the summary line and its report, and what lost its worker."""
    from gencoord.eval.ray_runner import FAILED  # noqa: PLC0415 - see the note above

    err = console(stderr=True)
    if summary.stale:
        err.print(Text(f"{summary.stale} recorded tasks are stale (their task or gencoord changed) and run again"))
    report = report_of(out)
    if not jsonl:
        console().print(Text(_said(out, summary) + f" · report {report.markdown}"))
    if summary.lost:
        err.print(
            Text(
                f"{summary.lost} tasks lost their worker on every try ({out / FAILED}); "
                "run the same command again to retry them",
                style="yellow",
            )
        )


def _said(out: Path, summary: RunSummary) -> str:
    """What the folder now holds, and what this command did to it (a resume may run nothing)."""
    from gencoord.eval.ray_runner import ray_line  # noqa: PLC0415 - see the note on imports above
    from gencoord.eval.runner import RECORDS, read_records, unique_records  # noqa: PLC0415
    from gencoord.run.team_record import FAILED, REFUSED, SUCCEEDED, task_verdict  # noqa: PLC0415

    records, _ = unique_records(read_records(out))
    verdicts = Counter(task_verdict(record) for record in records)
    counts = [f"{verdicts[SUCCEEDED]} succeeded", f"{verdicts[FAILED]} failed"]
    if verdicts[REFUSED]:
        counts.append(f"{verdicts[REFUSED]} refused before acting")
    if summary.total > len(records):
        counts.append(f"{summary.total - len(records)} not run")
    held = f"{len(records)} team tasks: " + ", ".join(counts)
    if summary.ran == 0:
        did = "nothing ran: every task was already recorded"
    else:
        did = f"ran {summary.ran}" + (f", {summary.already_done} already recorded" if summary.already_done else "")
    line = f"{held} · {did} · records {out / RECORDS}"
    return line + (f" · {ray_line(summary.ray)}" if summary.ray else "")
