"""A team's exchange before anything is done: the lead's supply questions, the peers' answers, drafts and decisions.

The lead asks what each peer holds and can do (a supply query), reads the answers into its
view, and proposes drafts until every peer accepts one, or the rounds run out
(:func:`negotiate`). :mod:`gencoord.run.team` runs a whole task around it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from gencoord.backends.base import Backend, speaks
from gencoord.dsl import team_dialogue
from gencoord.dsl.ast import Path, Proposal
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ParseError
from gencoord.planning.feasibility import closure_items, planning_game
from gencoord.prior.contract import check_proposal
from gencoord.prior.gamedata import GameData
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode, Ref
from gencoord.protocol.commitment import Commitment
from gencoord.protocol.generation import Generation, GenerationRequest, Reply, Stage
from gencoord.protocol.resolve import resolve_team
from gencoord.protocol.response import DECISIONS, Response, parse_response
from gencoord.protocol.supply import SupplyQuery, parse_answer, parse_query
from gencoord.protocol.wire import Wire
from gencoord.reasons import Reason
from gencoord.tasks.build import BuildTask
from gencoord.tasks.context import LocalContext
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.team import TeamAgent, TeamTask

Viewed = TypeVar("Viewed", TeamTask, BuildTask, CookingTask)
"""A task as the lead sees it: its own bag, and what peers said of theirs."""
View_contra = TypeVar("View_contra", TeamTask, BuildTask, CookingTask, contravariant=True)

MAX_ROUNDS = 3
"""Proposals the lead may make before the team gives up (``NO_AGREEMENT``)."""


class Speaker:
    """One surface for every message of the exchange: typed lines, or controlled sentences."""

    def __init__(self, surface: SurfaceName, prior: Prior, wire: Wire, task: TeamTask) -> None:
        self.free = surface is SurfaceName.FREEFORM
        self.prior, self.wire, self.task = prior, wire, task

    def ask(self, query: SupplyQuery, lead: str, peer: str) -> SupplyQuery:
        """Ask ``peer``; what the peer understood comes back (expanded with its copy of the prior)."""
        goal = self.task.goal
        if self.free:
            sent = self.wire.send(lead, peer, "ASK", team_dialogue.say_ask(goal.item, goal.count, lead, peer))
            return parse_query(f"ASK FOR {team_dialogue.hear_ask(sent)}", self.expand)
        return parse_query(self.wire.send(lead, peer, "ASK", query.serialize()), self.expand)

    def expand(self, goal: str) -> tuple[str, ...]:
        if not self.prior.game.is_item(goal):
            raise ParseError(Reason.UNKNOWN_ITEM, f"ASK FOR names {goal[:40]!r}, which is not an item")
        return recipe_closure(planning_game(self.task, self.prior), goal)

    def have(self, said: str, peer: str, lead: str, query: SupplyQuery, spoken: bool = False) -> str:
        """Carry ``peer``'s answer to the lead; what the lead heard comes back (a typed line).

        ``spoken``: the peer wrote its own words, which go on the wire as written and are read
        by the extractor; otherwise its typed line is said in controlled sentences.
        """
        if not self.free:
            return self.wire.send(peer, lead, "HAVE", said)
        if spoken:
            return team_dialogue.hear_have(self.wire.send(peer, lead, "HAVE", said))
        reply = parse_answer(said, query)  # a peer's own line, read before it is put into words
        sent = self.wire.send(peer, lead, "HAVE", team_dialogue.say_have(reply.holds, reply.cannot, lead, peer))
        return team_dialogue.hear_have(sent)

    def propose(self, proposal: Proposal, lead: str, peer: str) -> tuple[Proposal, str]:
        """Deliver the commitment to ``peer``; what the peer heard comes back, and the text it heard it in."""
        if not self.free:
            sent = self.wire.send(lead, peer, "PROPOSAL", self.prior.serialize(proposal))
            return self.prior.parse(sent), sent
        turns = team_dialogue.say_proposal(proposal, lead, peer)
        heard = []
        for index, turn in enumerate(turns):
            heard.append(self.wire.send(lead, peer, "PROPOSAL", turn))
            if index < len(turns) - 1:  # the peer takes each step on; its answer to the last turn is its decision
                steps = next(r.plan for r in proposal.peer_requests if r.target == peer)
                self.wire.send(peer, lead, "DIALOGUE", team_dialogue.say_step(steps[index], lead))
        return team_dialogue.hear_proposal(" ".join(heard), self.prior.vocab), " ".join(heard)

    def relay(self, words: str, lead: str, peer: str) -> tuple[Proposal, str]:
        """A speaking lead's own words to ``peer``, whole (the free-form convention lets every peer hear the
        whole plan); what the peer heard comes back."""
        sent = self.wire.send(lead, peer, "PROPOSAL", words)
        return team_dialogue.hear_proposal(sent, self.prior.vocab), sent

    def respond(self, said: str, heard: Proposal, peer: str, lead: str, spoken: bool = False) -> Response:
        """Carry ``peer``'s decision to the lead; what the lead heard comes back, checked."""
        if not self.free:
            return heard_response(self.wire.send(peer, lead, "RESPONSE", said))
        if spoken:
            return heard_response(team_dialogue.hear_response(self.wire.send(peer, lead, "RESPONSE", said)))
        response = heard_response(said)
        last = next(r.plan for r in heard.peer_requests if r.target == peer)[-1]
        words = team_dialogue.say_response(response.decision, dict(response.extra), lead, last)
        return heard_response(team_dialogue.hear_response(self.wire.send(peer, lead, "RESPONSE", words)))


