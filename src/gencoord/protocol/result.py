"""The protocol result R = Success(C, D) ⊎ NoCommitment(e) ⊎ Fail(f), with its trace."""

from __future__ import annotations

from dataclasses import dataclass, field

from gencoord.dsl.ast import Proposal
from gencoord.errors import FailureCode, GencoordError
from gencoord.protocol.commitment import Commitment
from gencoord.protocol.response import Response
from gencoord.protocol.wire import Wire
from gencoord.runtime.plan import DispatchPlan


@dataclass(frozen=True, slots=True)
class Reply:
    """What a generator returns: the raw text, and what producing it cost.

    ``model_calls`` is 0 for deterministic rules and 1 per learned or API call, so the
    trace counts model calls the way the paper does (the rule sender is "zero-call").
    Token counts come from the backend's real tokenizer, or are None when it has none.
    """

    text: str
    model_calls: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Generation:
    """One generation step: who, at which stage, and the reply it produced."""

    agent: str
    stage: str
    reply: Reply

    @property
    def raw(self) -> str:
        return self.reply.text


@dataclass
class Trace:
    """Provenance kept beside the result: raw outputs, parsed proposals, responses, wire."""

    generations: list[Generation] = field(default_factory=list)
    proposals: list[tuple[str, Proposal]] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    wire: Wire = field(default_factory=Wire)

    @property
    def calls(self) -> int:
        """Model calls (learned or API); deterministic rules contribute none."""
        return sum(generation.reply.model_calls for generation in self.generations)


@dataclass(frozen=True)
class Success:
    commitment: Commitment
    plan: DispatchPlan
    trace: Trace


@dataclass(frozen=True)
class NoCommitment:
    reason: str
    trace: Trace


@dataclass(frozen=True)
class Fail:
    code: FailureCode
    error: GencoordError
    trace: Trace


ProtocolResult = Success | NoCommitment | Fail
