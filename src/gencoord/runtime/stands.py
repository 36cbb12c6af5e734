"""Where each builder stands for each block, and the towers it pillars up: derived from the program, by rule.

A commitment says who places which cell in which order (``build.place``); how a builder
gets within reach is the walking and climbing that follows from it, like a walk to a
chest. This pass derives it once, deterministically, so the simulator and real Minecraft
follow the same stands (``worlds/standing.py`` is the rule):

1. The builders' placements are merged into one order, the blueprint's support order
   across agents (each agent's own order kept, every dependency kept), which is also the
   order in which the world applies them.
2. Each placement gets the nearest stand within reach from which the builder can still
   walk out of the site's box (nobody walls itself in), else the nearest stand within reach.
3. Where no stand is within reach, the builder pillars up a tower of scaffolding in an
   empty column it can walk to (``Pillar`` actions), works from its top while the next
   blocks are within reach, and digs it down again (``DigDown``), so every expected-air cell
   ends as air. A tower's blocks come from the builder's bag and come back as it digs down.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from gencoord.dsl.cells import Cell
from gencoord.worlds.actions import Action, BreakAt, DigDown, Pillar, PlaceAt, Program, StepAside
from gencoord.worlds.placing import ABOVE, build_order, offset
from gencoord.worlds.spec import BuildSite, WorldSpec
from gencoord.worlds.standing import (
    Terrain,
    Tower,
    body_cells,
    choose_stand,
    feet_cell,
    reaches,
    tower_to,
    tower_to_walk_off,
)

TOWER_BLOCK = "dirt"
"""What builders pillar up with: MINDcraft gives every agent 128."""


def _merge(program: Program, world: WorldSpec) -> list[int]:
    """A valid order of the program's actions: placements in their site's support order across agents."""
    actions, deps = program.actions, program.deps
    key: dict[int, int] = {}
    for site in world.builds:
        placed = {a.cell: a.block for a in actions if isinstance(a, PlaceAt) and a.site == site}
        rank = {cell: position for position, cell in enumerate(build_order(placed, []))}
        for index, action in enumerate(actions):
            if isinstance(action, PlaceAt) and action.site == site:
                key[index] = rank.get(action.cell, len(rank))
            elif isinstance(action, BreakAt) and action.site == site:
                key[index] = len(rank) + index
    waiting: list[set[int]] = []
    previous: dict[str, int] = {}
    for index, action in enumerate(actions):
        before = set(deps[index])
        if action.agent in previous:
            before.add(previous[action.agent])
        previous[action.agent] = index
        waiting.append(before)
    followers: dict[int, list[int]] = {}
    for index, before in enumerate(waiting):
        for earlier in before:
            followers.setdefault(earlier, []).append(index)
    ready = [(key.get(index, -1), index) for index, before in enumerate(waiting) if not before]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, index = heapq.heappop(ready)
        order.append(index)
        for after in followers.get(index, []):
            waiting[after].discard(index)
            if not waiting[after]:
                heapq.heappush(ready, (key.get(after, -1), after))
    return order if len(order) == len(actions) else list(range(len(actions)))


@dataclass
class _Builder:
    agent: str
    site: str
    task: str  # the task its latest action belongs to: what its moves are part of
    feet: Cell
    tower: Tower | None = None  # the tower it stands on
    left: list[Tower] = field(default_factory=list)  # towers it stepped off, to dig down at the end


def place_builders(program: Program, world: WorldSpec) -> Program:
    """``program`` with its build actions merged into support order, a stand for each, and towers where needed."""
    if not any(isinstance(action, PlaceAt | BreakAt) for action in program.actions):
        return program
    order = _merge(program, world)
    last_build = {
        action.agent: index for index, action in enumerate(program.actions) if isinstance(action, PlaceAt | BreakAt)
    }
    terrains = {name: Terrain(site.size, {}) for name, site in world.builds.items()}
    starts = {agent.name: agent.position for agent in world.agents}
    builders: dict[tuple[str, str], _Builder] = {}
    out: list[Action] = []
    moved: dict[int, int] = {}
    extra: dict[int, list[int]] = {}  # a placement waits for the teammates that step out of its way
    for index in order:
        action = program.actions[index]
        if not isinstance(action, PlaceAt | BreakAt) or action.site not in world.builds:
            moved[index] = len(out)
            out.append(action)
            continue
        site = world.builds[action.site]
        terrain = terrains[action.site]
        start = feet_cell(starts.get(action.agent, (0.0, 0.0, 0.0)), site)
        builder = builders.setdefault(
            (action.agent, action.site), _Builder(action.agent, action.site, action.task, start)
        )
        builder.task = action.task
        placing = isinstance(action, PlaceAt)
        out += _stand_for(builder, terrain, action, placing, _free_for_towers(site, terrain))
        asides = _out_of_the_way(builders, (action.agent, action.site), terrain, action) if placing else []
        extra[len(out) + len(asides)] = list(range(len(out), len(out) + len(asides)))
        out += asides
        moved[index] = len(out)
        out.append(replace(action, stand=builder.feet))
        if placing:
            terrain.place(body_cells(action.cell, action.block), action.block)
        else:
            terrain.remove(action.cell)
        if last_build.get(action.agent) == index:
            if builder.tower is not None:
                out += _dig_down(builder, terrain)
            out += _take_down(builder, terrain)
    deps: list[tuple[int, ...]] = [() for _ in out]
    for old, new in moved.items():
        deps[new] = tuple(sorted({*(moved[d] for d in program.deps[old]), *extra.get(new, [])}))
    return Program(tuple(out), tuple(deps), tuple(moved[h] for h in program.handoffs))


def _out_of_the_way(
    builders: dict[tuple[str, str], _Builder], placer: tuple[str, str], terrain: Terrain, action: PlaceAt | BreakAt
) -> list[Action]:
    """Teammates that the placement would wall in walk out of the site's box first.

    One that stepped off a tower and would be cut off from it goes back down it first.
    """
    steps: list[Action] = []
    filled = body_cells(action.cell, action.block)
    for key, other in sorted(builders.items()):
        if key == placer or key[1] != action.site or other.tower is not None:
            continue
        if other.left and not _can_go_back(terrain, other, filled, action.block):
            steps += _take_down(other, terrain)
        if terrain.outside(other.feet):
            continue
        if (
            other.feet in filled
            or offset(other.feet, ABOVE) in filled
            or not terrain.escapes_after(other.feet, filled, action.block)
        ):
            way_out = terrain.walk_to(other.feet, terrain.outside)
            if way_out is not None:
                other.feet = way_out.feet
                steps.append(StepAside(other.agent, other.task, other.site, way_out.feet))
    return steps


def _can_go_back(terrain: Terrain, builder: _Builder, filled: frozenset[Cell], block: str) -> bool:
    """Whether ``builder`` can still walk back onto the tower it came up by once ``block`` fills ``filled``."""
    top = builder.left[-1].top
    if top in filled or offset(top, ABOVE) in filled:
        return False
    with terrain.adding(filled, block):
        return terrain.walk_to(builder.feet, lambda feet: feet == top, limit=3000) is not None


def _free_for_towers(site: BuildSite, terrain: Terrain) -> Callable[[Cell], bool]:
    """A cell may hold a tower block while the blueprint leaves it empty and nothing stands there now."""
    filled = site.filled

    def free(cell: Cell) -> bool:
        return cell not in filled and cell not in terrain.blocks

    return free


def _stand_for(
    builder: _Builder, terrain: Terrain, action: PlaceAt | BreakAt, placing: bool, free: Callable[[Cell], bool]
) -> list[Action]:
    """What the builder does to stand within reach of ``action``'s cell: leave a tower, walk, or pillar up."""
    steps: list[Action] = []
    filled = body_cells(action.cell, action.block) if placing else frozenset()
    if builder.tower is not None:
        if reaches(action.cell, filled)(builder.feet):
            return steps
        steps += _dig_down(builder, terrain)
    back = builder.left[-1].top if builder.left else None
    stand = choose_stand(terrain, builder.feet, action.cell, action.block, placing, back)
    while stand is None and builder.left:  # up on the build, out of reach: back down the tower it came up by
        steps += _take_down(builder, terrain, 1)
        back = builder.left[-1].top if builder.left else None
        stand = choose_stand(terrain, builder.feet, action.cell, action.block, placing, back)
    if stand is not None:
        builder.feet = stand.feet
        return steps
    found = tower_to(terrain, builder.feet, action.cell, free, filled)
    walk_off = found is None
    if walk_off:
        found = tower_to_walk_off(terrain, builder.feet, action.cell, free, filled)
    if found is None:
        return steps  # the executor finds no stand either, and says so
    stand, tower = found
    for cell in tower.cells:
        steps.append(Pillar(action.agent, action.task, action.site, cell, TOWER_BLOCK))
        terrain.place([cell], TOWER_BLOCK)
    if walk_off:
        steps.append(StepAside(action.agent, action.task, action.site, stand.feet))
        builder.feet = stand.feet
        builder.left.append(tower)
    else:
        builder.feet, builder.tower = tower.top, tower
    return steps


def _take_down(builder: _Builder, terrain: Terrain, most: int = 0) -> list[Action]:
    """Towers a builder stepped off (``most`` of them, 0: all), dug down: it walks back onto each, last first."""
    steps: list[Action] = []
    for _ in range(most or len(builder.left)):
        tower = builder.left.pop()
        top = tower.top

        def on_top(feet: Cell, top: Cell = top) -> bool:
            return feet == top

        if terrain.walk_to(builder.feet, on_top) is None:
            continue  # the world finds the tower's blocks where the blueprint wants air, and says so
        steps.append(StepAside(builder.agent, builder.task, builder.site, tower.top))
        builder.feet, builder.tower = tower.top, tower
        steps += _dig_down(builder, terrain)
    return steps


def _dig_down(builder: _Builder, terrain: Terrain) -> list[Action]:
    tower = builder.tower
    assert tower is not None
    steps: list[Action] = []
    for cell in reversed(tower.cells):
        steps.append(DigDown(builder.agent, builder.task, builder.site, cell, TOWER_BLOCK))
        terrain.remove(cell)
    builder.feet, builder.tower = tower.base, None
    return steps
