"""``gencoord run`` and ``gencoord report``: experiments into run folders, and their reports."""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from gencoord.cli.application import INTERRUPTED, UNAVAILABLE, USAGE, Terminated, command, console, fail, stoppable
from gencoord.cli.options import (
    ApiBudgetChargeOption,
    ApiBudgetTokensOption,
    HostOption,
    OriginOption,
    PortOption,
    RayAddressOption,
    RetriesOption,
    Scheduler,
    SchedulerOption,
    VersionOption,
    ViewOption,
    ViewPortOption,
    WorldOption,
    execution_of,
    world_choice,
)
from gencoord.errors import BackendError, ConfigError
from gencoord.eval.config import find_experiment, load_experiment
from gencoord.eval.experiment import Experiment, RunPlan, experiment_kind_of, plan_run
from gencoord.eval.ray_runner import FAILED, ray_line
from gencoord.eval.runner import (
    RECORDS,
    RunSummary,
    create_run,
    discard_run,
    goal_met,
    read_manifest,
    read_records,
    run_experiment,
    unique_records,
)
from gencoord.reasons import Reason
from gencoord.worlds.choice import DEFAULT_VIEW_PORT, WorldChoice

if TYPE_CHECKING:
    from gencoord.eval.report import Report
    from gencoord.eval.tables import Table as ReportTable

"""Exit status after Ctrl-C or SIGTERM (the shell's 128 + SIGINT)."""


def _with(config: Experiment, option: str, field: str, value: object) -> Experiment:
    """``config`` with one field set from a command-line option, if its kind's config has that field."""
    if not hasattr(config, field):
        raise ConfigError(Reason.OPTION_NOT_SUPPORTED, f"{config.name}: {config.kind} experiments take no {option}")
    changed: Experiment = config.model_copy(update={field: value})
    return changed


def _run_one(plan: RunPlan, run_dir: Path, workers: int | None, out: Console) -> RunSummary:
    config, total = plan.config, len(plan.jobs)
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]} eps/s"),
        TimeRemainingColumn(),
        TextColumn("[red]{task.fields[failed]} failed the goal (G ✗)"),
    )
    with Progress(*columns, console=out, transient=False) as progress:
        bar = progress.add_task(config.name, total=total, completed=0, rate="–", failed=0)
        started = time.perf_counter()
        first: list[int] = []  # records already there when the run (re)started

        def update(recorded: int, failed: int) -> None:
            if not first:
                first.append(recorded)
            rate = (recorded - first[0]) / max(time.perf_counter() - started, 1e-9)
            progress.update(bar, completed=recorded, rate=f"{rate:,.0f}", failed=failed)

        summary = run_experiment(plan, run_dir, workers, update)
    out.print(
        Text(
            f"{config.name}: {summary.ran} episodes in {summary.seconds:.1f} s"
            + (f" ({summary.already_done} were already done)" if summary.already_done else "")
            + f" → {run_dir / 'episodes.jsonl'}"
        )
    )
    if summary.ray is not None:
        out.print(Text(ray_line(summary.ray)))
    if summary.lost:
        out.print(
            Text(
                f"{summary.lost} jobs lost their worker on every try ({run_dir / FAILED}); "
                f"run them again with: {_resume_hint(run_dir)}",
                style="yellow",
            )
        )
    return summary


def report_of(run_dir: Path, out: Path | None = None) -> Report:
    """The run's report; its tables and figures (scipy, matplotlib) load only when a report is written."""
    from gencoord.eval.report import write_report  # noqa: PLC0415 - keeps every command's start-up light

    return write_report(run_dir, out)


def _where_it_went(finished: list[tuple[str, RunSummary, Path | None]], out: Console) -> None:
    """After several runs, one table: what each ran, what it found already done, and where its report is."""
    table = Table(title=Text("Where everything went"))
    columns = ("experiment", "episodes held", "ran now", "already recorded", "G ✗ (failed the goal)", "report")
    for column in columns:
        table.add_column(Text(column), justify="left" if column in ("experiment", "report") else "right")
    for name, summary, report in finished:
        records, _ = unique_records(read_records(summary.run_dir))
        failed = sum(1 for record in records if not goal_met(record))
        where = str(report) if report is not None else str(summary.run_dir / RECORDS)
        cells = (name, str(len(records)), str(summary.ran), str(summary.already_done), str(failed), where)
        table.add_row(*(Text(cell) for cell in cells))
    out.print(table)


def _on_scheduler(
    config: Experiment,
    scheduler: Scheduler | None,
    address: str | None,
    retries: int | None,
    budget: tuple[int | None, float | None] = (None, None),
) -> Experiment:
    execution = execution_of(config.execution, scheduler, address, retries, *budget)
    return config if execution is config.execution else config.model_copy(update={"execution": execution})


def _resume_hint(run_dir: Path) -> str:
    return f"gencoord run --resume {shlex.quote(str(run_dir))}"


def _planned(
    configs: list[str] | None,
    resume: Path | None,
    clusters: int | None,
    backend: list[str] | None,
    chosen: WorldChoice | None,
) -> list[tuple[Experiment, Path | None]]:
    """(config, existing run folder or None for a new one) for each run the options ask for.

    Every config is planned before the first run starts, so a bad one fails before any runs.
    """
    if resume is not None:
        if configs:
            raise ConfigError(
                Reason.RESUME_AND_CONFIG, "--resume takes the config from the run's manifest; pass no file"
            )
        given = [
            name for name, value in (("--clusters", clusters), ("--backend", backend), ("--world", chosen)) if value
        ]
        if given:
            raise ConfigError(
                Reason.RESUME_CHANGES_CONFIG,
                f"--resume continues the run exactly as it began; {', '.join(given)} would change its jobs. "
                "Start a new run with those options instead.",
            )
        config, _ = read_manifest(resume)
        return [(config, resume)]
    if not configs:
        raise ConfigError(Reason.NO_CONFIG, "give one or more experiment files (or shipped names), or --resume RUN_DIR")
    loaded = [load_experiment(find_experiment(name)) for name in configs]
    if chosen is not None:
        loaded = [_with(config, "--world", "world", chosen) for config in loaded]
    if clusters is not None:
        loaded = [_with(config, "--clusters", "clusters", clusters) for config in loaded]
    if backend:
        loaded = [experiment_kind_of(config).with_backends(config, backend) for config in loaded]
    return [(config, None) for config in loaded]


