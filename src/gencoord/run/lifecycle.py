"""Algorithms S1 (forward) and S2 (bounded feedback), up to the dispatch plan.

Generation is a parameter: any callable that maps a :class:`GenerationRequest` to the
:class:`Reply` an agent emits (a learned model, an API, a deterministic rule, a replay
of recorded outputs). The protocol never sees an agent's private context; the callable
closes over it. The surface (Short DSL by default, or JSON) decides only the wire form.
Every stage failure becomes ``Fail(code)`` with the typed error, so nothing a model or
peer sends can raise out of these functions.
"""

from __future__ import annotations

from collections.abc import Callable

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task
from gencoord.dsl.dialogue import Turn, extract, sender_done
from gencoord.dsl.surface import DslSurface, Surface
from gencoord.errors import ContractError, FailureCode, Location, MaterializationError, ParseError, ResolutionError
from gencoord.prior.contract import check_proposal
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.commitment import Commitment
from gencoord.protocol.delivery import DeliveryRejectedError
from gencoord.protocol.generation import Generation, GenerationRequest, Generator, Stage
from gencoord.protocol.resolve import resolve_feedback, resolve_forward
from gencoord.protocol.response import check_response, parse_response, respond
from gencoord.protocol.result import Fail, NoCommitment, ProtocolResult, Success, Trace
from gencoord.reasons import Reason
from gencoord.runtime.materialize import materialize

ProtocolError = ParseError | ContractError | ResolutionError | MaterializationError | DeliveryRejectedError
PROTOCOL_ERRORS = (ParseError, ContractError, ResolutionError, MaterializationError, DeliveryRejectedError)
"""What a model or peer can cause; anything else (a misconfigured backend) is a bug to raise."""


Responder = Callable[[str], str]
"""The peer side of feedback: delivered REQ line → response line (a policy or a fault)."""
Channel = Callable[[str], str]
"""What the wire does to a REQ line in transit: identity, or an intervention's substitution."""


def _identity(line: str) -> str:
    return line


class Session:
    """One protocol run: the shared prior and episode, the surface spoken, and the trace."""

    def __init__(self, generate: Generator, prior: Prior, episode: PublicEpisode, surface: Surface | None) -> None:
        self.generate = generate
        self.prior = prior
        self.episode = episode
        self.surface = surface or DslSurface(prior.vocab)
        self.trace = Trace()

    def reply(self, request: GenerationRequest) -> str:
        reply = self.generate(request)
        self.trace.generations.append(Generation(request.agent, request.stage.value, reply))
        return reply.text

    def checked(self, proposal: Proposal, agent: str) -> Proposal:
        check_proposal(proposal, agent, self.prior, self.episode)
        self.trace.proposals.append((agent, proposal))
        return proposal

    def propose(self, request: GenerationRequest) -> tuple[Proposal, PeerRequest]:
        """A checked SELF+REQ record with exactly one request, addressed to ``request.peer``."""
        return self.proposed(self.surface.parse(self.reply(request)), request.agent, request.peer)

    def proposed(self, proposal: Proposal, agent: str, peer: str) -> tuple[Proposal, PeerRequest]:
        proposal = self.checked(proposal, agent)
        peer_request = proposal.request
        if peer_request is None or not peer_request.plan:
            found = len(proposal.peer_requests)
            raise ContractError(Reason.REQUEST_COUNT, f"expected exactly one peer request, found {found}")
        if peer_request.target != peer:
            raise ContractError(Reason.REQUEST_TARGET, f"the request is addressed to {peer_request.target}, not {peer}")
        return proposal, peer_request

    def answer(self, request: GenerationRequest) -> Proposal:
        """A receiver's checked record: a non-empty SELF and no request."""
        return self.answered(self.surface.parse(self.reply(request)), request.agent)

    def answered(self, answer: Proposal, agent: str) -> Proposal:
        answer = self.checked(answer, agent)
        if not answer.self_plan or answer.peer_requests:
            raise ContractError(Reason.RECEIVER_SHAPE, "the receiver must answer with a non-empty SELF and no request")
        return answer

    def deliver(
        self,
        sent: Proposal,
        request: PeerRequest,
        sender: str,
        receiver: str,
        channel: Channel = _identity,
        sender_path: Path | None = None,
    ) -> Success:
        """Send the REQ through ``channel``, take the receiver's answer, resolve forward.

        The commitment binds the receiver to the request it *received*: with a
        substituting channel (the legal-alternative intervention) the delivered REQ,
        checked again on arrival, is what Resolve→ matches the receiver's path against.
        ``sender_path`` swaps the sender's own path with it, where the alternative branch
        asks the sender to do something else too (the Allocation family).
        """
        delivered = self.trace.wire.send(sender, receiver, "REQ", channel(self.surface.request(request)))
        if channel is not _identity:
            arrived = self.surface.delivered(delivered)
            check_proposal(arrived, sender, self.prior, self.episode)
            if arrived.request is None:
                raise ContractError(Reason.REQUEST_COUNT, "the channel delivered no request")
            sent = Proposal(sender_path or sent.self_plan, (arrived.request,))
            if sender_path is not None:
                check_proposal(sent, sender, self.prior, self.episode)
        stage = GenerationRequest(receiver, Stage.RECEIVER_AFTER_REQUEST, sender, delivered_request=delivered)
        answer = self.answer(stage)
        return self.success(resolve_forward(sent, sender, answer, receiver, self.prior, self.episode))

    def success(self, commitment: Commitment) -> Success:
        return Success(commitment, materialize(commitment, self.prior, self.episode), self.trace)

    def fail(self, error: ProtocolError) -> Fail:
        return Fail(FailureCode(error.code), error, self.trace)


