"""The dynamic suite: jobs with injected anomalies whose ground truth is known.

An instance is a job, a world, a public stock board (what each agent advertises it can
spare), and 1–3 anomalies drawn from a seed. Each anomaly kind is either locally
recoverable by construction (a route exists within the agent's own means) or not (only
a peer can help, or nobody can). Issues the episode then detects are also labelled by an
oracle with the true world state, which is what unnecessary escalation is measured by.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from gencoord.gate.needs import node_needs
from gencoord.gate.task_graphs import TaskGraph
from gencoord.prior.gamedata import GameData
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.worlds.changes import WorldChange
from gencoord.worlds.spec import AgentSpec, WorldSpec

JUNK = "dirt"


class AnomalyKind(StrEnum):
    MISSING_MATERIAL = "missing_material"  # a few raw items short; the agent can mine them
    SOURCE_EXHAUSTED = "source_exhausted"  # the plank pile runs dry; logs in the forest still work
    RESOURCE_DEPLETED = "resource_depleted"  # no planks anywhere nearby; a peer has spare ones
    SCARCE_ITEM = "scarce_item"  # an item no local route makes (coal, raw iron); a peer has it
    STALE_ADVERT = "stale_advert"  # the board names a peer that cannot supply; another peer can
    NO_SUPPLIER = "no_supplier"  # a non-critical node's item nobody can supply: skip it
    PATH_BLOCKED = "path_blocked"  # the direct route to a place is blocked; a detour works
    STATION_BUSY = "station_busy"  # the crafting station is occupied for a while; waiting works
    CONTAINER_FULL = "container_full"  # the delivery chest is full of junk; clearing a stack works
    LATE_DELIVERY = "late_delivery"  # a supplier starts late; waiting works
    # mid-run anomalies of the team suite (gate/teams.py), each striking at a drawn round
    SOURCE_DRY = "source_dry"  # a resource area runs dry
    ROUTE_BLOCKED = "route_blocked"  # the direct route to a place the plan uses is walled off
    STATION_OCCUPIED = "station_occupied"  # the crafting station is taken for a while
    ITEM_LOST = "item_lost"  # items an agent's own work needs vanish from its inventory
    TEAMMATE_AWAY = "teammate_away"  # an agent is called away for some rounds
    BAD_DELIVERY = "bad_delivery"  # a hand-over arrives short, or with the wrong item


RECOVERABLE = frozenset(
    {
        AnomalyKind.MISSING_MATERIAL,
        AnomalyKind.SOURCE_EXHAUSTED,
        AnomalyKind.PATH_BLOCKED,
        AnomalyKind.STATION_BUSY,
        AnomalyKind.CONTAINER_FULL,
        AnomalyKind.LATE_DELIVERY,
    }
)
SCARCE = ("coal", "raw_iron", "stick")


MID_RUN = (
    AnomalyKind.SOURCE_DRY,
    AnomalyKind.ROUTE_BLOCKED,
    AnomalyKind.STATION_OCCUPIED,
    AnomalyKind.ITEM_LOST,
    AnomalyKind.TEAMMATE_AWAY,
    AnomalyKind.BAD_DELIVERY,
)


@dataclass(frozen=True, slots=True)
class Anomaly:
    kind: AnomalyKind
    agent: str | None
    node: str | None
    item: str | None
    quantity: int
    round: int | None = None  # when a mid-run anomaly strikes (None: present from the start)


@dataclass(frozen=True, slots=True)
class Away:
    """An agent is called away: it takes no step for ``rounds`` rounds."""

    agent: str
    rounds: int


@dataclass(frozen=True, slots=True)
class BadDelivery:
    """The giver's next hand-over is ``short`` items short, or hands over ``substitute`` instead."""

    giver: str
    short: int
    substitute: str | None


@dataclass(frozen=True, slots=True)
class Disruption:
    """A mid-run anomaly: at the start of ``round``, the world changes or an agent's body does."""

    round: int
    event: WorldChange | Away | BadDelivery


@dataclass
class _Draft:
    job: TaskGraph
    start: dict[str, dict[str, int]]
    deposits: dict[str, int] = field(default_factory=dict)
    blocked: set[str] = field(default_factory=set)
    busy_until: dict[str, float] = field(default_factory=dict)
    contents: dict[str, dict[str, int]] = field(default_factory=dict)
    board: dict[str, dict[str, int]] = field(default_factory=dict)
    delays: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GateInstance:
    id: str
    job: TaskGraph
    world: WorldSpec
    board: Mapping[str, Mapping[str, int]]  # public: what each agent advertises it can spare
    anomalies: tuple[Anomaly, ...]
    delays: Mapping[str, int]  # rounds an agent is busy elsewhere before it starts
    budget: int  # rounds before the episode is cut off
    disruptions: tuple[Disruption, ...] = ()  # mid-run anomalies, by round
    public: PublicEpisode | None = None  # the refs agents may name (None: the prior's default episode)


