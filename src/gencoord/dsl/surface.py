"""Surfaces: the wire forms a commitment can take, behind one interface.

The protocol, the backends and the experiments speak through a :class:`Surface`, so
comparing the Short DSL with the JSON surface changes only what crosses the wire,
never the semantics: both decode to the same canonical :class:`Proposal`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from gencoord.dsl.ast import PeerRequest, Proposal
from gencoord.dsl.json_surface import parse_json, request_json, serialize_json
from gencoord.dsl.parse import parse
from gencoord.dsl.serialize import request_line, serialize
from gencoord.dsl.vocabulary import Vocabulary
from gencoord.errors import ConfigError
from gencoord.reasons import Reason


class SurfaceName(StrEnum):
    DSL = "dsl"
    JSON = "json"
    FREEFORM = "freeform"  # controlled free-form dialogue (gencoord.dsl.dialogue): turns, not one record


class Surface(Protocol):
    name: SurfaceName

    def parse(self, message: str | bytes) -> Proposal: ...

    def serialize(self, proposal: Proposal) -> str: ...

    def request(self, request: PeerRequest) -> str:
        """What crosses the wire for one REQ."""
        ...

    def delivered(self, message: str) -> Proposal:
        """A delivered REQ, decoded as a proposal with an empty SELF."""
        ...


class DslSurface:
    name = SurfaceName.DSL

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab

    def parse(self, message: str | bytes) -> Proposal:
        return parse(message, self.vocab)

    def serialize(self, proposal: Proposal) -> str:
        return serialize(proposal, self.vocab)

    def request(self, request: PeerRequest) -> str:
        return request_line(request)

    def delivered(self, message: str) -> Proposal:
        return parse(f"SELF -\n{message}", self.vocab)


class JsonSurface:
    name = SurfaceName.JSON

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab

    def parse(self, message: str | bytes) -> Proposal:
        return parse_json(message, self.vocab)

    def serialize(self, proposal: Proposal) -> str:
        return serialize_json(proposal, self.vocab)

    def request(self, request: PeerRequest) -> str:
        return request_json(request, self.vocab)

    def delivered(self, message: str) -> Proposal:
        return parse_json(f'{{"self_plan":[],"peer_requests":[{message}]}}', self.vocab)


def surface(name: SurfaceName | str, vocab: Vocabulary) -> Surface:
    """The record surface called ``name``; free-form is a dialogue, so it has none."""
    kind = SurfaceName(name)
    if kind is SurfaceName.FREEFORM:
        raise ConfigError(
            Reason.SURFACE_NOT_RECORD,
            "the free-form surface is a multi-turn dialogue with an extractor, not a one-record wire form",
        )
    return DslSurface(vocab) if kind is SurfaceName.DSL else JsonSurface(vocab)
