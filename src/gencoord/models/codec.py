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
    """Text ↔ ids for the tiny model (a word-level tokenizer joined without separators).

    A piece outside the vocabulary is spelled one character per token rather than read as
    ``[UNK]``: a name the model never trained on (a held-out template's ``roof_site``) can
    then still be copied from the input, a character at a time.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        eos, pad, unk = (tokenizer.token_to_id(token) for token in ("[EOS]", "[PAD]", "[UNK]"))
        if eos is None or pad is None or unk is None:
            raise ConfigError("BAD_TOKENIZER", "the tokenizer lacks the [EOS], [PAD] or [UNK] token")
        self.eos: int = eos
        self.pad: int = pad
        self.unk: int = unk

    def encode(self, text: str) -> list[int]:
        pre_tokenizer = self.tokenizer.pre_tokenizer
        if pre_tokenizer is None:
            raise ConfigError("BAD_TOKENIZER", "the tokenizer has no pre-tokenizer to cut pieces with")
        ids: list[int] = []
        for piece, _ in pre_tokenizer.pre_tokenize_str(text):
            whole = self.tokenizer.token_to_id(piece)
            if whole is not None:
                ids.append(whole)
            else:
                ids += [self._character(character) for character in piece]
        return ids

    def _character(self, character: str) -> int:
        known = self.tokenizer.token_to_id(character)
        return self.unk if known is None else known

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