def spare_board(job: TaskGraph, start: Mapping[str, Mapping[str, int]], game: GameData) -> dict[str, dict[str, int]]:
    """Start inventory minus what the agent's own nodes consume: what it could give away."""
    spare: dict[str, dict[str, int]] = {}
    for agent in job.agents:
        needed: dict[str, int] = {}
        for node in job.nodes:
            if node.agent == agent:
                for item, n in node_needs(node.task, game).items():
                    needed[item] = needed.get(item, 0) + n
        spare[agent] = {item: n - needed.get(item, 0) for item, n in start[agent].items() if n > needed.get(item, 0)}
    return spare


def _consumers(draft: _Draft, game: GameData, items: tuple[str, ...]) -> list[tuple[str, str, str, int]]:
    """(agent, node, item, quantity) for nodes consuming one of ``items`` that the agent starts with."""
    found = []
    for node in draft.job.nodes:
        for item, quantity in node_needs(node.task, game).items():
            if item in items and draft.start[node.agent].get(item, 0) >= 1:
                found.append((node.agent, node.id, item, min(quantity, draft.start[node.agent][item])))
    return found


def _other(draft: _Draft, agent: str, rng: random.Random) -> str:
    return rng.choice([a for a in draft.job.agents if a != agent])


def _missing_material(kind: AnomalyKind, draft: _Draft, rng: random.Random, game: GameData) -> Anomaly | None:
    options = _consumers(draft, game, ("oak_planks",))
    if not options:
        return None
    agent, node_id, item, quantity = rng.choice(options)
    short = min(quantity, rng.randint(1, 3))
    draft.start[agent][item] -= short
    return Anomaly(kind, agent, node_id, item, short)


