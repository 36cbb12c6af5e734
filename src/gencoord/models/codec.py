"""Text ↔ token ids for the two kinds of checkpoint: the tiny word-level tokenizer, or a Hugging Face one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerBase

from gencoord.errors import ConfigError


class Codec(Protocol):
    """Text ↔ token ids, with the end-of-sequence and padding ids."""

    eos: int
    pad: int

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


class TextCodec:
    """Text ↔ ids for the tiny model (a word-level tokenizer joined without separators)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        eos, pad = tokenizer.token_to_id("[EOS]"), tokenizer.token_to_id("[PAD]")
        if eos is None or pad is None:
            raise ConfigError("BAD_TOKENIZER", "the tokenizer lacks the [EOS] or [PAD] token")
        self.eos: int = eos
        self.pad: int = pad

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.tokenizer.id_to_token(i) or "" for i in ids if i not in (self.eos, self.pad))


class HfCodec:
    """The checkpoint's own tokenizer behind the interface the tiny codec offers."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase) -> None:
        self.tokenizer = tokenizer
        if tokenizer.eos_token_id is None:
            raise ConfigError("BAD_TOKENIZER", "the checkpoint's tokenizer has no end-of-sequence token")
        self.eos: int = int(tokenizer.eos_token_id)
        self.pad: int = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode([i for i in ids if i not in (self.eos, self.pad)]))
