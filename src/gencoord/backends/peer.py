"""The rule peer of a team task (and the gate's helper): what a teammate answers from its own bag, zero model calls.

A team peer speaks twice: it answers the lead's supply question (``HAVE``, the counts of the
asked items it holds and the skills it cannot use) and it decides on the projection of a
proposal it receives (``ACCEPT``, ``COUNTER`` with the item it holds too few of, or ``REJECT``
with the skill it cannot use). Any backend can play a peer by writing those two lines
(stages ``team_have`` and ``team_response``); this one is the truthful deterministic rule
every other is measured against, and the default. In the escalation gate the same peer is the
helper asked for items (stage ``gate_help``): it answers from what it can spare, by the gate's rule.
"""

from __future__ import annotations

from collections.abc import Mapping

from gencoord.dsl.ast import Path, Proposal, Task
from gencoord.errors import ConfigError, ResolutionError
from gencoord.prior.ledger import consumption, production
from gencoord.prior.prior import Prior
from gencoord.protocol.commitment import Handoff, RolePath
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.protocol.resolve import check_ledgers
from gencoord.protocol.response import Response
from gencoord.protocol.supply import SupplyQuery, answer
from gencoord.reasons import Reason
from gencoord.tasks.context import LocalContext
from gencoord.tasks.team import TeamAgent

PEER_STAGES = (Stage.TEAM_HAVE, Stage.TEAM_RESPONSE, Stage.GATE_HELP)
READY = "ready"
"""A gate helper's private field: its own nodes it could start now (what a dependency escalation asks), one task
each, joined by :data:`READY_SEPARATOR` (they are no path: a path is capped at the prior's length)."""
READY_SEPARATOR = " | "


def own_agent(context: LocalContext) -> TeamAgent:
    """The peer itself, as its context holds it (its bag and the skills it cannot use)."""
    return TeamAgent(name=context.agent, inventory=dict(context.inventory), blocked=list(context.blocked))


def peer_decision(proposal: Proposal, peer: TeamAgent, lead: str, prior: Prior) -> Response:
    """A peer's rule: accept the path asked of it when its own bag, what it is handed, and its skills carry it out."""
    mine = next(request.plan for request in proposal.peer_requests if request.target == peer.name)
    blocked = next((task.skill for task in mine if task.skill in peer.blocked), None)
    if blocked is not None:
        return Response("REJECT", "BLOCKED_SKILL", extra=(("skill", blocked),))
    others = [proposal.self_plan, *(r.plan for r in proposal.peer_requests if r.target != peer.name)]
    incoming = tuple(
        Handoff(lead, peer.name, str(task.get("item")), int(task.get("q") or 0), (lead, 0), None)
        for path in others
        for task in path
        if task.get("to") == peer.name
    )
    try:
        check_ledgers((RolePath(peer.name, mine),), incoming, prior, {peer.name: dict(peer.inventory)})
    except ResolutionError:
        item, have = _first_short(mine, peer, prior)
        return Response("COUNTER", "SHORT", extra=(("item", item), ("have", str(have))))
    return Response("ACCEPT", "CAN_DO")


def _first_short(path: Path, peer: TeamAgent, prior: Prior) -> tuple[str, int]:
    """The first item the peer's path uses beyond what it holds, and how many it holds."""
    stock = dict(peer.inventory)
    for task in path:
        for item, used in consumption(task, prior).items():
            if stock.get(item, 0) < used:
                return item, peer.inventory.get(item, 0)
            stock[item] = stock.get(item, 0) - used
        for item, made in production(task, prior).items():
            stock[item] = stock.get(item, 0) + made
    return "", 0


def helper_decision(path: Path, ready: set[Task], spare: Mapping[str, int]) -> Response:
    """A gate helper's answer to the path asked of it (the escalation gate's rule).

    A node of its own it can start now (what a dependency escalation asks) is accepted as
    planned; a delivery from spare items is accepted; a delivery it can only partly
    cover is countered with what it has; anything else is rejected.
    """
    short: tuple[str, int] | None = None
    for task in path:
        if task in ready:
            continue
        item, count = task.get("item"), task.get("q")
        if task.skill != "resource.deliver" or not task.has("to") or not isinstance(item, str):
            return Response("REJECT", "NOT_READY")
        have = spare.get(item, 0)
        if isinstance(count, int) and have < count:
            if have <= 0:
                return Response("REJECT", "CANNOT_SUPPLY", extra=(("item", item),))
            short = short or (item, have)
    if short is not None:
        return Response("COUNTER", "SHORT", extra=(("item", short[0]), ("have", str(short[1]))))
    return Response("ACCEPT", "ALREADY_PLANNED" if all(task in ready for task in path) else "CAN_SUPPLY")


class RulePeer:
    """The truthful peer: its counts of what was asked, and the ledger check of the path it is asked to run."""

    name = "rule"

    def __init__(self, prior: Prior) -> None:
        self.prior = prior

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        agent = own_agent(context)
        if request.stage is Stage.TEAM_HAVE and request.delivered_request is not None:
            query = SupplyQuery(tuple(request.delivered_request.split(" ")[1:]))  # the peer's own expansion
            return Reply(answer(query, dict(agent.inventory), list(agent.blocked)).serialize(), model_calls=0)
        if request.stage is Stage.TEAM_RESPONSE and request.delivered_request is not None:
            proposal = self.prior.parse(request.delivered_request)
            return Reply(peer_decision(proposal, agent, request.peer, self.prior).serialize(), model_calls=0)
        if request.stage is Stage.GATE_HELP and request.delivered_request is not None:
            proposal = self.prior.parse(request.delivered_request)
            path = next(r.plan for r in proposal.peer_requests if r.target == context.agent)
            listed = context.private[READY].split(READY_SEPARATOR) if READY in context.private else []
            ready = {task for text in listed for task in self.prior.parse_path(text)}
            return Reply(helper_decision(path, ready, context.inventory).serialize(), model_calls=0)
        raise ConfigError(
            Reason.BACKEND_STAGE, f"a team peer answers {', '.join(PEER_STAGES)}, not {request.stage.value}"
        )
