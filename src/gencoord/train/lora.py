"""LoRA fine-tuning of a pretrained chat model on the team rows or the paper's: only the adapter is trained and shipped.

The base (SmolLM2-135M-Instruct from its wheel, or a user's local model) stays frozen; low-rank
adapters on every attention and MLP projection learn the messages, each prompt inside the base's chat template as
a served model receives it:

- team rows (``records = team``): the lead's n-party SELF+REQ, the peers' HAVE lines and decisions, fresh every
  step from generated MINDcraft-format crafting tasks of 2–8 agents (:data:`EVERY_SIZE`), with whole item
  families held out (:func:`gencoord.train.team_data.held_out`);
- the paper's rows (any other record set): the pair episodes' records in the spec's surface, view and horizon,
  fresh every step from new worlds of the training templates (:func:`gencoord.train.rounds.fresh_rows`, the
  stream the tiny models learn from), held-out templates never seen.

Training stops at a step or time budget, whichever comes first, and the report says how long it took and scores
greedy exact match per stage on rows of training and held-out families (or templates).

The same code fine-tunes a larger model on a GPU: give ``base`` a local folder or ``.gguf`` file.
"""

from __future__ import annotations

import hashlib
import json
import platform
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from gencoord import __version__
from gencoord.errors import ConfigError
from gencoord.models.codec import Codec
from gencoord.models.manifest import CheckpointManifest, TrainReport
from gencoord.models.pretrained import SMOLLM2, ChatCodec, load_base, peft_quietly, provenance
from gencoord.models.variant import ModelSpec, Records, TeamRoles
from gencoord.prior.load import team_prior
from gencoord.reasons import Reason
from gencoord.train.common import exact_match, masked_batch, use_threads, warmup_cosine
from gencoord.train.data import SupervisionRow, evaluation_rows
from gencoord.train.rounds import fresh_rows
from gencoord.train.team import by_stage, held_out_rows, role_shares, stage_batch
from gencoord.train.team_data import EVERY_SIZE, HELD_OUT, TRAINING, team_rows

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""The Llama-family projections the adapters wrap: attention and MLP alike."""


TEAM_SPEC = ModelSpec(records=Records.TEAM, compact=True)
"""The team model's rows in the Short DSL (every field else is the team rows' own)."""


@dataclass(frozen=True)
class LoraSettings:
    rank: int = 16
    alpha: int = 32
    lr: float = 1e-3
    warmup: int = 10
    batch: int = 8
    micro_batch: int = 4
    weight_decay: float = 0.0
    clip: float = 1.0
    threads: int = 2


def adapter_model(model: Any, settings: LoraSettings) -> Any:
    """``model`` with fresh LoRA adapters on every projection; only they take gradients."""
    from peft import LoraConfig, get_peft_model  # noqa: PLC0415  (peft loads only to fine-tune)

    config = LoraConfig(
        r=settings.rank,
        lora_alpha=settings.alpha,
        lora_dropout=0.0,
        target_modules=list(PROJECTIONS),
        task_type="CAUSAL_LM",
    )
    with peft_quietly():
        return get_peft_model(model, config)


def target_loss(model: Any, ids: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The summed cross-entropy of the target tokens, with the output layer applied to those positions alone.

    A team prompt is three quarters of its row, and the 49k-word output layer over every position
    would cost more time and memory than the rest of the model; only the positions that predict
    a target token need it.
    """
    hidden = model.get_base_model().get_decoder()(input_ids=ids, attention_mask=mask).last_hidden_state
    predicting = labels[:, 1:] != -100
    logits = model.get_base_model().get_output_embeddings()(hidden[:, :-1][predicting])
    return torch.nn.functional.cross_entropy(logits.float(), labels[:, 1:][predicting], reduction="sum")


def stage_match(model: Any, codec: Codec, rows: Sequence[SupervisionRow]) -> dict[str, float]:
    """Greedy exact match per stage."""
    by: dict[str, list[SupervisionRow]] = {}
    for row in rows:
        by.setdefault(row.stage, []).append(row)
    return {stage: exact_match(model, codec, staged) or 0.0 for stage, staged in by.items()}


def train_lora(
    out: Path,
    base: str = SMOLLM2.name,
    steps: int = 10_000,
    minutes: float | None = None,
    seed: int = 0,
    evaluate: int = 8,
    settings: LoraSettings | None = None,
    log: Callable[[int, float], None] | None = None,
    roles: TeamRoles = TeamRoles.EVERY,
    sizes: tuple[int, ...] = EVERY_SIZE,
    spec: ModelSpec = TEAM_SPEC,
) -> TrainReport:
    """Fine-tune adapters on ``base`` for ``steps`` (or until ``minutes`` pass), score them, save adapter +
    manifest in ``out``; returns the report (also in the manifest, with the per-stage scores in ``data``).

    ``spec``: what the adapter reads and writes. Team records in the Short DSL's typed lines, or in the team
    dialogue's sentences (the free-form surface: the same rows said in words; the adapter then writes and reads
    words in every role); any other record set, the paper's rows in the spec's surface, view and horizon."""
    settings = settings or LoraSettings()
    if steps <= 0 or (minutes is not None and minutes <= 0):
        raise ConfigError(Reason.BAD_STEPS, "steps and minutes must be positive")
    use_threads(settings.threads)
    torch.manual_seed(seed)
    started = time.perf_counter()
    model, tokenizer = load_base(base)
    codec = ChatCodec(tokenizer)
    loaded_s = time.perf_counter() - started
    model = adapter_model(model, settings)
    trainable = [parameter for parameter in model.parameters() if parameter.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=settings.lr, weight_decay=settings.weight_decay)
    next_batch = _batches(spec, seed, roles, sizes, settings.batch)
    began = time.perf_counter()
    budget = None if minutes is None else 60 * minutes

    def progress(step: int) -> float:
        """How far training is: by steps, or by time when a time budget ends it sooner."""
        by_time = 0.0 if budget is None else (time.perf_counter() - began) / budget
        return min(1.0, max(step / steps, by_time))

    scheduler = warmup_cosine(optimizer, settings.warmup, progress, 0.05)
    losses: list[float] = []
    model.train()
    for step in range(steps):
        batch = sorted(next_batch(), key=lambda row: len(row.prompt))
        targets = sum(len(codec.encode(row.target)) + 1 for row in batch)
        optimizer.zero_grad()
        loss_sum = 0.0
        for start in range(0, len(batch), settings.micro_batch):  # rows of like length share a micro batch
            ids, labels, mask = (
                t.to(model.device) for t in masked_batch(batch[start : start + settings.micro_batch], codec)
            )
            loss: Any = target_loss(model, ids, labels, mask) / targets  # torch types backward() loosely
            loss.backward()
            loss_sum += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(trainable, settings.clip)
        optimizer.step()
        scheduler.step()
        losses.append(loss_sum)
        if log is not None:
            log(step, losses[-1])
        if budget is not None and time.perf_counter() - began > budget:
            break
    trained_s = time.perf_counter() - started - loaded_s
    model.train(False)
    report = _scored_and_saved(
        model, codec, out, base, spec, settings, losses, trained_s, loaded_s, seed, evaluate, roles, sizes
    )
    return report


