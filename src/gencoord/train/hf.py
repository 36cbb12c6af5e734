"""SFT of any Hugging Face causal LM given by a local path, with the paper's settings.

The paper fine-tunes Qwen3.5-0.8B: AdamW, lr 1e-5, cosine schedule, 3% warm-up, effective
batch 16, bf16, 2 epochs, prompt tokens masked from the loss. This module does exactly
that for any checkpoint folder (no downloads: ``local_files_only``), on a GPU when one is
present and on the CPU otherwise; the tests run it on a tiny stand-in checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import get_cosine_schedule_with_warmup

from gencoord import __version__
from gencoord.errors import ConfigError
from gencoord.models.codec import HfCodec
from gencoord.models.load import load_pretrained
from gencoord.models.manifest import CheckpointManifest, TrainReport
from gencoord.models.variant import ModelSpec
from gencoord.reasons import Reason
from gencoord.train.common import exact_match, masked_batch
from gencoord.train.data import SupervisionRow, evaluation_rows, rows_text


@dataclass(frozen=True)
class PaperSettings:
    lr: float = 1e-5
    warmup_ratio: float = 0.03
    epochs: int = 2
    batch: int = 16  # effective: micro_batch × accumulation
    micro_batch: int = 4
    weight_decay: float = 0.01  # the paper's AdamW weight decay


def train_checkpoint(
    model_path: Path,
    rows: Sequence[SupervisionRow],
    spec: ModelSpec,
    out: Path,
    settings: PaperSettings | None = None,
    seed: int = 0,
    log: Callable[[int, float], None] | None = None,
    evaluate: int = 64,
    evaluation: tuple[list[SupervisionRow], list[SupervisionRow]] | None = None,
) -> TrainReport:
    """Fine-tune, then measure greedy exact match on ``evaluate`` training-template and held-out-template rows
    (or on ``evaluation``'s two sets: a team model's training and held-out item families)."""
    settings = settings or PaperSettings()
    if settings.batch % settings.micro_batch:
        raise ConfigError(Reason.BAD_BATCH, "the effective batch must be a multiple of the micro batch")
    if not rows:
        raise ConfigError(Reason.NO_ROWS, "no supervision rows to train on")
    torch.manual_seed(seed)
    model, codec = load_pretrained(model_path)
    started = time.perf_counter()
    losses = _epochs(model, codec, rows, settings, seed, log)
    model.train(False)
    seconds = time.perf_counter() - started
    seen, unseen = evaluation or evaluation_rows(spec, evaluate, seed)
    report = TrainReport(
        steps=len(losses),
        seconds=seconds,
        first_loss=losses[0],
        last_loss=losses[-1],
        exact_match=exact_match(model, codec, seen),
        evaluated=len(seen),
        held_out_templates=exact_match(model, codec, unseen),
        held_out_evaluated=len(unseen),
    )
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    codec.tokenizer.save_pretrained(out)
    config_text = json.dumps({"spec": spec.fields(), "settings": asdict(settings)}, sort_keys=True)
    CheckpointManifest.of(
        spec,
        kind="hf",
        base=str(model_path),
        seed=seed,
        settings=asdict(settings),
        rows=len(rows),
        data_sha256=hashlib.sha256(rows_text(rows).encode("utf-8")).hexdigest(),
        config_sha256=hashlib.sha256(config_text.encode("utf-8")).hexdigest(),
        report=report,
        versions={"gencoord": __version__, "torch": torch.__version__, "python": platform.python_version()},
    ).write(out)
    return report


def _epochs(
    model: Any,
    codec: HfCodec,
    rows: Sequence[SupervisionRow],
    settings: PaperSettings,
    seed: int,
    log: Callable[[int, float], None] | None,
) -> list[float]:
    """The paper's schedule: ``epochs`` shuffled passes, micro batches accumulated into each step, AdamW with
    warm-up and cosine decay, gradients clipped to 1; each step's loss."""
    accumulation = settings.batch // settings.micro_batch
    total = math.ceil(len(rows) / settings.batch) * settings.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    scheduler = get_cosine_schedule_with_warmup(optimizer, math.ceil(settings.warmup_ratio * total), total)
    order = list(rows)
    rng = random.Random(seed)
    losses: list[float] = []
    model.train()
    for _ in range(settings.epochs):
        rng.shuffle(order)
        for start in range(0, len(order), settings.batch):
            batch = order[start : start + settings.batch]
            optimizer.zero_grad()
            total_loss = 0.0
            for micro in range(0, len(batch), settings.micro_batch):
                ids, labels, mask = (
                    t.to(model.device) for t in masked_batch(batch[micro : micro + settings.micro_batch], codec)
                )
                loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss / accumulation
                loss.backward()
                total_loss += float(loss.detach())
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            losses.append(total_loss)
            if log is not None:
                log(len(losses) - 1, total_loss)
    return losses
