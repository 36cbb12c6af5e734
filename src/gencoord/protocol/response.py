"""Bounded feedback: ACCEPT / REJECT / COUNTER(α), its wire form, policy and validity (Table S3).

Wire form, one line: ``DECISION key=value ...`` with atom values, e.g.
``COUNTER counter_offer_id=CRAFT_AT_REQUESTER_HANDOFF_FINISHED reason=FINISHED_ITEM_REQUIRED``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gencoord.dsl.ast import PeerRequest
from gencoord.dsl.parse import ATOM, check_size
from gencoord.errors import ContractError, Location, ParseError
from gencoord.prior.branches import branch_index
from gencoord.prior.compose import compose
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason

DECISIONS = ("ACCEPT", "COUNTER", "REJECT")
_WHERE = Location(line=1, section="RESPONSE")


@dataclass(frozen=True, slots=True)
class Response:
    decision: str
    reason: str | None = None
    counter_offer_id: str | None = None
    extra: tuple[tuple[str, str], ...] = field(default=())

    def serialize(self) -> str:
        fields = [f"counter_offer_id={self.counter_offer_id}"] if self.counter_offer_id else []
        fields += [f"reason={self.reason}"] if self.reason else []
        fields += [f"{key}={value}" for key, value in self.extra]
        return " ".join([self.decision, *fields])


def parse_response(message: str | bytes) -> Response:
    """Syntax only; what the fields may be is :func:`check_response`'s job."""
    text = check_size(message).removesuffix("\n")
    tokens = text.split(" ")
    if not text or "\n" in text or any(not token for token in tokens):
        raise ParseError(Reason.MALFORMED_RESPONSE, "a response is one line: DECISION key=value ...", _WHERE)
    fields: dict[str, str] = {}
    for token in tokens[1:]:
        key, sep, value = token.partition("=")
        if not sep or not key or ATOM.fullmatch(value) is None:
            raise ParseError(Reason.MALFORMED_RESPONSE, f"expected key=value, found {token[:40]!r}", _WHERE)
        if key in fields:
            raise ParseError(Reason.DUPLICATE_KEY, f"duplicate response field {key!r}", _WHERE)
        fields[key] = value
    reason = fields.pop("reason", None)
    counter = fields.pop("counter_offer_id", None)
    return Response(tokens[0], reason, counter, tuple(fields.items()))


def _requested_skills(binding: str, requester: str, peer: str, prior: Prior) -> set[str]:
    """The skills a binding asks of the peer (independent of quantities)."""
    proposal = compose(prior, prior.codebook[binding], binding, sender=requester, receiver=peer)
    return {task.skill for request in proposal.peer_requests for task in request.plan}


def _request_bindings(request: PeerRequest, requester: str | None, prior: Prior) -> set[str]:
    return branch_index(prior).bindings_of_request(request.plan, requester, request.target)


def check_response(response: Response, request: PeerRequest, requester: str, prior: Prior) -> None:
    """ResponseValid: raise CONTRACT_REJECT for an unknown decision, forbidden field or bad alternative."""
    if response.decision not in DECISIONS:
        raise ContractError(
            Reason.UNKNOWN_DECISION,
            f"unknown decision {response.decision!r}; expected one of {', '.join(DECISIONS)}",
            _WHERE,
        )
    if response.extra:
        raise ContractError(Reason.FORBIDDEN_FIELD, f"field {response.extra[0][0]!r} is not part of a response", _WHERE)
    if not response.reason:
        raise ContractError(Reason.MISSING_REASON, f"{response.decision} needs a reason code", _WHERE)
    if response.decision != "COUNTER":
        if response.counter_offer_id is not None:
            raise ContractError(Reason.FORBIDDEN_FIELD, f"{response.decision} carries no counter_offer_id", _WHERE)
        return
    offer = prior.counter_offers.get(response.counter_offer_id or "")
    if offer is None:
        raise ContractError(
            Reason.INADMISSIBLE_COUNTER, f"unknown counter_offer_id {response.counter_offer_id!r}", _WHERE
        )
    if not _request_bindings(request, requester, prior) & set(offer.moves):
        raise ContractError(
            Reason.INADMISSIBLE_COUNTER, f"{response.counter_offer_id} offers no alternative to this request", _WHERE
        )


def respond(request: PeerRequest, requester: str, mode: str, prior: Prior) -> Response:
    """The deterministic capability policy: no model call, finite alternatives.

    ACCEPT when the peer's workcell can do every requested skill; otherwise COUNTER with
    the first offer whose alternative leaves the peer only skills it can do; otherwise
    REJECT. The peer sees the request and its own mode, never the requester's context.
    """
    workcell = prior.workcell_modes.get(mode)
    if workcell is None:
        raise ContractError(Reason.UNKNOWN_MODE, f"unknown workcell mode {mode!r}", _WHERE)
    can = set(workcell.can)
    if all(task.skill in can for task in request.plan):
        return Response("ACCEPT", workcell.accept_reason)
    for source in sorted(_request_bindings(request, requester, prior)):
        for offer_id, offer in prior.counter_offers.items():
            target = offer.moves.get(source)
            if target is None:
                continue
            skills = _requested_skills(target, requester, request.target, prior)
            if skills <= can:
                return Response("COUNTER", offer.reason, offer_id)
    return Response("REJECT", prior.document.feedback.reject_reason)
