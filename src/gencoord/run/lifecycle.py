"""Algorithms S1 (forward) and S2 (bounded feedback), up to the dispatch plan.

Generation is a parameter: any callable that maps a :class:`GenerationRequest` to the
:class:`Reply` an agent emits (its raw text and cost) (a learned model, an API, a deterministic rule, a replay of
recorded outputs). The protocol never sees an agent's private context; the callable
closes over it. Every stage failure becomes ``Fail(code)`` with the typed error, so
nothing a model or peer sends can raise out of these functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from gencoord.dsl.ast import PeerRequest, Proposal
from gencoord.dsl.serialize import request_line, serialize
from gencoord.errors import ContractError, FailureCode, MaterializationError, ParseError, ResolutionError
from gencoord.prior.contract import check_proposal
from gencoord.prior.episode import PublicEpisode
from gencoord.prior.prior import Prior
from gencoord.protocol.resolve import resolve_feedback, resolve_forward
from gencoord.protocol.response import check_response, parse_response, respond
from gencoord.protocol.result import Fail, Generation, NoCommitment, ProtocolResult, Reply, Success, Trace
from gencoord.runtime.materialize import materialize

ProtocolError = ParseError | ContractError | ResolutionError | MaterializationError
_PROTOCOL_ERRORS = (ParseError, ContractError, ResolutionError, MaterializationError)
"""What a model or peer can cause; anything else (a misconfigured backend) is a bug to raise."""


class Stage(StrEnum):
    SENDER_INITIAL = "sender_initial"
    RECEIVER_AFTER_REQUEST = "receiver_after_request"
    RECEIVER_WITHOUT_REQUEST = "receiver_without_request"
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


Generator = Callable[[GenerationRequest], Reply]
Responder = Callable[[str], str]
"""The peer side of feedback: delivered REQ line → response line (a policy or a fault)."""
Channel = Callable[[str], str]
"""What the wire does to a REQ line in transit: identity, or an intervention's substitution."""


def _identity(line: str) -> str:
    return line


def _generate(generate: Generator, request: GenerationRequest, trace: Trace) -> str:
    reply = generate(request)
    trace.generations.append(Generation(request.agent, request.stage.value, reply))
    return reply.text


def _checked(raw: str, agent: str, prior: Prior, episode: PublicEpisode, trace: Trace) -> Proposal:
    proposal = prior.parse(raw)
    check_proposal(proposal, agent, prior, episode)
    trace.proposals.append((agent, proposal))
    return proposal


def _propose(
    generate: Generator, request: GenerationRequest, prior: Prior, episode: PublicEpisode, trace: Trace
) -> tuple[Proposal, PeerRequest]:
    """A checked SELF+REQ record with exactly one request, addressed to ``request.peer``."""
    proposal = _checked(_generate(generate, request, trace), request.agent, prior, episode, trace)
    peer_request = proposal.request
    if peer_request is None or not peer_request.plan:
        raise ContractError("REQUEST_COUNT", f"expected exactly one peer request, found {len(proposal.peer_requests)}")
    if peer_request.target != request.peer:
        raise ContractError("REQUEST_TARGET", f"the request is addressed to {peer_request.target}, not {request.peer}")
    return proposal, peer_request


def _fail(error: ProtocolError, trace: Trace) -> Fail:
    return Fail(FailureCode(error.code), error, trace)


def _receiver_answer(raw: str, receiver: str, prior: Prior, episode: PublicEpisode, trace: Trace) -> Proposal:
    answer = _checked(raw, receiver, prior, episode, trace)
    if not answer.self_plan or answer.peer_requests:
        raise ContractError("RECEIVER_SHAPE", "the receiver must answer with a non-empty SELF and 'REQ -'")
    return answer