def heard_response(text: str) -> Response:
    """A peer's decision as the lead reads it: one of the three, with the field its correction needs.

    A peer is any backend, so its line is untrusted: a decision outside ACCEPT, COUNTER and
    REJECT, or a COUNTER without ``item`` or a REJECT without ``skill``, is refused with its
    code rather than read as a refusal that corrects nothing.
    """
    response = parse_response(text)
    fields = dict(response.extra)
    if response.decision not in DECISIONS:
        raise ParseError(
            Reason.UNKNOWN_DECISION, f"a peer answers ACCEPT, COUNTER or REJECT, not {response.decision[:40]!r}"
        )
    if response.decision == "COUNTER" and not {"item", "have"} <= fields.keys():
        raise ParseError(
            Reason.MALFORMED_RESPONSE, "a COUNTER names the item it holds too few of: item=<item> have=<n>"
        )
    if response.decision == "REJECT" and "skill" not in fields:
        raise ParseError(Reason.MALFORMED_RESPONSE, "a REJECT names the skill it cannot use: skill=<skill>")
    return response


def recipe_closure(game: GameData, goal: str) -> tuple[str, ...]:
    """What ``ASK FOR <goal>`` covers: every item the goal's recipes (and a crafting table's) can use.

    ``game`` is the recipes of the task's world, public to every agent: with a furnace,
    smelting inputs and fuels are covered too.
    """
    return tuple(sorted(closure_items(game, goal, table_needed=True)))


def supply_question(task: TeamTask, prior: Prior) -> SupplyQuery:
    return SupplyQuery(recipe_closure(planning_game(task, prior), task.goal.item), task.goal.item)


def projected(proposal: Proposal, peer: str) -> Proposal:
    """What ``peer`` is told: its own REQ line, and the lines of whoever hands it items.

    As in the paper, where the receiver gets the REQ line and not the sender's whole
    plan, a peer learns only what concerns it: its path and what it will receive (which
    it needs to check its own ledger). The lead resolves the whole commitment.
    """

    def gives(path: Path) -> bool:
        return any(task.get("to") == peer for task in path)

    own = proposal.self_plan if gives(proposal.self_plan) else ()
    lines = tuple(r for r in proposal.peer_requests if r.target == peer or gives(r.plan))
    return Proposal(own, lines)