@command(
    epilog="Examples: gencoord run request_intervention --clusters 4 · gencoord run my.toml --workers 2 · "
    "gencoord run --resume runs/request_intervention-20261130-120000"
)
def run(
    configs: Annotated[
        list[str] | None,
        typer.Argument(help="Experiment TOML files, or names of shipped ones (e.g. request_intervention)."),
    ] = None,
    resume: Annotated[
        Path | None, typer.Option(help="Continue this run folder; its manifest holds the config.")
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Worker processes (default: the config's, or one per core).")
    ] = None,
    clusters: Annotated[
        int | None,
        typer.Option(
            min=2,
            help="Keep only the first N clusters, the units a report's statistics count (a pair-episode cluster, "
            "a gate instance, a team task): a reduced run.",
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Parent folder for new runs (default: the config's output).")] = None,
    report: Annotated[bool, typer.Option(help="Write report.md and report.html when a run completes.")] = True,
    backend: Annotated[
        list[str] | None,
        typer.Option(
            help="Backend set(s) instead of the config's: rule, model:<checkpoint>, constrained:<checkpoint>, "
            "api:<url>#<model>, selector:<name>. Repeat for several."
        ),
    ] = None,
    world: WorldOption = None,
    host: HostOption = None,
    port: PortOption = 25565,
    mc_version: VersionOption = "1.21.4",
    origin: OriginOption = "0,0,0",
    view: ViewOption = False,
    view_port: ViewPortOption = DEFAULT_VIEW_PORT,
    scheduler: SchedulerOption = None,
    ray_address: RayAddressOption = None,
    retries: RetriesOption = None,
    api_budget_tokens: ApiBudgetTokensOption = None,
    api_budget_charge: ApiBudgetChargeOption = None,
) -> None:
    """Run experiments into runs/<name>-<timestamp>/ (append-only records, resumable), then report."""
    chosen = world_choice(world, host, port, mc_version, origin, view, view_port)
    out_console = console()
    budget = (api_budget_tokens, api_budget_charge)
    plans = [
        (plan_run(_on_scheduler(config, scheduler, ray_address, retries, budget)), existing)
        for config, existing in _planned(configs, resume, clusters, backend, chosen)
    ]
    finished: list[tuple[str, RunSummary, Path | None]] = []
    for plan, existing in plans:
        config = plan.config
        run_dir = existing or create_run(plan, out)
        try:
            with stoppable():
                summary = _run_one(plan, run_dir, workers, out_console)
        except KeyboardInterrupt as stop:
            if existing is None:
                discard_run(run_dir)
            why = "terminated" if isinstance(stop, Terminated) else "interrupted"
            kept = run_dir.exists()
            fail(
                f"{config.name}: {why}; the workers are stopped"
                + (f" and every finished episode is kept. Continue with: {_resume_hint(run_dir)}" if kept else ""),
                INTERRUPTED,
            )
        except BackendError as error:  # the records so far are kept: fix the backend, then resume
            if existing is None:
                discard_run(run_dir)
            resumable = f" Once it is back: {_resume_hint(run_dir)}" if run_dir.exists() else ""
            fail(f"{error}.{resumable}", UNAVAILABLE)
        except (ConfigError, OSError) as error:
            if existing is None:
                discard_run(run_dir)
            fail(error if isinstance(error, ConfigError) else f"{config.name}: {error}", USAGE)
        written = report_of(run_dir) if report else None
        if written is not None:
            if written.headline is not None:
                out_console.print(rich_table(written.headline, caption=False))
            out_console.print(Text(f"report: {written.markdown}  ·  {written.html}"))
        finished.append((config.name, summary, None if written is None else written.html))
    if len(finished) > 1:
        _where_it_went(finished, out_console)


@command(
    name="report",
    epilog="Examples: gencoord report runs/request_intervention-20261130-120000\n\n"
    "gencoord report /mnt/shared/team_tasks-20261130-120000 --out reports/team_tasks",
)
def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (runs/<name>-<timestamp>), wherever it now is.")],
    out: Annotated[
        Path | None,
        typer.Option(help="Write the report here instead of into the run folder (for a read-only or shared run)."),
    ] = None,
) -> None:
    """Write report.md and report.html (tables, figures, trace viewer) for a run folder, and print its headline."""
    written = report_of(run_dir, out)
    console_out = console()
    if written.headline is not None:
        console_out.print(rich_table(written.headline))
    details = ", ".join(table.title for table in written.tables)
    if details:
        console_out.print(Text(f"detail tables in the report: {details}", style="dim"))
    console_out.print(Text(f"report: {written.markdown}  ·  {written.html}"))


def rich_table(table: ReportTable, caption: bool = True) -> Table:
    """A report table for the terminal, with its caption under it (or without, among several runs' tables)."""
    shown = Table(title=Text(table.title), caption=Text(table.caption) if caption else None, caption_justify="left")
    for column, text in zip(table.columns, table.text_columns(), strict=True):
        shown.add_column(Text(column), justify="left" if text else "right")
    for row in table.rows:
        shown.add_row(*(Text(cell) for cell in row))
    return shown
