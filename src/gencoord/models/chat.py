"""The chat messages a fine-tuned chat model reads: the same in process and over an OpenAI-compatible API.

Light on purpose (no torch): the API backend sends these messages to a served model that
``gencoord finetune`` tuned, and in-process decoding renders them through the model's chat template,
so both paths give the model the same tokens.
"""

from __future__ import annotations

SYSTEM = "You are one agent of a Minecraft team. Answer in gencoord's typed lines only."
"""The system turn of every prompt: short, since each of its tokens is paid on every call."""


def messages(prompt: str) -> list[dict[str, str]]:
    """The chat messages of one prompt: the system line, then the prompt as the user's turn."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
