"""The dynamic team suite: gate instances from team task files, with anomalies that strike mid-run.

A team task (any file ``gencoord tasks`` reads, 2–8 agents and more) becomes the gate's task
graph through the shared planner: the lead's n-party commitment, resolved, gives one node
per committed task, its actor, and its predecessors (role-local order, hand-overs, public
predecessors). Each instance draws, from its seed:

- which raw items the plan consumes the world also offers as resource areas (about half
  of those a hand can gather), so that some losses are locally recoverable and some are not;
- a little surplus in some bags (what a peer could spare, and advertises on the board);
- one to three labelled anomalies of the six mid-run kinds, each at a round drawn before
  the node it targets completed in a clean run of the same task (so it can bite).

Training and evaluation draw disjoint seed ranges. A task the planner cannot plan, or that
fails even without anomalies, is left out with its reason (:func:`team_graphs` says which).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from gencoord.errors import GencoordError, ResolutionError
from gencoord.gate.needs import node_needs
from gencoord.gate.suite import (
    MID_RUN,
    Anomaly,
    AnomalyKind,
    Away,
    BadDelivery,
    Disruption,
    GateInstance,
    spare_board,
)
from gencoord.gate.task_graphs import Node, TaskGraph
from gencoord.planning.planner import plan_team
from gencoord.prior.prior import Prior
from gencoord.protocol.commitment import task_id
from gencoord.protocol.resolve import resolve_team
from gencoord.reasons import Reason
from gencoord.run.faults import substitute
from gencoord.run.team import lead_of
from gencoord.runtime.verify import Requirement
from gencoord.tasks.team import ANY, TeamTask, gathered_from
from gencoord.tasks.world import STATION, team_world
from gencoord.worlds.changes import BlockRoute, DepleteSource, OccupyStation, RemoveItems

STATION_SECONDS = (20.0, 40.0, 60.0)


@dataclass(frozen=True)
class TeamGraph:
    """A team task as the gate runs it: its task graph, and the task it came from."""

    task: TeamTask
    graph: TaskGraph


def team_graph(task: TeamTask, prior: Prior) -> TeamGraph:
    """The task graph of the lead's resolved commitment; raises GencoordError when there is none."""
    lead = lead_of(task)
    plan = plan_team(task, lead, prior)
    if plan.proposal is None or plan.crafter is None:
        raise ResolutionError(
            plan.feasibility.code or Reason.NO_PLAN, plan.feasibility.reason or "the planner found no plan"
        )
    episode, _ = team_world(task, prior)
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    commitment = resolve_team(plan.proposal, lead, holdings, prior, episode)
    preds: dict[str, list[str]] = {task_id(ref): [] for ref in commitment.order}
    for before, after in commitment.edges:
        preds[task_id(after)].append(task_id(before))
    nodes = tuple(
        Node(task_id(ref), ref[0], commitment.task(ref), tuple(preds[task_id(ref)]), True) for ref in commitment.order
    )
    goal = task.goal
    holder = plan.crafter if goal.holder == ANY else goal.holder
    if holder in {a.name for a in task.agents}:
        need = Requirement("inventory_contains", holder, goal.item, goal.count)
    else:
        need = Requirement("container_contains", holder, goal.item, goal.count)
    start = {agent.name: dict(agent.inventory) for agent in task.agents}
    graph = TaskGraph(task.id, tuple(a.name for a in task.agents), nodes, start, (need,))
    return TeamGraph(task, graph)


def team_graphs(tasks: Sequence[TeamTask], prior: Prior) -> tuple[list[TeamGraph], dict[str, str]]:
    """The tasks the gate can run, and why each other one was left out."""
    graphs, skipped = [], {}
    for task in tasks:
        try:
            graphs.append(team_graph(task, prior))
        except GencoordError as error:
            skipped[task.id] = f"{error.reason}: {error.message}"
    return graphs, skipped


def _offered(team: TeamGraph, prior: Prior, rng: random.Random) -> list[str]:
    """Raw items the plan consumes that the world offers to gather (about half of the hand-gatherable ones)."""
    consumed = sorted({item for node in team.graph.nodes for item in node_needs(node.task, prior.game)})
    raw = [item for item in consumed if item not in prior.game.recipes and gathered_from(item, prior) is not None]
    return sorted({*team.task.world.resources, *(item for item in raw if rng.random() < 0.5)})


def _surplus(team: TeamGraph, prior: Prior, rng: random.Random) -> dict[str, dict[str, int]]:
    """Start inventories with a little surplus: about half of the held items the plan consumes get
    one to three extra units in a random agent's bag (what a peer could then spare)."""
    start = {agent: dict(items) for agent, items in team.graph.start.items()}
    held = {item for items in start.values() for item in items}
    consumed = sorted({item for node in team.graph.nodes for item in node_needs(node.task, prior.game)} & held)
    for item in consumed:
        if rng.random() < 0.5:
            holder = rng.choice(team.graph.agents)
            start[holder][item] = start[holder].get(item, 0) + rng.randint(1, 3)
    return start


def _places(node: Node) -> set[str]:
    found = {str(v) for k, v in node.task.args if k in ("dst", "site", "loc", "station")}
    return found | ({STATION} if node.task.skill == "craft.item" else set())


