"""The protocol result R = Success(C, D) ⊎ NoCommitment(e) ⊎ Fail(f), with its trace."""

from __future__ import annotations

from dataclasses import dataclass, field

from gencoord.dsl.ast import Proposal
from gencoord.errors import FailureCode, GencoordError
from gencoord.protocol.commitment import Commitment
from gencoord.protocol.delivery import DeliveryReport
from gencoord.protocol.generation import Generation
from gencoord.protocol.plan import DispatchPlan
from gencoord.protocol.response import Response
from gencoord.protocol.wire import Wire


@dataclass
class Trace:
    """Provenance kept beside the result: raw outputs, parsed proposals, responses, wire."""

    generations: list[Generation] = field(default_factory=list)
    proposals: list[tuple[str, Proposal]] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    wire: Wire = field(default_factory=Wire)
    delivery: DeliveryReport | None = None  # private task structure: the PATH / SLICE / GOAL delivered

    @property
    def calls(self) -> int:
        """Model calls (learned or API); deterministic rules contribute none."""
        return sum(generation.reply.model_calls for generation in self.generations)


@dataclass(frozen=True)
class Success:
    """A commitment both sides formed, materialized into a dispatch plan, with the exchange's trace."""

    commitment: Commitment
    plan: DispatchPlan
    trace: Trace


@dataclass(frozen=True)
class NoCommitment:
    """The peer rejected the request (feedback): no commitment formed, and no protocol failure either."""

    reason: str
    trace: Trace


@dataclass(frozen=True)
class Fail:
    """A protocol failure (the paper's seven codes): the error that caused it and the trace up to it."""

    code: FailureCode
    error: GencoordError
    trace: Trace


ProtocolResult = Success | NoCommitment | Fail
"""The paper's tagged union: a commitment with its plan, no commitment and why, or a failure with its code."""