@dataclass
class Peers:
    """The peers' side of an exchange: each answers through the team's peer backend, from its own context only.

    A peer sees its own bag and blocked skills (``task`` holds the true bags), the world's
    places, and what arrived: the supply question, expanded as its copy of the prior reads
    it, or the projection of a proposal. Every answer is a generation of the record, so a
    model peer's calls, tokens and time are counted like the lead's.
    """

    backend: Backend
    task: TeamTask | BuildTask | CookingTask
    refs: Mapping[str, Ref]
    surface: SurfaceName
    generations: list[Generation] = field(default_factory=list)

    def context(self, name: str, lead: str) -> LocalContext:
        own = _agent(self.task, name)
        blocked = tuple(sorted(own.blocked))
        return LocalContext(
            name, "peer", lead, None, (), {}, own.inventory, self.refs, {}, self.surface, blocked=blocked
        )

    @property
    def spoken(self) -> bool:
        """The peers write their own words (a speaking backend on the free-form surface)."""
        return self.surface is SurfaceName.FREEFORM and speaks(self.backend)

    def say(self, name: str, lead: str, stage: Stage, delivered: str) -> str:
        request = GenerationRequest(name, stage, lead, delivered_request=delivered)
        reply = self.backend.generate(self.context(name, lead), request)
        self.generations.append(Generation(name, stage.value, reply))
        return reply.text

    def have(self, name: str, lead: str, query: SupplyQuery) -> str:
        """``name``'s answer to the question as it understood it: every asked item named, however many
        (a question that arrives as ``ASK FOR <goal>`` reaches the peer expanded by its own prior)."""
        return self.say(name, lead, Stage.TEAM_HAVE, SupplyQuery(query.items).serialize())

    def decide(self, name: str, lead: str, heard: Proposal, prior: Prior, words: str | None = None) -> str:
        """``name``'s decision on what it heard: the projection as a typed record, or the words a speaking
        peer heard them in."""
        delivered = words if words is not None and self.spoken else prior.serialize(heard)
        return self.say(name, lead, Stage.TEAM_RESPONSE, delivered)


def corrected(view: Viewed, peer: str, response: Response) -> Viewed:
    """The lead's view once a peer said it holds less (COUNTER) or cannot use a skill (REJECT)."""
    return view.model_copy(update={"agents": [_told(agent, peer, response) for agent in view.agents]})


def _told(agent: TeamAgent, peer: str, response: Response) -> TeamAgent:
    fields = dict(response.extra)
    if agent.name == peer and response.decision == "COUNTER" and "item" in fields:
        have = int(fields.get("have", "0")) if re.fullmatch(r"[0-9]{1,9}", fields.get("have", "0")) else 0
        inventory = {**agent.inventory, fields["item"]: have}
        return agent.model_copy(update={"inventory": {k: v for k, v in inventory.items() if v > 0}})
    if agent.name == peer and response.decision == "REJECT" and "skill" in fields:
        return agent.model_copy(update={"blocked": sorted({*agent.blocked, fields["skill"]})})
    return agent


def asked_view(task: Viewed, lead: str, query: SupplyQuery, wire: Wire, peers: Peers) -> Viewed:
    """The lead's view after one bounded supply question (``ASK <items>``) to every peer, and its ``HAVE`` answer."""
    agents = []
    for agent in task.agents:
        if agent.name == lead:
            agents.append(agent)
            continue
        heard = parse_query(wire.send(lead, agent.name, "ASK", query.serialize()), lambda goal: ())
        said = parse_answer(wire.send(agent.name, lead, "HAVE", peers.have(agent.name, lead, heard)), query)
        agents.append(TeamAgent(name=agent.name, inventory=dict(said.holds), blocked=list(said.cannot)))
    return task.model_copy(update={"agents": agents})


