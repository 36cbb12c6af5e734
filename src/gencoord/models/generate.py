"""Decoding of one record or turn (greedy, or sampled for a lead's further drafts), with real token counts."""

from __future__ import annotations

from typing import Any

import torch
from transformers import PreTrainedModel, SuppressTokensLogitsProcessor

from gencoord.models.codec import Codec

MAX_NEW_TOKENS = 512
"""Decode budget for a whole record or turn: a JSON record of a real tokenizer runs to ~270 tokens."""


def generate(
    model: PreTrainedModel,
    codec: Codec,
    prompt: str,
    max_new: int = MAX_NEW_TOKENS,
    processors: list[Any] | None = None,
    temperature: float | None = None,
) -> tuple[str, int, int]:
    """Greedy decoding, optionally under logits processors (a grammar): (text, prompt tokens, output tokens).

    ``temperature``: sample at that temperature instead (seed torch's generator first for a repeatable draw).

    The codec's unwritable ids (a tiny model's unnamed slots) are never chosen. Decoding stops at the
    model's context (``max_position_embeddings``): a record that would run past it is cut there and fails
    to parse as the model's own failure, instead of being decoded at positions it was never trained on.
    """
    codec = codec.for_prompt(prompt)
    ids = torch.tensor([codec.encode_prompt(prompt)], device=model.device)
    context = getattr(model.config, "max_position_embeddings", None)
    if isinstance(context, int):
        max_new = min(max_new, context - int(ids.shape[1]))
        if max_new <= 0:
            return "", int(ids.shape[1]), 0
    if unwritable := codec.unwritable():
        processors = [*(processors or []), SuppressTokensLogitsProcessor(unwritable, device=str(model.device))]
    with torch.no_grad():
        out = model.generate(  # type: ignore[operator]
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=max_new,
            do_sample=temperature is not None,
            temperature=temperature,
            top_k=None if temperature is None else 0,
            eos_token_id=codec.eos,
            pad_token_id=codec.pad,
            logits_processor=processors or None,
        )
    new = out[0, ids.shape[1] :].tolist()
    return codec.decode(new), int(ids.shape[1]), len(new)