def run_forward(
    generate: Generator,
    sender: str,
    receiver: str,
    prior: Prior,
    episode: PublicEpisode,
    channel: Channel = _identity,
    surface: Surface | None = None,
    sender_path: Path | None = None,
) -> ProtocolResult:
    """Algorithm S1: sender SELF+REQ → delivered REQ → receiver SELF → Resolve→ → Materialize.

    ``channel`` and ``sender_path`` are the legal-alternative intervention's substitutions.
    """
    session = Session(generate, prior, episode, surface)
    try:
        sent, request = session.propose(GenerationRequest(sender, Stage.SENDER_INITIAL, receiver))
        return session.deliver(sent, request, sender, receiver, channel, sender_path)
    except PROTOCOL_ERRORS as error:
        return session.fail(error)


def run_requester_plan(
    generate: Generator,
    requester: str,
    peer: str,
    prior: Prior,
    episode: PublicEpisode,
    surface: Surface | None = None,
    state: str | None = None,
) -> ProtocolResult:
    """Requester-local planning, or with ``state`` the centralized reference: one learned call each.

    The requester's SELF+REQ is final: the REQ is delivered and the peer takes it on as its
    SELF without a model call and without answering, so nothing crosses back (the paper's
    requester-local condition, 0 B from the peer). ``state`` is the peer's local view,
    uploaded first (kind ``STATE``: the state aggregation a centralized planner pays);
    the caller's generator then plans from the merged views.
    """
    session = Session(generate, prior, episode, surface)
    wire = session.trace.wire
    try:
        if state is not None:
            wire.send(peer, requester, "STATE", state)
        sent, request = session.propose(GenerationRequest(requester, Stage.REQUESTER_INITIAL, peer))
        wire.send(requester, peer, "REQ", session.surface.request(request))
        taken = session.checked(Proposal(request.plan, ()), peer)
        return session.success(resolve_forward(sent, requester, taken, peer, prior, episode))
    except PROTOCOL_ERRORS as error:
        return session.fail(error)


def run_single_step(
    generate: Generator,
    sender: str,
    receiver: str,
    prior: Prior,
    episode: PublicEpisode,
    advance: Callable[[str, Task], None],
    surface: Surface | None = None,
) -> ProtocolResult:
    """The single-step horizon (S7): commit one sender step, carry it out, decide the rest there.

    The sender first commits only its next step (``SELF <step>``, ``REQ -``); ``advance``
    carries it out for the sender's view; at that intermediate state the sender is asked
    again and writes its remaining path and the REQ. The commitment then joins the step
    already taken to the rest and resolves forward as usual: three decisions, not two.
    """
    session = Session(generate, prior, episode, surface)
    try:
        first = session.checked(
            session.surface.parse(session.reply(GenerationRequest(sender, Stage.SENDER_STEP, receiver))), sender
        )
        if len(first.self_plan) != 1 or first.peer_requests:
            raise ContractError(
                Reason.SINGLE_STEP_SHAPE, "a single-step sender commits exactly one SELF task and no request"
            )
        advance(sender, first.self_plan[0])
        later = GenerationRequest(
            sender, Stage.SENDER_AFTER_OBTAIN, receiver, executed=session.surface.serialize(first)
        )
        rest, request = session.propose(later)
        return session.deliver(
            Proposal(first.self_plan + rest.self_plan, rest.peer_requests), request, sender, receiver
        )
    except PROTOCOL_ERRORS as error:
        return session.fail(error)