@dataclass(frozen=True, slots=True)
class Draft:
    """A rule lead's proposal for its view, or why there is none (``code``, ``reason``)."""

    proposal: Proposal | None
    code: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Agreement:
    """How a negotiation ended: the resolved commitment, or the code and message of why not."""

    commitment: Commitment | None
    proposal: Proposal | None
    generations: tuple[Generation, ...]
    code: str | None = None
    message: str | None = None
    feasible: bool = True


class Lead(Protocol[View_contra]):
    """The lead's side of a negotiation (:func:`negotiate`): a proposal for its view each round, each named peer's
    answer to it as the lead hears it, and whether a view that refusals corrected still reaches the goal.
    ``generations`` holds the lead's messages as they are written (one a later stage rejects included)."""

    name: str
    generations: list[Generation]

    def propose(self, view: View_contra, round_index: int) -> Proposal | Agreement:
        """This round's proposal, or how the negotiation ends without one (no draft reaches the goal)."""
        ...

    def answer(self, proposal: Proposal, peer: str) -> Response:
        """``peer``'s decision on what it is told of ``proposal``."""
        ...

    def reconsider(self, view: View_contra) -> Agreement | None:
        """How the negotiation ends once refusals corrected the view, or None to propose again."""
        ...


def negotiate(view: Viewed, lead: Lead[Viewed], prior: Prior, episode: PublicEpisode) -> Agreement:
    """Propose, hear each peer's answer, correct the view and propose again, at most ``MAX_ROUNDS`` times.

    The peers' true bags are revealed only by what they answer. Raises the stage errors of parsing,
    the contract check and resolution.
    """
    for round_index in range(1, MAX_ROUNDS + 1):
        proposed = lead.propose(view, round_index)
        if isinstance(proposed, Agreement):
            return proposed
        check_proposal(proposed, lead.name, prior, episode)
        answers = {target: lead.answer(proposed, target) for target in (r.target for r in proposed.peer_requests)}
        refused = {peer: response for peer, response in answers.items() if response.decision != "ACCEPT"}
        if not refused:
            holdings = {agent.name: dict(agent.inventory) for agent in view.agents}
            commitment = resolve_team(proposed, lead.name, holdings, prior, episode)
            return Agreement(commitment, proposed, tuple(lead.generations))
        for peer, response in refused.items():
            view = corrected(view, peer, response)
        ended = lead.reconsider(view)
        if ended is not None:
            return ended
    return Agreement(
        None, None, tuple(lead.generations), Reason.NO_AGREEMENT, f"no proposal was accepted in {MAX_ROUNDS} rounds"
    )


@dataclass
class RuleLead(Generic[Viewed]):
    """A lead that drafts by rule (zero model calls, and its generations say so) and talks over the wire in typed
    lines; a view no draft reaches ends the negotiation at the next round."""

    name: str
    draft: Callable[[Viewed], Draft]
    prior: Prior
    wire: Wire
    peers: Peers
    generations: list[Generation] = field(default_factory=list)

    def propose(self, view: Viewed, round_index: int) -> Proposal | Agreement:
        drafted = self.draft(view)
        if drafted.proposal is None:
            return Agreement(None, None, tuple(self.generations), drafted.code, drafted.reason, feasible=False)
        text = self.prior.serialize(drafted.proposal)
        self.generations.append(Generation(self.name, Stage.TEAM_LEAD.value, Reply(text, 0)))
        return self.prior.parse(text)

    def answer(self, proposal: Proposal, peer: str) -> Response:
        told = self.wire.send(self.name, peer, "PROPOSAL", self.prior.serialize(projected(proposal, peer)))
        heard = self.prior.parse(told)
        return heard_response(
            self.wire.send(peer, self.name, "RESPONSE", self.peers.decide(peer, self.name, heard, self.prior))
        )

    def reconsider(self, view: Viewed) -> Agreement | None:
        return None


def _agent(task: TeamTask | BuildTask | CookingTask, name: str) -> TeamAgent:
    return next(agent for agent in task.agents if agent.name == name)
