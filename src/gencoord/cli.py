"""The ``gencoord`` command line."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from gencoord.backends.context import PriorView
from gencoord.backends.registry import backend_set
from gencoord.demo import run_demo
from gencoord.dsl.ast import Proposal
from gencoord.dsl.json_surface import parse_json, serialize_json
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import BackendError, ConfigError, GencoordError, PriorError, WorldError
from gencoord.eval.config import Experiment, ExperimentConfig, load_experiment
from gencoord.eval.jobs import expand
from gencoord.eval.report import write_report
from gencoord.eval.runner import create_run, read_manifest, run_experiment
from gencoord.prior.contract import check_proposal
from gencoord.prior.load import default_prior, load_prior
from gencoord.prior.prior import Prior
from gencoord.run.episode import Condition, run_episode
from gencoord.run.faults import Fault
from gencoord.run.record import episode_record
from gencoord.run.show import show_episode
from gencoord.tasks.cluster import make_cluster, paper_pool
from gencoord.tasks.episode import build_episode
from gencoord.tasks.spec import default_suites
from gencoord.train.data import Horizon, RowSpec, Target, build_rows, write_rows
from gencoord.worlds.choice import WorldChoice, executor_for

if TYPE_CHECKING:
    from gencoord.train.common import TrainReport

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Executable skill-path commitments (GenCoord).")


class WorldKind(StrEnum):
    SIM = "sim"
    MINECRAFT = "minecraft"


WorldOption = Annotated[
    WorldKind | None, typer.Option(help="Where actions run: the embedded simulator, or real Minecraft.")
]
HostOption = Annotated[
    str | None, typer.Option(help="Minecraft: a server you run (default: start our embedded server).")
]
PortOption = Annotated[int, typer.Option(min=1, max=65535, help="Minecraft: the port of --host.")]
VersionOption = Annotated[str, typer.Option("--mc-version", help="Minecraft: the game version of --host.")]
OriginOption = Annotated[
    str, typer.Option(help="Minecraft: x,y,z of the task data's origin in that world (a flat, empty area).")
]


def _world_choice(
    world: WorldKind | None, host: str | None, port: int, version: str, origin: str
) -> WorldChoice | None:
    """The world the options ask for; None when they leave it to the config."""
    if world is None:
        if host is not None:
            raise ConfigError("HOST_WITHOUT_WORLD", "--host names a Minecraft server: add --world minecraft")
        return None
    try:
        x, y, z = (int(part) for part in origin.split(","))
    except ValueError:
        raise ConfigError("BAD_ORIGIN", f"--origin must be three integers x,y,z, not {origin!r}") from None
    return WorldChoice(kind=world.value, host=host, port=port, version=version, origin=(x, y, z))


class Surface(StrEnum):
    dsl = "dsl"
    json = "json"
    freeform = "freeform"


def _load(prior_file: Path | None) -> Prior:
    try:
        return load_prior(prior_file)
    except PriorError as exc:
        Console(stderr=True).print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None


def _read(source: str) -> bytes:
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        Console(stderr=True).print(f"[red]cannot read {source!r}: {exc.strerror}[/red]", highlight=False)
        raise typer.Exit(2) from None


def _speaker(proposal: Proposal, prior: Prior, agent: str | None) -> str:
    """The sender: as given, else the first agent of the episode that the message does not address."""
    if agent is not None:
        return agent
    addressed = {request.target for request in proposal.peer_requests}
    agents = prior.default_episode.agents
    return next((a for a in agents if a not in addressed), agents[0])


@app.command()
def parse(
    source: Annotated[str, typer.Argument(help="A file holding one message, or - for standard input.")] = "-",
    surface: Annotated[Surface, typer.Option(help="The message's surface.")] = Surface.dsl,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
    prior_file: Annotated[
        Path | None, typer.Option("--prior", help="A prior TOML file (default: the packaged prior).")
    ] = None,
    agent: Annotated[str | None, typer.Option(help="The sending agent (default: the first one not addressed).")] = None,
    template: Annotated[str | None, typer.Option(help="Restrict bindings to this template's branches.")] = None,
) -> None:
    """Parse and contract-check one SELF+REQ message; exit 0 when legal, 1 when not, 2 on usage errors."""
    prior = _load(prior_file)
    if template is not None and template not in prior.templates:
        Console(stderr=True).print(f"[red]unknown template {template!r}[/red]", highlight=False)
        raise typer.Exit(2)
    message = _read(source)
    try:
        proposal = parse_json(message, prior.vocab) if surface is Surface.json else prior.parse(message)
        check_proposal(proposal, _speaker(proposal, prior, agent), prior, prior.episode(template))
        canonical = serialize_json(proposal, prior.vocab) if surface is Surface.json else prior.serialize(proposal)
    except GencoordError as exc:
        if as_json:
            typer.echo(json.dumps(exc.as_dict(), ensure_ascii=True))
        else:
            Console(stderr=True).print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(1) from None
    typer.echo(json.dumps({"ok": True, "canonical": canonical}) if as_json else canonical)


@app.command()
def episode(
    template: Annotated[str, typer.Option(help="A forward template, or a Goal×Capability goal (GC_…).")],
    binding: Annotated[
        str | None, typer.Option(help="Forward: the sender's private binding (default: the first).")
    ] = None,
    mode: Annotated[
        str | None, typer.Option(help="Goal×Capability: the peer's workcell mode (default: the first).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Draws the world variant; seeds the backends.")] = 0,
    role: Annotated[int, typer.Option(min=0, max=1, help="Role permutation: 0 = agent_a sends, 1 = agent_b.")] = 0,
    params: Annotated[int, typer.Option(min=0, help="Which of the template's parameter sets to use.")] = 0,
    condition: Annotated[Condition | None, typer.Option(help="What crosses the boundary (default per suite).")] = None,
    fault: Annotated[Fault, typer.Option(help="A controlled fault to inject (v2 Table S46).")] = Fault.CLEAN,
    surface: Annotated[Surface, typer.Option(help="The wire form: one record (dsl, json) or a dialogue.")] = (
        Surface.dsl
    ),
    backend: Annotated[
        str, typer.Option(help="Who writes: rule, model:<checkpoint>, constrained:<checkpoint>, api:<url>#<model>.")
    ] = "rule",
    as_json: Annotated[bool, typer.Option("--json", help="Print the episode record as one JSON object.")] = False,
    world: WorldOption = None,
    host: HostOption = None,
    port: PortOption = 25565,
    mc_version: VersionOption = "1.21.4",
    origin: OriginOption = "0,0,0",
) -> None:
    """Run one episode end to end (embedded simulator by default, or real Minecraft) and show its trace."""
    prior = default_prior()
    suites = default_suites()
    forward = suites.forward.templates.get(template)
    choice = binding if forward is not None else mode
    if choice is None:
        choice = sorted(forward.goals)[0] if forward is not None else sorted(suites.goal_capability.modes)[0]
    try:
        cluster = make_cluster(template, choice, seed, param_choice=params, suites=suites)
        spec = build_episode(cluster, role, seed, prior, suites, SurfaceName(surface.value))
        team = backend_set(backend)(spec, condition is Condition.NO_REQUEST, prior, suites)
        executor = executor_for(_world_choice(world, host, port, mc_version, origin) or WorldChoice())
        result = run_episode(spec, condition, fault=fault, backends=team, executor=executor, prior=prior, suites=suites)
    except ConfigError as exc:
        Console(stderr=True).print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None
    except WorldError as exc:  # the world could not start at all (no Node, no server to reach)
        Console(stderr=True).print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(3) from None
    record = episode_record(result)
    if as_json:
        typer.echo(json.dumps(record, ensure_ascii=False))
    else:
        show_episode(Console(), record)
    raise typer.Exit(0 if result.outcome.success else 1)


def _on_world(config: Experiment, world: WorldChoice) -> Experiment:
    if not isinstance(config, ExperimentConfig):
        if world.kind == "sim":
            return config
        raise ConfigError("WORLD_NOT_SUPPORTED", f"{config.name}: gate experiments run on the simulator only")
    return config.model_copy(update={"world": world})


def _with_backends(config: Experiment, backends: list[str]) -> Experiment:
    if not isinstance(config, ExperimentConfig):
        raise ConfigError("BACKEND_NOT_SUPPORTED", f"{config.name}: gate experiments have no backend sets")
    try:
        return ExperimentConfig.model_validate({**config.model_dump(), "backends": backends})
    except ValidationError as exc:
        raise ConfigError("BAD_BACKEND", f"{config.name}: {exc.errors()[0]['msg']}") from None


def _fail_config(exc: GencoordError) -> typer.Exit:
    Console(stderr=True).print(f"[red]{exc}[/red]", highlight=False)
    return typer.Exit(2)


def _run_one(config: Experiment, run_dir: Path, workers: int | None, console: Console) -> None:
    total = len(expand(config))
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]} eps/s"),
        TimeRemainingColumn(),
        TextColumn("[red]{task.fields[failed]} G✗"),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task(config.name, total=total, completed=0, rate="–", failed=0)
        started = time.perf_counter()
        first: list[int] = []  # records already there when the run (re)started

        def update(recorded: int, failed: int) -> None:
            if not first:
                first.append(recorded)
            rate = (recorded - first[0]) / max(time.perf_counter() - started, 1e-9)
            progress.update(bar, completed=recorded, rate=f"{rate:,.0f}", failed=failed)

        summary = run_experiment(config, run_dir, workers, update)
    console.print(
        f"{config.name}: {summary.ran} episodes in {summary.seconds:.1f} s"
        + (f" ({summary.already_done} were already done)" if summary.already_done else "")
        + f" → {run_dir / 'episodes.jsonl'}",
        highlight=False,
    )


@app.command()
def run(
    configs: Annotated[list[Path] | None, typer.Argument(help="Experiment TOML files (see experiments/).")] = None,
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
) -> None:
    """Run experiments into runs/<name>-<timestamp>/ (append-only records, resumable), then report."""
    console = Console()
    try:
        chosen = _world_choice(world, host, port, mc_version, origin)
        if resume is not None:
            if configs:
                raise ConfigError(
                    "RESUME_AND_CONFIG", "--resume takes the config from the run's manifest; pass no file"
                )
            config, _ = read_manifest(resume)
            planned = [(config, resume)]
        elif not configs:
            raise ConfigError("NO_CONFIG", "give one or more experiment files, or --resume RUN_DIR")
        else:
            loaded = [load_experiment(path) for path in configs]
            if chosen is not None:
                loaded = [_on_world(config, chosen) for config in loaded]
            if clusters is not None:
                loaded = [config.model_copy(update={"clusters": clusters}) for config in loaded]
            if backend:
                loaded = [_with_backends(config, backend) for config in loaded]
            planned = [(config, create_run(config, out)) for config in loaded]
        for config, run_dir in planned:
            _run_one(config, run_dir, workers, console)
            if report:
                written = write_report(run_dir)
                console.print(f"report: {written.markdown}  ·  {written.html}", highlight=False)
    except ConfigError as exc:
        raise _fail_config(exc) from None
    except BackendError as exc:  # the records so far are kept: fix the backend, then --resume
        Console(stderr=True).print(f"[red]{exc}[/red] (resume with --resume once it is back)", highlight=False)
        raise typer.Exit(3) from None


@app.command(name="report")
def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (runs/<name>-<timestamp>).")],
) -> None:
    """Write report.md and report.html (tables, figures, trace viewer) for a run folder."""
    try:
        written = write_report(run_dir)
    except ConfigError as exc:
        raise _fail_config(exc) from None
    console = Console()
    for table in written.tables:
        rich_table = Table(title=table.title)
        for column in table.columns:
            rich_table.add_column(column)
        for row in table.rows:
            rich_table.add_row(*row)
        console.print(rich_table)
    console.print(f"report: {written.markdown}  ·  {written.html}", highlight=False)


@app.command()
def train(
    out: Annotated[Path, typer.Option(help="Folder for the checkpoint (model, tokenizer, manifest).")],
    model: Annotated[
        Path | None,
        typer.Option(
            help="A local Hugging Face causal-LM folder (e.g. Qwen3.5-0.8B) to fine-tune with the paper's "
            "settings; without it the 'tiny' preset is trained from scratch."
        ),
    ] = None,
    preset: Annotated[str, typer.Option(help="Preset without --model; 'tiny' is a 0.2 M-parameter CPU model.")] = (
        "tiny"
    ),
    target: Annotated[Target, typer.Option(help="direct (the whole record) or factor (the binding code).")] = (
        Target.DIRECT
    ),
    surface: Annotated[Surface, typer.Option(help="The wire form a direct model writes.")] = Surface.dsl,
    horizon: Annotated[
        Horizon,
        typer.Option(help="multi: SELF+REQ at once; single: one step, then the rest at the intermediate state."),
    ] = Horizon.MULTI,
    view: Annotated[
        PriorView | None,
        typer.Option(help="Task-prior view in the model input (default: none for tiny, full for --model)."),
    ] = None,
    steps: Annotated[int, typer.Option(min=1, help="tiny: optimizer steps (batch 8, fresh rows every step).")] = 4000,
    epochs: Annotated[int, typer.Option(min=1, help="--model: epochs over the training rows (paper: 2).")] = 2,
    micro_batch: Annotated[
        int, typer.Option(min=1, help="--model: rows per forward pass; the effective batch stays 16.")
    ] = 4,
    seed: Annotated[int, typer.Option(help="Initialization and data seed.")] = 0,
) -> None:
    """Train a commitment model; then use it in a config with backends = ["model:<out>"]."""
    console = Console()
    try:
        chosen = view or (PriorView.FULL if model else PriorView.NONE)
        spec = RowSpec(target, SurfaceName(surface.value), chosen, model is None, horizon)
        if model is None and preset != "tiny":
            raise ConfigError("UNKNOWN_PRESET", f"unknown preset {preset!r}; available: tiny (or give --model)")

        def log(step: int, loss: float) -> None:
            console.print(f"step {step:5d}  loss {loss:.4f}")

        if model is None:
            from gencoord.train.tiny import train_tiny  # noqa: PLC0415

            report = train_tiny(spec, out, steps, seed, log=log)
        else:
            report = _train_checkpoint(model, spec, out, epochs, micro_batch, seed, log, console)
    except ConfigError as exc:
        raise _fail_config(exc) from None
    seen = "–" if report.exact_match is None else f"{100 * report.exact_match:.1f}%"
    unseen = "–" if report.held_out_templates is None else f"{100 * report.held_out_templates:.1f}%"
    console.print(
        f"trained {report.steps} steps in {report.seconds:.0f} s; exact match {seen} on {report.evaluated} rows of "
        f"unseen worlds, {unseen} on {report.held_out_evaluated} rows of held-out templates → {out}",
        highlight=False,
    )


def _train_checkpoint(
    model: Path,
    spec: RowSpec,
    out: Path,
    epochs: int,
    micro_batch: int,
    seed: int,
    log: Callable[[int, float], None],
    console: Console,
) -> TrainReport:
    """The paper's SFT on the training pool's rows, written beside the checkpoint as data/.

    The rows are the same for every seed (as in the paper, whose seeds share one data
    hash); the seed changes initialization of the new head state and the shuffling.
    """
    from gencoord.train.hf import PaperSettings, train_checkpoint  # noqa: PLC0415  (torch loads only for training)

    rows = build_rows(paper_pool("training"), default_prior(), default_suites(), spec)  # one data set for all seeds
    data = write_rows(rows, out / "data", "training", spec)
    console.print(f"{len(rows)} training rows → {data}", highlight=False)
    settings = PaperSettings(epochs=epochs, micro_batch=micro_batch)
    return train_checkpoint(model, rows, spec, out, settings, seed, log)


@app.command()
def demo() -> None:
    """Resolve the paper's two worked examples and show every stage."""
    run_demo(Console())


if __name__ == "__main__":
    app()