def _batches(
    spec: ModelSpec, seed: int, roles: TeamRoles, sizes: tuple[int, ...], size: int
) -> Callable[[], list[SupervisionRow]]:
    """Each call the next ``size`` training rows: team rows in the roles' stage shares, or the paper's rows as the
    rounds deal them (every training template once a round)."""
    if spec.records is not Records.TEAM:
        rows = fresh_rows(spec, seed)
        return lambda: [next(rows) for _ in range(size)]
    rng = random.Random(seed)
    next_of = by_stage(team_rows(team_prior(), seed, TRAINING, spec.surface, sizes), roles)
    return lambda: stage_batch(next_of, size, rng, roles)


def _evaluation_rows(
    spec: ModelSpec, evaluate: int, seed: int, roles: TeamRoles, sizes: tuple[int, ...]
) -> tuple[list[SupervisionRow], list[SupervisionRow]]:
    """Rows the adapter is scored on: of training families (templates) and of held-out ones."""
    if spec.records is not Records.TEAM:
        return evaluation_rows(spec, evaluate, seed)
    seen, unseen = (
        [row for rows in held_out_rows(evaluate, seed, split, spec.surface, roles, sizes).values() for row in rows]
        for split in (TRAINING, HELD_OUT)
    )
    return seen, unseen


def _plain_adapter(out: Path, base: str) -> None:
    """The adapter without peft's blank model card, naming its base as the manifest does (not this machine's
    path to it)."""
    (out / "README.md").unlink(missing_ok=True)
    config_path = out / "adapter_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["base_model_name_or_path"] = base
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _mean(scores: dict[str, float] | None, rows: Sequence[SupervisionRow]) -> float | None:
    """The share of ``rows`` matched, from per-stage shares (stages weighted by their rows)."""
    if not scores or not rows:
        return None
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.stage] = counts.get(row.stage, 0) + 1
    return sum(scores[stage] * counts[stage] for stage in counts) / len(rows)


def _scored_and_saved(
    model: Any,
    codec: ChatCodec,
    out: Path,
    base: str,
    spec: ModelSpec,
    settings: LoraSettings,
    losses: list[float],
    trained_s: float,
    loaded_s: float,
    seed: int,
    evaluate: int,
    roles: TeamRoles,
    sizes: tuple[int, ...],
) -> TrainReport:
    """Exact match by stage on training and held-out families, then the adapter and its manifest in ``out``."""
    scores = {}
    seen: list[SupervisionRow] = []
    unseen: list[SupervisionRow] = []
    if evaluate:
        seen, unseen = _evaluation_rows(spec, evaluate, seed, roles, sizes)
        scores = {"training": stage_match(model, codec, seen), "held_out": stage_match(model, codec, unseen)}
    report = TrainReport(
        steps=len(losses),
        seconds=trained_s,
        first_loss=losses[0],
        last_loss=sum(losses[-10:]) / len(losses[-10:]),
        exact_match=_mean(scores.get("training"), seen),
        evaluated=len(seen),
        held_out_templates=_mean(scores.get("held_out"), unseen),
        held_out_evaluated=len(unseen),
    )
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    _plain_adapter(out, base)
    config = {"spec": spec.fields(), "settings": asdict(settings), "base": base, "sizes": sizes, "roles": roles.value}
    if spec.records is Records.TEAM:
        stages = ", ".join(stage.value for stage, _ in role_shares(roles))
        data = (
            f"fresh rows each step ({stages}) from generated MINDcraft-format crafting tasks of "
            f"{min(sizes)}–{max(sizes)} agents, training item families only (seeded)"
        )
    else:
        data = f"fresh rows each step: the {spec.records.value} records of new worlds of the training templates"
    CheckpointManifest.of(
        spec,
        kind="lora",
        base=base,
        provenance=provenance(base),
        seed=seed,
        settings={**asdict(settings), "load_seconds": round(loaded_s, 1)},
        config_sha256=hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest(),
        report=report,
        data=f"{data}; exact match by stage: " + json.dumps(scores, sort_keys=True),
        versions={"gencoord": __version__, "torch": torch.__version__, "python": platform.python_version()},
    ).write(out)
    return report