def _draw(
    kind: AnomalyKind, team: TeamGraph, world_refs: set[str], done_at: dict[str, int], rng: random.Random, prior: Prior
) -> tuple[Anomaly, Disruption] | None:
    """One mid-run anomaly of ``kind`` aimed at the plan; None when the plan offers it no target."""
    graph = team.graph

    def when(node: Node) -> int:
        return rng.randint(1, max(1, done_at.get(node.id, 1)))

    if kind is AnomalyKind.SOURCE_DRY:
        sources = sorted(ref for ref in world_refs if ref.endswith("_source"))
        if not sources:
            return None
        source = rng.choice(sources)
        at = rng.randint(1, max(1, max(done_at.values(), default=1)))
        return Anomaly(kind, None, None, source.removesuffix("_source"), 0, at), Disruption(at, DepleteSource(source))
    if kind is AnomalyKind.ROUTE_BLOCKED:
        targets = sorted((place, node.id) for node in graph.nodes for place in _places(node) if place in world_refs)
        if not targets:
            return None
        place, node_id = rng.choice(targets)
        at = when(graph.node(node_id))
        return Anomaly(kind, None, node_id, None, 0, at), Disruption(at, BlockRoute(place))
    if kind is AnomalyKind.STATION_OCCUPIED:
        crafts = [node for node in graph.nodes if node.task.skill == "craft.item"]
        if not crafts or STATION not in world_refs:
            return None
        node = rng.choice(crafts)
        at = when(node)
        seconds = rng.choice(STATION_SECONDS)
        return Anomaly(kind, None, node.id, None, int(seconds), at), Disruption(at, OccupyStation(STATION, seconds))
    if kind is AnomalyKind.ITEM_LOST:
        options = sorted(
            (node.id, item)
            for node in graph.nodes
            for item in node_needs(node.task, prior.game)
            if graph.start[node.agent].get(item, 0) > 0
        )
        if not options:
            return None
        node_id, item = rng.choice(options)
        node = graph.node(node_id)
        lost = rng.randint(1, min(3, graph.start[node.agent][item]))
        at = when(node)
        return Anomaly(kind, node.agent, node.id, item, lost, at), Disruption(at, RemoveItems(node.agent, item, lost))
    if kind is AnomalyKind.TEAMMATE_AWAY:
        workers = sorted({node.agent for node in graph.nodes})
        agent = rng.choice(workers)
        last = max(done_at.get(node.id, 1) for node in graph.nodes if node.agent == agent)
        at, rounds = rng.randint(1, max(1, last)), rng.randint(4, 10)
        return Anomaly(kind, agent, None, None, rounds, at), Disruption(at, Away(agent, rounds))
    if kind is AnomalyKind.BAD_DELIVERY:
        deliveries = [n for n in graph.nodes if n.task.skill == "resource.deliver" and n.task.has("to")]
        if not deliveries:
            return None
        node = rng.choice(deliveries)
        item, count = str(node.task.get("item")), int(node.task.get("q") or 1)
        wrong = count == 1 or rng.random() < 0.5
        short = 0 if wrong else rng.randint(1, count - 1)
        event = BadDelivery(node.agent, short, substitute(item) if wrong else None)
        at = when(node)
        return Anomaly(kind, node.agent, node.id, item, short, at), Disruption(at, event)
    raise ValueError(f"{kind} is not a mid-run anomaly")


def team_instance(
    team: TeamGraph,
    seed: int,
    prior: Prior,
    budget: int,
    done_at: dict[str, int],
    kinds: tuple[AnomalyKind, ...] | None = None,
) -> GateInstance:
    """One instance of ``team``: the world it offers and its anomalies, drawn from ``seed`` (or exactly ``kinds``)."""
    rng = random.Random(f"gate-team:{team.task.id}:{seed}")
    offered = team.task.world.model_copy(update={"resources": _offered(team, prior, rng)})
    start = _surplus(team, prior, rng)
    task = team.task.model_copy(update={"world": offered})
    refs = set(team_world(task, prior)[1].refs)  # the places the anomalies can aim at
    if kinds is not None:
        drawn = [_draw(kind, team, refs, done_at, rng, prior) for kind in kinds]
    else:  # one to three that this plan offers a target for (an agent can always be called away)
        wanted, drawn = rng.randint(1, 3), []
        while len([d for d in drawn if d is not None]) < wanted:
            drawn.append(_draw(rng.choice(MID_RUN), team, refs, done_at, rng, prior))
    anomalies = tuple(anomaly for anomaly, _ in filter(None, drawn))
    disruptions = tuple(sorted((d for _, d in filter(None, drawn)), key=lambda d: d.round))
    for anomaly, disruption in filter(None, drawn):
        event = disruption.event
        if isinstance(event, BadDelivery) and event.substitute is not None:  # the look-alike it hands over instead
            count = int(team.graph.node(anomaly.node or "").task.get("q") or 1)
            start[event.giver][event.substitute] = start[event.giver].get(event.substitute, 0) + count
    agents = [agent.model_copy(update={"inventory": start[agent.name]}) for agent in team.task.agents]
    public, world = team_world(task.model_copy(update={"agents": agents}), prior)
    board = spare_board(team.graph, start, prior.game)
    return GateInstance(
        f"{team.task.id}-{seed:04d}", team.graph, world, board, anomalies, {}, budget, disruptions, public
    )