def _short_source(kind: AnomalyKind, draft: _Draft, rng: random.Random, game: GameData) -> Anomaly | None:
    """The lumber yard holds half of what the miner needs; depleted, the forest none, and a peer holds the rest."""
    miners = [n for n in draft.job.nodes if n.task.skill == "resource.obtain" and n.task.get("item") == "oak_planks"]
    if not miners:
        return None
    miner = miners[0]
    needed = int(miner.task.get("q") or 0)
    draft.deposits["lumber_yard"] = needed // 2
    if kind is AnomalyKind.RESOURCE_DEPLETED:
        draft.deposits["forest"] = 0
        helper = _other(draft, miner.agent, rng)
        draft.start[helper]["oak_planks"] = draft.start[helper].get("oak_planks", 0) + needed
        draft.board.setdefault(helper, {})["oak_planks"] = needed
    return Anomaly(kind, miner.agent, miner.id, "oak_planks", needed - needed // 2)


def _scarce_item(kind: AnomalyKind, draft: _Draft, rng: random.Random, game: GameData) -> Anomaly | None:
    """A critical ingredient held only by one peer; a stale advert also names another that has none."""
    job = draft.job
    options = [o for o in _consumers(draft, game, SCARCE) if job.node(o[1]).critical]
    if not options:
        return None
    agent, node_id, item, quantity = rng.choice(options)
    draft.start[agent][item] -= quantity
    peers = [a for a in job.agents if a != agent]
    holder = rng.choice(peers)
    draft.start[holder][item] = draft.start[holder].get(item, 0) + quantity
    draft.board.setdefault(holder, {})[item] = quantity
    if kind is AnomalyKind.STALE_ADVERT and len(peers) > 1:
        stale = rng.choice([p for p in peers if p != holder])
        draft.board.setdefault(stale, {})[item] = quantity + 2  # advertised, but long gone
    return Anomaly(kind, agent, node_id, item, quantity)


def _no_supplier(kind: AnomalyKind, draft: _Draft, rng: random.Random, game: GameData) -> Anomaly | None:
    optional = [n for n in draft.job.nodes if not n.critical]
    if not optional:
        return None
    spare_node = rng.choice(optional)
    item, quantity = next(iter(node_needs(spare_node.task, game).items()))
    draft.start[spare_node.agent].pop(item, None)
    stale = _other(draft, spare_node.agent, rng)
    draft.board.setdefault(stale, {})[item] = quantity  # advertised, but the peer has none to spare
    return Anomaly(kind, spare_node.agent, spare_node.id, item, quantity)


def _path_blocked(kind: AnomalyKind, draft: _Draft, rng: random.Random, game: GameData) -> Anomaly | None:
    job = draft.job
    places = sorted({str(v) for n in job.nodes for k, v in n.task.args if k in ("dst", "site", "loc", "station")})
    places += ["lumber_yard"] if any(n.task.skill == "resource.obtain" for n in job.nodes) else []
    draft.blocked.add(rng.choice(places))
    return Anomaly(kind, None, None, None, 0)


def _station_busy(kind: AnomalyKind, draft: _Draft, rng: random.Random, game: GameData) -> Anomaly | None:
    if not any(n.task.skill == "craft.item" for n in draft.job.nodes):
        return None
    draft.busy_until["crafting_station"] = float(rng.choice((20, 40, 60)))
    return Anomaly(kind, None, None, None, 0)


def _container_full(kind: AnomalyKind, draft: _Draft, rng: random.Random, game: GameData) -> Anomaly | None:
    chests = sorted({str(n.task.get("dst")) for n in draft.job.nodes if n.task.get("dst")})
    if not chests:
        return None
    draft.contents[rng.choice(chests)] = {JUNK: 27 * 64}
    return Anomaly(kind, None, None, JUNK, 64)


def _late_delivery(kind: AnomalyKind, draft: _Draft, rng: random.Random, game: GameData) -> Anomaly | None:
    suppliers = sorted({n.agent for n in draft.job.nodes if n.task.get("to")})
    if not suppliers:
        return None
    agent = rng.choice(suppliers)
    draft.delays[agent] = rng.randint(6, 14)
    return Anomaly(kind, agent, None, None, 0)


Injector = Callable[[AnomalyKind, _Draft, random.Random, GameData], Anomaly | None]

_INJECTORS: dict[AnomalyKind, Injector] = {
    AnomalyKind.MISSING_MATERIAL: _missing_material,
    AnomalyKind.SOURCE_EXHAUSTED: _short_source,
    AnomalyKind.RESOURCE_DEPLETED: _short_source,
    AnomalyKind.SCARCE_ITEM: _scarce_item,
    AnomalyKind.STALE_ADVERT: _scarce_item,
    AnomalyKind.NO_SUPPLIER: _no_supplier,
    AnomalyKind.PATH_BLOCKED: _path_blocked,
    AnomalyKind.STATION_BUSY: _station_busy,
    AnomalyKind.CONTAINER_FULL: _container_full,
    AnomalyKind.LATE_DELIVERY: _late_delivery,
}
"""How each anomaly kind changes a draft world; the mid-run kinds are the team suite's (gate/teams.py)."""


def _inject(kind: AnomalyKind, draft: _Draft, rng: random.Random, game: GameData) -> Anomaly | None:
    """Change the draft world for one anomaly; None when the job offers no place for it."""
    injector = _INJECTORS.get(kind)
    if injector is None:
        raise ValueError(f"{kind} is a mid-run anomaly of the team suite (gate/teams.py)")
    return injector(kind, draft, rng, game)


def make_instance(
    job: TaskGraph, seed: int, prior: Prior, budget: int, kinds: tuple[AnomalyKind, ...] | None = None
) -> GateInstance:
    """One instance of ``job`` with anomalies drawn from ``seed`` (or exactly ``kinds``)."""
    rng = random.Random(f"gate:{job.name}:{seed}")
    draft = _Draft(job, {agent: dict(items) for agent, items in job.start.items()})
    draft.board = spare_board(job, draft.start, prior.game)
    anomalies: list[Anomaly] = []
    wanted = list(kinds) if kinds is not None else None
    if wanted is None:
        recoverable = sorted(RECOVERABLE)
        hard = [k for k in AnomalyKind if k not in RECOVERABLE and k not in MID_RUN]
        wanted = [rng.choice(hard if rng.random() < 0.3 else recoverable) for _ in range(rng.randint(1, 3))]
    for kind in wanted:
        anomaly = _inject(kind, draft, rng, prior.game)
        if anomaly is not None:
            anomalies.append(anomaly)
    refs = dict(prior.default_episode.refs)
    spawn = [(0.0, 64.0, 0.0), (2.0, 64.0, 1.0), (-2.0, 64.0, 1.0), (0.0, 64.0, 3.0)]
    agents = tuple(
        AgentSpec(agent, spawn[i], {k: v for k, v in draft.start[agent].items() if v > 0})
        for i, agent in enumerate(job.agents)
    )
    world = WorldSpec(
        agents,
        refs,
        contents=draft.contents,
        deposits=draft.deposits,
        blocked=frozenset(draft.blocked),
        busy_until=draft.busy_until,
    )
    board = {agent: {k: v for k, v in items.items() if v > 0} for agent, items in draft.board.items()}
    return GateInstance(f"{job.name}-{seed:04d}", job, world, board, tuple(anomalies), draft.delays, budget)
