"""What the training paths share: the thread count, masked batches and greedy exact match."""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable, Iterable, Sequence

import torch
from transformers import PreTrainedModel

from gencoord.models.codec import Codec
from gencoord.models.generate import generate
from gencoord.models.manifest import TrainReport
from gencoord.train.data import SupervisionRow


def use_threads(requested: int) -> None:
    """Train on ``requested`` CPU threads, or fewer where ``OMP_NUM_THREADS`` caps them.

    A cap set outside (by a process pool, a test runner or a user sharing the cores) wins: OpenMP
    pools that together ask for more threads than there are cores spin against each other, and a
    few steps then take minutes instead of seconds.
    """
    cap = os.environ.get("OMP_NUM_THREADS", "")
    torch.set_num_threads(min(requested, int(cap)) if cap.isdigit() and int(cap) > 0 else requested)


def masked_batch(
    rows: Sequence[SupervisionRow], codec: Codec, shuffle: random.Random | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Padded (ids, labels, attention mask) with the prompt masked from the loss (label −100).

    Each target is followed by end-of-sequence; ``shuffle`` deals each row's name slots at
    random (:class:`TextCodec`).
    """
    encoded = []
    for row in rows:
        bound = codec.for_prompt(row.prompt, shuffle)
        prompt, target = bound.encode_prompt(row.prompt), [*bound.encode(row.target), codec.eos]
        encoded.append((prompt + target, [-100] * len(prompt) + target))
    width = max(len(ids) for ids, _ in encoded)
    ids = torch.full((len(rows), width), codec.pad)
    labels = torch.full((len(rows), width), -100)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for index, (tokens, targets) in enumerate(encoded):
        ids[index, : len(tokens)] = torch.tensor(tokens)
        labels[index, : len(targets)] = torch.tensor(targets)
        mask[index, : len(tokens)] = 1
    return ids, labels, mask


def exact_match(model: PreTrainedModel, codec: Codec, rows: Sequence[SupervisionRow]) -> float | None:
    """The share of ``rows`` whose target greedy decoding reproduces exactly (None: no rows)."""
    if not rows:
        return None
    hits: int = sum(generate(model, codec, row.prompt)[0] == row.target for row in rows)
    return hits / len(rows)


def warmup_cosine(
    optimizer: torch.optim.Optimizer, warmup: int, progress: Callable[[int], float], floor: float
) -> torch.optim.lr_scheduler.LambdaLR:
    """The learning rate rises linearly over ``warmup`` steps, then falls on a cosine to ``floor`` of its peak as
    ``progress(step)`` goes from 0 to 1 (by steps, or by time under a time budget)."""

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress(step))))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def after_warmup(warmup: int, steps: int) -> Callable[[int], float]:
    """How far past the warm-up a step is, 0 to 1: the cosine's progress when steps alone end training."""
    return lambda step: (step - warmup) / max(1, steps - warmup)


def optimizer_step(
    parameters: Iterable[torch.nn.Parameter],
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LambdaLR,
    loss: torch.Tensor,
    clip: float,
) -> float:
    """One update from ``loss`` (gradients clipped to ``clip``); the loss as a number."""
    optimizer.zero_grad()
    loss.backward()  # type: ignore[no-untyped-call]
    torch.nn.utils.clip_grad_norm_(parameters, clip)
    optimizer.step()
    scheduler.step()
    return float(loss.detach())


def scored(
    losses: Sequence[float],
    seconds: float,
    model: PreTrainedModel,
    codec: Codec,
    seen: Sequence[SupervisionRow],
    unseen: Sequence[SupervisionRow],
) -> TrainReport:
    """What training measured, with greedy exact match on rows like training's (``seen``) and held-out ones."""
    return TrainReport(
        steps=len(losses),
        seconds=seconds,
        first_loss=losses[0],
        last_loss=sum(losses[-10:]) / len(losses[-10:]),
        exact_match=exact_match(model, codec, seen),
        evaluated=len(seen),
        held_out_templates=exact_match(model, codec, unseen),
        held_out_evaluated=len(unseen),
    )
