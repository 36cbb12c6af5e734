"""Text ↔ token ids for the two kinds of checkpoint: the tiny word-level tokenizer, or a Hugging Face one."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Protocol, Self

from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerBase

from gencoord.errors import ConfigError
from gencoord.reasons import Reason


class Codec(Protocol):
    """Text ↔ token ids, with the end-of-sequence and padding ids."""

    eos: int
    pad: int

    def encode(self, text: str) -> list[int]: ...

    def encode_prompt(self, text: str) -> list[int]:
        """A prompt's ids as the model reads it (a chat model: inside its chat template)."""
        ...

    def decode(self, ids: Sequence[int]) -> str: ...

    def for_prompt(self, prompt: str, shuffle: random.Random | None = None) -> Codec:
        """The codec for one generation from ``prompt`` (and the target that follows it)."""
        ...

    def unwritable(self) -> list[int]:
        """Ids no output of this codec's prompt may hold, whatever the model scores them."""
        ...


SLOT_TOKENS = tuple(f"[NAME{index}]" for index in range(128))
"""Name slots: a tokenizer that holds them reads each distinct name of a prompt that lies outside
its vocabulary as one of these tokens, in the prompt and in what is written after it. A tokenizer
holds the first few (24 for a paper-task model; a team model's supply questions name up to 128)."""
PAPER_SLOTS = 24

_NAME = re.compile(r"[A-Za-z_]+")


class TextCodec:
    """Text ↔ ids for the tiny model (a word-level tokenizer joined without separators).

    A name outside the vocabulary (a held-out template's ``roof_site``) must be copied from
    the input, since no weight knows it. When the tokenizer holds name slots
    (:data:`SLOT_TOKENS`), :meth:`for_prompt` gives each such name of the prompt one slot
    token, the same wherever it occurs, so copying it is copying one token, and decoding
    writes the name back; a slot decoded without a name of its own stays ``[NAME<i>]``, which
    no parser accepts. Training deals the slots at random (``shuffle``), so that a slot's
    number says nothing about which name it holds and the only way to write the right one is
    to copy it. Any other piece outside the vocabulary is spelled one character per token
    rather than read as ``[UNK]``.
    """

    def __init__(self, tokenizer: Tokenizer, names: Mapping[str, int] | None = None) -> None:
        self.tokenizer = tokenizer
        eos, pad, unk = (tokenizer.token_to_id(token) for token in ("[EOS]", "[PAD]", "[UNK]"))
        if eos is None or pad is None or unk is None:
            raise ConfigError(Reason.BAD_TOKENIZER, "the tokenizer lacks the [EOS], [PAD] or [UNK] token")
        self.eos: int = eos
        self.pad: int = pad
        self.unk: int = unk
        slots = [tokenizer.token_to_id(token) for token in SLOT_TOKENS]
        self.slots: tuple[int, ...] = tuple(slot for slot in slots if slot is not None)
        self.names: dict[str, int] = dict(names or {})  # a prompt's name → its slot token

    def _pieces(self, text: str) -> list[str]:
        pre_tokenizer = self.tokenizer.pre_tokenizer
        if pre_tokenizer is None:
            raise ConfigError(Reason.BAD_TOKENIZER, "the tokenizer has no pre-tokenizer to cut pieces with")
        return [piece for piece, _ in pre_tokenizer.pre_tokenize_str(text)]

    def for_prompt(self, prompt: str, shuffle: random.Random | None = None) -> TextCodec:
        """This codec with a slot for each distinct name of ``prompt`` the vocabulary lacks, while slots last:
        in order of first occurrence, or dealt at random with ``shuffle``."""
        if not self.slots:
            return self
        names: list[str] = []
        for piece in self._pieces(prompt):
            if _NAME.fullmatch(piece) and self.tokenizer.token_to_id(piece) is None and piece not in names:
                names.append(piece)
        slots = list(self.slots)
        if shuffle is not None:
            shuffle.shuffle(slots)
        return TextCodec(self.tokenizer, dict(zip(names, slots, strict=False)))

    def unwritable(self) -> list[int]:
        """The slots this prompt gave no name: decoded, one is ``[NAME<i>]``, text no reader accepts.

        A model that copies a name imprecisely can score a free slot highest; suppressed, its
        next choice is one of the prompt's own names, the only ones it could mean.
        """
        bound = set(self.names.values())
        return [slot for slot in self.slots if slot not in bound]

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for piece in self._pieces(text):
            whole = self.tokenizer.token_to_id(piece)
            if whole is not None:
                ids.append(whole)
            elif piece in self.names:
                ids.append(self.names[piece])
            else:
                ids += [self._character(character) for character in piece]
        return ids

    def encode_prompt(self, text: str) -> list[int]:
        return self.encode(text)

    def _character(self, character: str) -> int:
        known = self.tokenizer.token_to_id(character)
        return self.unk if known is None else known

    def decode(self, ids: Sequence[int]) -> str:
        named = {slot: name for name, slot in self.names.items()}
        return "".join(
            named.get(i) or self.tokenizer.id_to_token(i) or "" for i in ids if i not in (self.eos, self.pad)
        )


class HfCodec:
    """The checkpoint's own tokenizer behind the interface the tiny codec offers."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase) -> None:
        self.tokenizer = tokenizer
        if tokenizer.eos_token_id is None:
            raise ConfigError(Reason.BAD_TOKENIZER, "the checkpoint's tokenizer has no end-of-sequence token")
        self.eos: int = int(tokenizer.eos_token_id)
        self.pad: int = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def encode_prompt(self, text: str) -> list[int]:
        return self.encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode([i for i in ids if i not in (self.eos, self.pad)]))

    def for_prompt(self, prompt: str, shuffle: random.Random | None = None) -> Self:
        """A subword tokenizer spells any name: one codec serves every prompt."""
        return self

    def unwritable(self) -> list[int]:
        """None: every token of a subword vocabulary is text."""
        return []
