"""What every trained commitment model shares: the manifest name, the report, decoding."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from transformers import PreTrainedModel


class Codec(Protocol):
    """Text ↔ token ids, with the end-of-sequence and padding ids."""

    eos: int
    pad: int

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


@dataclass
class TrainReport:
    steps: int
    seconds: float
    first_loss: float
    last_loss: float
    exact_match: float | None  # greedy exact match on in-distribution rows (seen templates, unseen worlds)
    evaluated: int
    held_out_templates: float | None = None  # the same on rows of templates never trained on
    held_out_evaluated: int = 0


MAX_NEW_TOKENS = 512
"""Decode budget for a whole record or turn: a JSON record of a real tokenizer runs to ~270 tokens."""


def generate(
    model: PreTrainedModel,
    codec: Codec,
    prompt: str,
    max_new: int = MAX_NEW_TOKENS,
    processors: list[Any] | None = None,
) -> tuple[str, int, int]:
    """Greedy decoding, optionally under logits processors (a grammar): (text, prompt tokens, output tokens)."""
    ids = torch.tensor([codec.encode(prompt)], device=model.device)
    with torch.no_grad():
        out = model.generate(  # type: ignore[operator]
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=max_new,
            do_sample=False,
            eos_token_id=codec.eos,
            pad_token_id=codec.pad,
            logits_processor=processors or None,
        )
    new = out[0, ids.shape[1] :].tolist()
    return codec.decode(new), int(ids.shape[1]), len(new)


def masked_batch(rows: Sequence[Any], codec: Codec) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Padded (ids, labels, attention mask) with the prompt masked from the loss (label −100).

    ``rows`` carry ``prompt`` and ``target``; the target is followed by end-of-sequence.
    """
    encoded = []
    for row in rows:
        prompt, target = codec.encode(row.prompt), [*codec.encode(row.target), codec.eos]
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


def exact_match(model: PreTrainedModel, codec: Codec, rows: Sequence[Any]) -> float | None:
    """The share of ``rows`` whose target greedy decoding reproduces exactly (None: no rows)."""
    if not rows:
        return None
    hits: int = sum(generate(model, codec, row.prompt)[0] == row.target for row in rows)
    return hits / len(rows)
