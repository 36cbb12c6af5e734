"""The world a team task runs in: agents on a ring, a crafting station spot, a source per resource.

Every team world has the same public shape, so a task file need not draw a map: a
crafting station at the centre (standing, or a spot where a held table is placed), a
furnace beside it when the task has one, the agents on a ring around it, one source per
gatherable item on an outer ring, and a chest for a goal that must end in one. A resource
that some block drops when broken by hand is a resource area of that block; anything else
the world offers without limit (mob drops, ores that need a pickaxe) is a stocked supply
chest, which the task's notes and docs/team-tasks.md say, since that is a simplification of the
real game.
"""

from __future__ import annotations

import math
import zlib

from gencoord.errors import ConfigError
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode, Ref
from gencoord.reasons import Reason
from gencoord.tasks.build import BuildTask
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.team import ANY, TeamTask, gathered_from, hunted_from
from gencoord.worlds.placing import plan_scaffold
from gencoord.worlds.spec import AgentSpec, BuildSite, WorldSpec

STATION = "crafting_station"
"""The station spot every team world has (``station.place`` puts a held table here)."""

FURNACE = "furnace_station"
"""The furnace of a team world that has one (``world.furnace``), beside the crafting station."""

SMOKER = "smoker_station"
"""The smoker of a team world that has one (``world.smoker``), beside the furnace."""

HERD = 8
"""Animals of each kind a world offers (MINDcraft's cooking world summons 8 of each)."""

SUPPLY = 2304
"""Blocks in a resource area: a full inventory, never the limit."""

_Y = 64
_AGENT_RING, _SOURCE_RING, _CHEST_RING = 3.0, 9.0, 5.0


def source_ref(item: str) -> str:
    """The public name of where ``item`` is gathered."""
    return f"{item}_source"


def _ring(index: int, count: int, radius: float, turn: float = 0.0) -> tuple[int, int, int]:
    angle = 2 * math.pi * (index / max(count, 1) + turn)
    return round(radius * math.cos(angle)), _Y, round(radius * math.sin(angle))


def team_world(task: TeamTask | CookingTask, prior: Prior) -> tuple[PublicEpisode, WorldSpec]:
    """The public episode every agent may name, and the world state only executors see."""
    refs: dict[str, Ref] = {STATION: Ref(kind="station", block="crafting_table", position=(0, _Y, 0))}
    if task.world.furnace:  # inside the agents' ring, clear of every agent's spot for any team size
        refs[FURNACE] = Ref(kind="station", block="furnace", position=(1, _Y, 1))
    if task.world.smoker:
        refs[SMOKER] = Ref(kind="station", block="smoker", position=(-1, _Y, 1))
    fuel = {name: dict(task.world.fuel) for name in (FURNACE, SMOKER) if name in refs and task.world.fuel}
    deposits: dict[str, int] = {}
    resources = sorted(task.world.resources)
    for index, item in enumerate(resources):
        position = _ring(index, len(resources), _SOURCE_RING, 0.5 / max(len(resources), 1))
        block = gathered_from(item, prior)
        animal = None if block is not None else hunted_from(item)
        if block is None and animal is None:
            raise ConfigError(Reason.NOT_GATHERABLE, f"task {task.id}: no block, crop or animal yields {item!r}")
        refs[source_ref(item)] = Ref(kind="resource", block=block, position=position, entity=animal)
        deposits[source_ref(item)] = task.world.supply.get(item, SUPPLY if animal is None else HERD)
    names = [agent.name for agent in task.agents]
    holders = [goal.holder for goal in task.goals] if isinstance(task, CookingTask) else [task.goal.holder]
    chests = sorted({holder for holder in holders if holder != ANY and holder not in names})
    for index, chest in enumerate(chests):
        refs[chest] = Ref(kind="container", block="chest", position=_ring(index, len(chests), _CHEST_RING, 0.125))
    agents = tuple(
        AgentSpec(agent.name, tuple(float(c) for c in _ring(i, len(names), _AGENT_RING)), dict(agent.inventory))  # type: ignore[arg-type]
        for i, agent in enumerate(task.agents)
    )
    unplaced = frozenset() if task.world.crafting_table else frozenset({STATION})
    episode = PublicEpisode(tuple(names), refs, None, unplaced)
    # random drops (ripe crops, animals) roll from the task's own seed: the same task replays the same
    world = WorldSpec(agents, refs, deposits=deposits, unplaced=unplaced, fuel=fuel, seed=zlib.crc32(task.id.encode()))
    return episode, world


BUILD_SITE = "build_site"
"""The site of a construction task's blueprint: the one ref its commitment names."""


def build_world(task: BuildTask) -> tuple[PublicEpisode, WorldSpec]:
    """A construction task's world: the blueprint's box on the ground at the origin, the agents in a row in front.

    The blueprint's lowest corner becomes site offset (0, 0, 0); the box is cleared before the
    episode, as MINDcraft clears it. Agents start two blocks in front of the box (smaller z),
    one every two blocks along x, clear of every cell.
    """
    width, levels, depth = task.blueprint.size()
    origin = (0, _Y, 0)
    refs = {BUILD_SITE: Ref(kind="site", block=None, position=origin)}
    agents = tuple(
        AgentSpec(agent.name, (float(2 * index), float(_Y), -2.0), dict(agent.inventory))
        for index, agent in enumerate(task.agents)
    )
    episode = PublicEpisode(tuple(agent.name for agent in task.agents), refs)
    blocks = task.blueprint.blocks()
    size = (width, levels, depth)
    filled = frozenset(blocks) | frozenset(plan_scaffold(blocks, size).cells)
    site = BuildSite(origin, size, filled, tuple(sorted(blocks.items())))
    world = WorldSpec(agents, refs, builds={BUILD_SITE: site})
    return episode, world
