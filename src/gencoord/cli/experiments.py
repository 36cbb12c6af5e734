"""``gencoord run`` and ``gencoord report``: experiments into run folders, and their reports."""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from gencoord._config import validation_message
from gencoord.cli.common import INTERRUPTED, UNAVAILABLE, USAGE, Terminated, command, console, fail, stoppable
from gencoord.cli.options import (
    Executor,
    ExecutorOption,
    HostOption,
    OriginOption,
    PortOption,
    RayAddressOption,
    RetriesOption,
    VersionOption,
    ViewOption,
    ViewPortOption,
    WorldOption,
    execution_of,
    world_choice,
)
from gencoord.errors import BackendError, ConfigError
from gencoord.eval.config import (
    CompositionExperimentConfig,
    Experiment,
    GateExperimentConfig,
    checked_experiment,
    find_experiment,
    load_experiment,
)
from gencoord.eval.jobs import expand
from gencoord.eval.ray_runner import FAILED, ray_line
from gencoord.eval.report import write_report
from gencoord.eval.runner import create_run, discard_run, read_manifest, run_experiment
from gencoord.planning.composition import CompositionMethod
from gencoord.worlds.choice import DEFAULT_VIEW_PORT, WorldChoice

"""Exit status after Ctrl-C or SIGTERM (the shell's 128 + SIGINT)."""


def _on_world(config: Experiment, world: WorldChoice) -> Experiment:
    return config.model_copy(update={"world": world})


def _with_backends(config: Experiment, backends: list[str]) -> Experiment:
    if isinstance(config, GateExperimentConfig):
        raise ConfigError("BACKEND_NOT_SUPPORTED", f"{config.name}: gate experiments have no backend sets")
    if isinstance(config, CompositionExperimentConfig):
        return _with_direct(config, backends)
    try:
        return type(config).model_validate({**config.model_dump(), "backends": backends})
    except ValidationError as exc:
        raise ConfigError("BAD_BACKEND", f"{config.name}: {validation_message(exc)}") from None


def _with_direct(config: CompositionExperimentConfig, backends: list[str]) -> CompositionExperimentConfig:
    """A composition run's --backend is its Direct Short DSL model (the other methods are rules)."""
    if len(backends) != 1:
        raise ConfigError(
            "BACKEND_NOT_SUPPORTED",
            f"{config.name}: a composition run takes one --backend, the Direct Short DSL model, not {len(backends)}",
        )
    direct = CompositionMethod.DIRECT_SHORT_DSL
    methods = config.methods if direct in config.methods else [*config.methods, direct]
    data = {**config.model_dump(mode="json"), "methods": methods, "direct": backends[0]}
    updated = checked_experiment(data, f"{config.name} with --backend {backends[0]}")
    assert isinstance(updated, CompositionExperimentConfig)  # the kind is the one dumped
    return updated


def _run_one(config: Experiment, run_dir: Path, workers: int | None, out: Console) -> None:
    total = len(expand(config))
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

        summary = run_experiment(config, run_dir, workers, update)
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


def _on_executor(config: Experiment, executor: Executor | None, address: str | None, retries: int | None) -> Experiment:
    execution = execution_of(config.execution, executor, address, retries)
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
    """(config, existing run folder or None for a new one) for each run the options ask for."""
    if resume is not None:
        if configs:
            raise ConfigError("RESUME_AND_CONFIG", "--resume takes the config from the run's manifest; pass no file")
        given = [
            name for name, value in (("--clusters", clusters), ("--backend", backend), ("--world", chosen)) if value
        ]
        if given:
            raise ConfigError(
                "RESUME_CHANGES_CONFIG",
                f"--resume continues the run exactly as it began; {', '.join(given)} would change its jobs. "
                "Start a new run with those options instead.",
            )
        config, _ = read_manifest(resume)
        return [(config, resume)]
    if not configs:
        raise ConfigError("NO_CONFIG", "give one or more experiment files (or shipped names), or --resume RUN_DIR")
    loaded = [load_experiment(find_experiment(name)) for name in configs]
    if chosen is not None:
        loaded = [_on_world(config, chosen) for config in loaded]
    if clusters is not None:
        loaded = [config.model_copy(update={"clusters": clusters}) for config in loaded]
    if backend:
        loaded = [_with_backends(config, backend) for config in loaded]
    for config in loaded:
        expand(config)  # every config must expand before the first run starts
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
    clusters: Annotated[int | None, typer.Option(min=2, help="Keep only the first N clusters (a reduced run).")] = None,
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
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
    retries: RetriesOption = None,
) -> None:
    """Run experiments into runs/<name>-<timestamp>/ (append-only records, resumable), then report."""
    chosen = world_choice(world, host, port, mc_version, origin, view, view_port)
    out_console = console()
    for planned, existing in _planned(configs, resume, clusters, backend, chosen):
        config = _on_executor(planned, executor, ray_address, retries)
        run_dir = existing or create_run(config, out)
        try:
            with stoppable():
                _run_one(config, run_dir, workers, out_console)
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
        if report:
            written = write_report(run_dir)
            out_console.print(Text(f"report: {written.markdown}  ·  {written.html}"))


@command(name="report", epilog="Example: gencoord report runs/request_intervention-20261130-120000")
def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (runs/<name>-<timestamp>).")],
) -> None:
    """Write report.md and report.html (tables, figures, trace viewer) for a run folder."""
    written = write_report(run_dir)
    out = console()
    for table in written.tables:
        rich_table = Table(title=Text(table.title))
        for column in table.columns:
            rich_table.add_column(Text(column))
        for row in table.rows:
            rich_table.add_row(*(Text(cell) for cell in row))
        out.print(rich_table)
    out.print(Text(f"report: {written.markdown}  ·  {written.html}"))