def run_dialogue(
    generate: Generator, sender: str, receiver: str, prior: Prior, episode: PublicEpisode, max_rounds: int = 8
) -> ProtocolResult:
    """Controlled free-form: turns alternate until the sender is done, then the shared extractor
    recovers SELF+REQ and the receiver's SELF, which resolve forward like any other record.

    Every turn crosses the wire (kind ``SAY``), so wire bytes count the whole dialogue. A
    sender that never says it is done within ``max_rounds`` forms no commitment.
    """
    session = Session(generate, prior, episode, None)
    wire = session.trace.wire
    said: list[str] = []
    try:
        for _ in range(max_rounds):
            text = session.reply(GenerationRequest(sender, Stage.DIALOGUE_SENDER, receiver, dialogue=tuple(said)))
            said.append(Turn(sender, wire.send(sender, receiver, "SAY", text)).line())
            reply = session.reply(GenerationRequest(receiver, Stage.DIALOGUE_RECEIVER, sender, dialogue=tuple(said)))
            said.append(Turn(receiver, wire.send(receiver, sender, "SAY", reply)).line())
            if sender_done(text):
                break
        else:
            raise ParseError(
                Reason.DIALOGUE_UNFINISHED,
                f"{sender} did not finish within {max_rounds} rounds",
                Location(section="DIALOGUE"),
            )
        proposal, answer = extract(said, sender, receiver, prior.vocab)
        sent, _ = session.proposed(proposal, sender, receiver)
        taken = session.answered(answer, receiver)
        return session.success(resolve_forward(sent, sender, taken, receiver, prior, episode))
    except PROTOCOL_ERRORS as error:
        return session.fail(error)


def run_without_request(
    generate: Generator,
    sender: str,
    receiver: str,
    prior: Prior,
    episode: PublicEpisode,
    surface: Surface | None = None,
) -> ProtocolResult:
    """The request-removed intervention: the REQ is withheld; the receiver plans from its own view.

    The joint plan pairs the sender's SELF with the receiver's independent choice (as if
    that choice were the request), so it forms and executes, and the original task
    judges whether the receiver guessed the sender's private branch.
    """
    session = Session(generate, prior, episode, surface)
    try:
        sent, _ = session.propose(GenerationRequest(sender, Stage.SENDER_INITIAL, receiver))
        answer = session.answer(GenerationRequest(receiver, Stage.RECEIVER_WITHOUT_REQUEST, sender))
        joint = Proposal(sent.self_plan, (PeerRequest(receiver, answer.self_plan),))
        return session.success(resolve_forward(joint, sender, answer, receiver, prior, episode))
    except PROTOCOL_ERRORS as error:
        return session.fail(error)


def run_feedback(
    generate: Generator,
    respond: Responder,
    requester: str,
    peer: str,
    prior: Prior,
    episode: PublicEpisode,
    surface: Surface | None = None,
) -> ProtocolResult:
    """Algorithm S2: requester SELF+REQ → bounded response → revision → Resolve← → Materialize."""
    session = Session(generate, prior, episode, surface)
    trace = session.trace
    try:
        initial, request = session.propose(GenerationRequest(requester, Stage.REQUESTER_INITIAL, peer))
        delivered = trace.wire.send(requester, peer, "REQ", session.surface.request(request))
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
            initial_proposal=session.surface.serialize(initial),
            response=reply,
        )
        revised, _ = session.propose(revision)
        return session.success(resolve_feedback(initial, revised, response, requester, peer, prior, episode))
    except PROTOCOL_ERRORS as error:
        return session.fail(error)


def policy_responder(mode: str, requester: str, prior: Prior, surface: Surface | None = None) -> Responder:
    """The deterministic peer: decode the delivered REQ, answer from the workcell mode."""
    spoken = surface or DslSurface(prior.vocab)

    def answer(delivered: str) -> str:
        request = spoken.delivered(delivered).request
        assert request is not None  # the wire carries the REQ we serialized
        return respond(request, requester, mode, prior).serialize()

    return answer
