"""What crosses between the protocol and whoever writes an agent's records.

Generation is a parameter of the protocol: any callable from a :class:`GenerationRequest`
to the :class:`Reply` an agent emits (a learned model, an API, a deterministic rule, a
replay). These types live with the protocol so that backends, the episode pipeline and
training all depend on the protocol, and never on each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


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
    charge: float | None = None  # what an API call cost at the configured prices (None: no prices, or no API)


@dataclass(frozen=True, slots=True)
class Generation:
    """One generation step: who, at which stage, and the reply it produced."""

    agent: str
    stage: str
    reply: Reply

    @property
    def raw(self) -> str:
        return self.reply.text


class Stage(StrEnum):
    """Which message of the lifecycle a backend is asked for (the request names it; so do records)."""

    SENDER_INITIAL = "sender_initial"
    RECEIVER_AFTER_REQUEST = "receiver_after_request"
    RECEIVER_WITHOUT_REQUEST = "receiver_without_request"
    REQUESTER_INITIAL = "requester_initial"
    REQUESTER_AFTER_RESPONSE = "requester_after_response"
    SENDER_STEP = "sender_step"  # single-step horizon: commit only the sender's next step
    SENDER_AFTER_OBTAIN = "sender_after_obtain"  # single-step horizon: the rest, at the intermediate state
    DIALOGUE_SENDER = "dialogue_sender"  # controlled free-form: the sender's next turn
    DIALOGUE_RECEIVER = "dialogue_receiver"  # controlled free-form: the receiver's reply
    TEAM_LEAD = "team_lead"  # a team task: the lead's n-party SELF+REQ from what it knows
    TEAM_HAVE = "team_have"  # a team peer's answer to the lead's supply question (HAVE ...)
    TEAM_RESPONSE = "team_response"  # a team peer's decision on its projection (ACCEPT, COUNTER or REJECT)
    GATE_HELP = "gate_help"  # a gate helper's answer to an escalation's projection, from what it can spare
    RECEIVER_DELIVERY = "receiver_delivery"  # a private-structure receiver's own path from a PATH, SLICE or GOAL


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """What a generator is told beyond its own context: the stage and what arrived."""

    agent: str
    stage: Stage
    peer: str
    delivered_request: str | None = None  # the REQ line as it crossed the wire
    initial_proposal: str | None = None  # the requester's own first record (canonical)
    response: str | None = None  # the bounded response as it crossed the wire
    executed: str | None = None  # single-step horizon: the record of the step already carried out
    dialogue: tuple[str, ...] = ()  # free-form turns so far, each "speaker: text" as it crossed the wire
    round: int = 1  # a team lead's round of proposing, from 1: after a refusal it proposes again


Generator = Callable[[GenerationRequest], Reply]
