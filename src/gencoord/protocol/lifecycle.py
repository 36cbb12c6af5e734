"""Algorithms S1 (forward) and S2 (bounded feedback), up to the dispatch plan.

Generation is a parameter: any callable that maps a :class:`GenerationRequest` to the
raw text an agent emits (a learned model, an API, a deterministic rule, a replay of
recorded outputs). The protocol never sees an agent's private context; the callable
closes over it. Every stage failure becomes ``Fail(code)`` with the typed error, so
nothing a model or peer sends can raise out of these functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from gencoord.dsl.ast import Proposal
from gencoord.dsl.serialize import request_line, serialize
from gencoord.errors import ContractError, FailureCode, GencoordError
from gencoord.prior.contract import check_proposal
from gencoord.prior.episode import PublicEpisode
from gencoord.prior.prior import Prior
from gencoord.protocol.resolve import resolve_feedback, resolve_forward
from gencoord.protocol.response import check_response, parse_response, respond
from gencoord.protocol.result import Fail, Generation, NoCommitment, ProtocolResult, Success, Trace
from gencoord.runtime.materialize import materialize


class Stage(StrEnum):
    SENDER_INITIAL = "sender_initial"
    RECEIVER_AFTER_REQUEST = "receiver_after_request"
    REQUESTER_INITIAL = "requester_initial"
    REQUESTER_AFTER_RESPONSE = "requester_after_response"


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """What a generator is told beyond its own context: the stage and what arrived."""

    agent: str
    stage: Stage
    peer: str
    delivered_request: str | None = None  # the REQ line as it crossed the wire
    initial_proposal: str | None = None  # the requester's own first record (canonical)
    response: str | None = None  # the bounded response as it crossed the wire


Generator = Callable[[GenerationRequest], str]
Responder = Callable[[str], str]
"""The peer side of feedback: delivered REQ line → response line (a policy or a fault)."""


def _generate(generate: Generator, request: GenerationRequest, trace: Trace) -> str:
    raw = generate(request)
    trace.generations.append(Generation(request.agent, request.stage.value, raw))
    return raw


def _checked(raw: str, agent: str, prior: Prior, episode: PublicEpisode, trace: Trace) -> Proposal:
    proposal = prior.parse(raw)
    check_proposal(proposal, agent, prior, episode)
    trace.proposals.append((agent, proposal))
    return proposal


def _one_request(proposal: Proposal) -> None:
    if proposal.request is None or not proposal.request.plan:
        raise ContractError("REQUEST_COUNT", f"expected exactly one peer request, found {len(proposal.peer_requests)}")


def _fail(error: GencoordError, trace: Trace) -> Fail:
    return Fail(FailureCode(error.code), error, trace)


def run_forward(
    generate: Generator, sender: str, receiver: str, prior: Prior, episode: PublicEpisode
) -> ProtocolResult:
    """Algorithm S1: sender SELF+REQ → delivered REQ → receiver SELF → Resolve→ → Materialize."""
    trace = Trace()
    try:
        raw = _generate(generate, GenerationRequest(sender, Stage.SENDER_INITIAL, receiver), trace)
        sent = _checked(raw, sender, prior, episode, trace)
        _one_request(sent)
        if sent.request is not None and sent.request.target != receiver:
            raise ContractError("REQUEST_TARGET", f"the request is addressed to {sent.request.target}, not {receiver}")
        delivered = trace.wire.send(sender, receiver, "REQ", request_line(sent.request))
        raw = _generate(
            generate,
            GenerationRequest(receiver, Stage.RECEIVER_AFTER_REQUEST, sender, delivered_request=delivered),
            trace,
        )
        answer = _checked(raw, receiver, prior, episode, trace)
        if not answer.self_plan or answer.peer_requests:
            raise ContractError("RECEIVER_SHAPE", "the receiver must answer with a non-empty SELF and 'REQ -'")
        commitment = resolve_forward(sent, sender, answer, receiver, prior, episode)
        return Success(commitment, materialize(commitment, prior, episode), trace)
    except GencoordError as error:
        return _fail(error, trace)


def run_feedback(
    generate: Generator, respond: Responder, requester: str, peer: str, prior: Prior, episode: PublicEpisode
) -> ProtocolResult:
    """Algorithm S2: requester SELF+REQ → bounded response → revision → Resolve← → Materialize."""
    trace = Trace()
    try:
        raw = _generate(generate, GenerationRequest(requester, Stage.REQUESTER_INITIAL, peer), trace)
        initial = _checked(raw, requester, prior, episode, trace)
        _one_request(initial)
        assert initial.request is not None
        delivered = trace.wire.send(requester, peer, "REQ", request_line(initial.request))
        reply = trace.wire.send(peer, requester, "RESPONSE", respond(delivered))
        response = parse_response(reply)
        trace.responses.append(response)
        check_response(response, initial.request, requester, prior)
        if response.decision == "REJECT":
            return NoCommitment(response.reason or "REJECT", trace)
        raw = _generate(
            generate,
            GenerationRequest(
                requester,
                Stage.REQUESTER_AFTER_RESPONSE,
                peer,
                initial_proposal=serialize(initial, prior.vocab),
                response=reply,
            ),
            trace,
        )
        revised = _checked(raw, requester, prior, episode, trace)
        _one_request(revised)
        assert revised.request is not None
        if revised.request.target != initial.request.target:
            raise ContractError("REQUEST_TARGET", f"the revision addresses {revised.request.target}, not {peer}")
        commitment = resolve_feedback(initial, revised, response, requester, peer, prior, episode)
        return Success(commitment, materialize(commitment, prior, episode), trace)
    except GencoordError as error:
        return _fail(error, trace)


def policy_responder(mode: str, requester: str, prior: Prior) -> Responder:
    """The deterministic peer: parse the delivered REQ, answer from the workcell mode."""

    def answer(delivered: str) -> str:
        request = prior.parse(f"SELF -\n{delivered}").request
        assert request is not None  # the wire carries the REQ line we serialized
        return respond(request, requester, mode, prior).serialize()

    return answer
