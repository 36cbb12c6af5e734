"""What the training paths share: the thread count, masked batches and greedy exact match."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence

import torch
from transformers import PreTrainedModel

from gencoord.models.codec import Codec
from gencoord.models.generate import generate
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