def run_forward(
    generate: Generator,
    sender: str,
    receiver: str,
    prior: Prior,
    episode: PublicEpisode,
    channel: Channel = _identity,
) -> ProtocolResult:
    """Algorithm S1: sender SELF+REQ → delivered REQ → receiver SELF → Resolve→ → Materialize.

    The commitment binds the receiver to the request it *received*: with a substituting
    ``channel`` (the legal-alternative intervention) the delivered REQ, checked again on
    arrival, is what Resolve→ matches the receiver's path against.
    """
    trace = Trace()
    try:
        sent, request = _propose(
            generate, GenerationRequest(sender, Stage.SENDER_INITIAL, receiver), prior, episode, trace
        )
        delivered = trace.wire.send(sender, receiver, "REQ", channel(request_line(request)))
        if channel is not _identity:
            arrived = _checked(f"SELF -\n{delivered}", sender, prior, episode, Trace()).request
            if arrived is None:
                raise ContractError("REQUEST_COUNT", "the channel delivered no request")
            sent = Proposal(sent.self_plan, (arrived,))
        raw = _generate(
            generate,
            GenerationRequest(receiver, Stage.RECEIVER_AFTER_REQUEST, sender, delivered_request=delivered),
            trace,
        )
        answer = _receiver_answer(raw, receiver, prior, episode, trace)
        commitment = resolve_forward(sent, sender, answer, receiver, prior, episode)
        return Success(commitment, materialize(commitment, prior, episode), trace)
    except _PROTOCOL_ERRORS as error:
        return _fail(error, trace)


def run_without_request(
    generate: Generator, sender: str, receiver: str, prior: Prior, episode: PublicEpisode
) -> ProtocolResult:
    """The request-removed intervention: the REQ is withheld; the receiver plans from its own view.

    The joint plan pairs the sender's SELF with the receiver's independent choice (as if
    that choice were the request), so it forms and executes, and the original task
    judges whether the receiver guessed the sender's private branch.
    """
    trace = Trace()
    try:
        sent, _ = _propose(generate, GenerationRequest(sender, Stage.SENDER_INITIAL, receiver), prior, episode, trace)
        raw = _generate(generate, GenerationRequest(receiver, Stage.RECEIVER_WITHOUT_REQUEST, sender), trace)
        answer = _receiver_answer(raw, receiver, prior, episode, trace)
        joint = Proposal(sent.self_plan, (PeerRequest(receiver, answer.self_plan),))
        commitment = resolve_forward(joint, sender, answer, receiver, prior, episode)
        return Success(commitment, materialize(commitment, prior, episode), trace)
    except _PROTOCOL_ERRORS as error:
        return _fail(error, trace)


def run_feedback(
    generate: Generator, respond: Responder, requester: str, peer: str, prior: Prior, episode: PublicEpisode
) -> ProtocolResult:
    """Algorithm S2: requester SELF+REQ → bounded response → revision → Resolve← → Materialize."""
    trace = Trace()
    try:
        opening = GenerationRequest(requester, Stage.REQUESTER_INITIAL, peer)
        initial, request = _propose(generate, opening, prior, episode, trace)
        delivered = trace.wire.send(requester, peer, "REQ", request_line(request))
        reply = trace.wire.send(peer, requester, "RESPONSE", respond(delivered))
        response = parse_response(reply)
        trace.responses.append(response)
        check_response(response, request, requester, prior)
        if response.decision == "REJECT":
            return NoCommitment(response.reason or "REJECT", trace)
        revision = GenerationRequest(
            requester,
            Stage.REQUESTER_AFTER_RESPONSE,
            peer,
            initial_proposal=serialize(initial, prior.vocab),
            response=reply,
        )
        revised, _ = _propose(generate, revision, prior, episode, trace)
        commitment = resolve_feedback(initial, revised, response, requester, peer, prior, episode)
        return Success(commitment, materialize(commitment, prior, episode), trace)
    except _PROTOCOL_ERRORS as error:
        return _fail(error, trace)


def policy_responder(mode: str, requester: str, prior: Prior) -> Responder:
    """The deterministic peer: parse the delivered REQ, answer from the workcell mode."""

    def answer(delivered: str) -> str:
        request = prior.parse(f"SELF -\n{delivered}").request
        assert request is not None  # the wire carries the REQ line we serialized
        return respond(request, requester, mode, prior).serialize()

    return answer
