"""Where each builder stands for each block, and the towers it pillars up: derived from the program, by rule.

A commitment says who places which cell in which order (``build.place``); how a builder
gets within reach is the walking and climbing that follows from it, like a walk to a
chest. This pass derives it once, deterministically, so the simulator and real Minecraft
follow the same stands (``worlds/standing.py`` is the rule):

1. The builders' placements are merged into one order, taking turns (each agent's own
   order kept, every dependency kept), which is also the order in which the world applies
   them.
2. Each placement gets the nearest stand within reach from which the builder can still
   walk out of the site's box (nobody walls itself in), else the nearest stand within reach.
3. Where no stand is within reach, the builder pillars up a tower of scaffolding in an
   empty column it can walk to (``Pillar`` actions), works from its top while the next
   blocks are within reach, and digs it down again (``DigDown``), so every expected-air cell
   ends as air. A tower's blocks come from the builder's bag and come back as it digs down.
4. The waits that keep all of it true when the builders act side by side on the real
   clock, not in the merged order, follow from it (``runtime/real_clock.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from gencoord.dsl.cells import Cell
from gencoord.runtime.interleave import merged_order
from gencoord.runtime.real_clock import footing, keep_ways_open, tower_ways
from gencoord.worlds.actions import Action, BreakAt, DigDown, Pillar, PlaceAt, Program, StepAside
from gencoord.worlds.placing import ABOVE, offset
from gencoord.worlds.spec import BuildSite, WorldSpec
from gencoord.worlds.standing import Terrain, Way, body_cells, choose_stand, feet_cell, reaches
from gencoord.worlds.towers import Tower, tower_to, tower_to_walk_off

TOWER_BLOCK = "dirt"
"""What builders pillar up with: MINDcraft gives every agent 128."""
MAX_TOWER = 16
"""The highest tower a builder pillars up."""
LOOK_AHEAD = 24
"""Blocks to come that a builder weighs when it picks where to pillar up: the tower that reaches most."""


@dataclass
class _Builder:
    agent: str
    site: str
    task: str  # the task its latest action belongs to: what its moves are part of
    feet: Cell
    tower: Tower | None = None  # the tower it stands on
    left: list[Tower] = field(default_factory=list)  # towers it stepped off, to dig down at the end


def place_builders(program: Program, world: WorldSpec) -> Program:
    """``program`` with its build actions merged in turns, a stand for each, and towers where needed."""
    if not any(isinstance(action, PlaceAt | BreakAt) for action in program.actions):
        return program
    order = merged_order(program, world)
    last_build = {
        action.agent: index for index, action in enumerate(program.actions) if isinstance(action, PlaceAt | BreakAt)
    }
    terrains = {name: Terrain(site.size, {}) for name, site in world.builds.items()}
    starts = {agent.name: agent.position for agent in world.agents}
    builders: dict[tuple[str, str], _Builder] = {}
    ahead = _cells_ahead(program, world, order)
    done: dict[tuple[str, str], int] = {}
    out: list[Action] = []
    moved: dict[int, int] = {}
    extra: dict[int, list[int]] = {}  # a placement waits for the teammates that step out of its way
    ways: dict[int, Way] = {}  # what each placement's walk and stand rely on
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
        key = (action.agent, action.site)
        upcoming = tuple(ahead.get(key, [])[done.get(key, 0) : done.get(key, 0) + LOOK_AHEAD])
        done[key] = done.get(key, 0) + placing
        came_from = builder.feet
        shaky = _towers_of_others(builders, key)
        free = _free_for_towers(site, terrain, _bodies_of_others(builders, key))
        climbed = _stand_for(builder, terrain, action, placing, free, upcoming)
        ways.update(tower_ways(climbed, len(out), terrain, came_from))
        out += climbed
        way = Way() if climbed else terrain.way_between(came_from, builder.feet, shaky)
        asides, aside_ways = _out_of_the_way(builders, key, terrain, action) if placing else ([], {})
        ways.update({len(out) + position: way for position, way in aside_ways.items()})
        extra[len(out) + len(asides)] = list(range(len(out), len(out) + len(asides)))
        out += asides
        moved[index] = len(out)
        ways[len(out)] = way | Way(frozenset([builder.feet, offset(builder.feet, ABOVE)]))
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
    for old, new in moved.items():  # each kept action waits on what it waited on, and on its asides
        deps[new] = tuple(sorted({*(moved[d] for d in program.deps[old]), *extra.get(new, [])}))
    footing(out, deps)
    keep_ways_open(out, deps, ways)
    return Program(tuple(out), tuple(deps), tuple(moved[h] for h in program.handoffs))


def _cells_ahead(program: Program, world: WorldSpec, order: list[int]) -> dict[tuple[str, str], list[Cell]]:
    """Each builder's cells to come on each site, in the order it places them (what a tower may look ahead to)."""
    ahead: dict[tuple[str, str], list[Cell]] = {}
    for index in order:
        action = program.actions[index]
        if isinstance(action, PlaceAt) and action.site in world.builds:
            ahead.setdefault((action.agent, action.site), []).append(action.cell)
    return ahead


def _teammates(builders: dict[tuple[str, str], _Builder], key: tuple[str, str]) -> list[_Builder]:
    """The builders on ``key``'s site other than its own."""
    agent, site = key
    return [builder for (other, where), builder in builders.items() if other != agent and where == site]


def _towers_of_others(builders: dict[tuple[str, str], _Builder], key: tuple[str, str]) -> frozenset[Cell]:
    """The cells of the towers standing on ``key``'s site that are not its builder's."""
    return frozenset(
        cell
        for builder in _teammates(builders, key)
        for tower in [*builder.left, *([builder.tower] if builder.tower else [])]
        for cell in tower.cells
    )


def _out_of_the_way(
    builders: dict[tuple[str, str], _Builder], placer: tuple[str, str], terrain: Terrain, action: PlaceAt | BreakAt
) -> tuple[list[Action], dict[int, Way]]:
    """Teammates step out of the placement's way: out of its cells, and out of the site's box if it would wall them in.

    One that stepped off a tower and would be cut off from it goes back down it first; one
    that stands in the cells steps to the nearest spot clear of them. With the steps comes
    what each step's walk relies on (by its position among them): a step aside can be a long
    walk, down from a roof and out of the box, and on the real clock a teammate's block must
    not close it first (``runtime/real_clock.keep_ways_open``).
    """
    steps: list[Action] = []
    ways: dict[int, Way] = {}
    filled = body_cells(action.cell, action.block)
    for key, other in sorted(builders.items()):
        if key == placer or key[1] != action.site or other.tower is not None:
            continue
        if other.left and not (
            _can_go_back(terrain, other, filled, action.block)
            and _way_down_and_out(terrain, other, filled, action.block)
        ):
            steps += _take_down(other, terrain)
        in_the_way = other.feet in filled or offset(other.feet, ABOVE) in filled
        if other.left or terrain.outside(other.feet):
            walled_in = False
        else:
            walled_in = not terrain.escapes_after(other.feet, filled, action.block)
        if not (in_the_way or walled_in):
            continue
        way = terrain.walk_to(other.feet, terrain.outside) if walled_in and not other.left else None
        if way is None and other.left:
            way = terrain.walk_to(other.feet, _clear_and_tethered(terrain, other, filled, action.block))
            if way is None:
                steps += _take_down(other, terrain)
                continue
        if way is None:
            way = terrain.walk_to(other.feet, lambda feet: feet not in filled and offset(feet, ABOVE) not in filled)
        if way is not None and way.feet != other.feet:
            ways[len(steps)] = terrain.way_between(other.feet, way.feet) | Way(
                frozenset([way.feet, offset(way.feet, ABOVE)])
            )
            other.feet = way.feet
            steps.append(StepAside(other.agent, other.task, other.site, way.feet))
    return steps, ways


def _clear_and_tethered(
    terrain: Terrain, builder: _Builder, filled: frozenset[Cell], block: str
) -> Callable[[Cell], bool]:
    """A spot clear of ``filled`` from which ``builder`` can still walk back onto the tower it came up by."""
    top = builder.left[-1].top

    def fits(feet: Cell) -> bool:
        if feet in filled or offset(feet, ABOVE) in filled:
            return False
        with terrain.adding(filled, block):
            return terrain.walk_to(feet, lambda there: there == top, limit=3000) is not None

    return fits


def _way_down_and_out(terrain: Terrain, builder: _Builder, filled: frozenset[Cell], block: str) -> bool:
    """Whether, once ``block`` fills ``filled``, the builder dug down its tower can still walk out of the site."""
    tower = builder.left[-1]
    with terrain.without(tower.cells), terrain.adding(filled, block):
        return terrain.escapes(tower.base)


def _can_go_back(terrain: Terrain, builder: _Builder, filled: frozenset[Cell], block: str) -> bool:
    """Whether ``builder`` can still walk back onto the tower it came up by once ``block`` fills ``filled``."""
    top = builder.left[-1].top
    if top in filled or offset(top, ABOVE) in filled:
        return False
    with terrain.adding(filled, block):
        return terrain.walk_to(builder.feet, lambda feet: feet == top, limit=3000) is not None


def _free_for_towers(site: BuildSite, terrain: Terrain, bodies: frozenset[Cell]) -> Callable[[Cell], bool]:
    """A cell may hold a tower block while the blueprint leaves it empty and nothing (no teammate) is there now."""
    filled = site.filled

    def free(cell: Cell) -> bool:
        return cell not in filled and cell not in terrain.blocks and cell not in bodies

    return free


def _bodies_of_others(builders: dict[tuple[str, str], _Builder], key: tuple[str, str]) -> frozenset[Cell]:
    """The cells the bodies of ``key``'s teammates on its site are in now (feet and head)."""
    return frozenset(
        cell for builder in _teammates(builders, key) for cell in (builder.feet, offset(builder.feet, ABOVE))
    )


def _stand_for(
    builder: _Builder,
    terrain: Terrain,
    action: PlaceAt | BreakAt,
    placing: bool,
    free: Callable[[Cell], bool],
    upcoming: tuple[Cell, ...] = (),
) -> list[Action]:
    """What the builder does to stand within reach of ``action``'s cell: leave a tower, walk, or pillar up."""
    steps: list[Action] = []
    filled = body_cells(action.cell, action.block) if placing else frozenset()
    if builder.tower is not None:
        if reaches(action.cell, filled)(builder.feet):
            return steps
        top = builder.feet
        off = None if builder.left else choose_stand(terrain, top, action.cell, action.block, placing, top)
        if off is not None:  # onto the build from the top (a roof as it grows): the tower stays to come down by
            builder.left.append(builder.tower)
            builder.tower, builder.feet = None, off.feet
            return steps
        higher = _raise(builder, terrain, action, free, filled)
        if higher is not None:
            return higher
        steps += _dig_down(builder, terrain)
    if builder.left and placing and not _way_down_and_out(terrain, builder, filled, action.block):
        steps += _take_down(builder, terrain)  # the block would shut in the foot of its tower: down first
    back = builder.left[-1].top if builder.left else None
    stand = choose_stand(terrain, builder.feet, action.cell, action.block, placing, back, strict=True)
    while stand is None and builder.left:  # up on the build, out of reach: back down the tower it came up by
        steps += _take_down(builder, terrain, 1)
        back = builder.left[-1].top if builder.left else None
        stand = choose_stand(terrain, builder.feet, action.cell, action.block, placing, back, strict=True)
    if stand is not None:
        builder.feet = stand.feet
        return steps
    found = tower_to(terrain, builder.feet, action.cell, free, filled, upcoming)
    walk_off = found is None and not builder.left  # one tower to come back down by at a time
    if walk_off:
        found = tower_to_walk_off(terrain, builder.feet, action.cell, free, filled)
    if found is None:  # last: a stand it may not leave the site from (the world says so if it is stuck)
        stand = choose_stand(terrain, builder.feet, action.cell, action.block, placing)
        if stand is not None:
            builder.feet = stand.feet
        return steps
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


def _raise(
    builder: _Builder,
    terrain: Terrain,
    action: PlaceAt | BreakAt,
    free: Callable[[Cell], bool],
    filled: frozenset[Cell],
) -> list[Action] | None:
    """Pillar the builder's tower higher until ``action``'s cell is in reach; None when no height reaches it."""
    tower = builder.tower
    assert tower is not None
    within = reaches(action.cell, filled)
    for extra in range(1, MAX_TOWER - tower.height + 1):
        taller = Tower(tower.base, tower.height + extra)
        new = taller.cells[tower.height :]
        head = offset(taller.top, ABOVE)
        if not all(free(cell) and terrain.passable(cell) and cell not in filled for cell in new):
            return None
        if not (free(taller.top) and free(head) and terrain.passable(head)) or taller.top in filled or head in filled:
            return None
        if within(taller.top):
            terrain.place(new, TOWER_BLOCK)
            builder.feet, builder.tower = taller.top, taller
            return [Pillar(builder.agent, builder.task, builder.site, cell, TOWER_BLOCK) for cell in new]
    return None


def _take_down(builder: _Builder, terrain: Terrain, most: int = 0) -> list[Action]:
    """Towers a builder stepped off (``most`` of them, 0: all), dug down: it walks back onto each, last first."""
    steps: list[Action] = []
    for _ in range(most or len(builder.left)):
        tower = builder.left.pop()
        top = tower.top

        def on_top(feet: Cell, top: Cell = top) -> bool:
            return feet == top

        if terrain.walk_to(builder.feet, on_top) is None:
            steps += _break_from_beside(builder, terrain, tower)
            continue
        steps.append(StepAside(builder.agent, builder.task, builder.site, tower.top))
        builder.feet, builder.tower = tower.top, tower
        steps += _dig_down(builder, terrain)
    return steps


def _break_from_beside(builder: _Builder, terrain: Terrain, tower: Tower) -> list[Action]:
    """A tower the builder was cut off from, broken block by block from wherever it can reach each, top first.

    A block it cannot reach stays; the world then finds scaffolding where the blueprint wants air.
    """
    steps: list[Action] = []
    for cell in reversed(tower.cells):
        stand = choose_stand(terrain, builder.feet, cell, TOWER_BLOCK, False)
        if stand is None:
            continue
        builder.feet = stand.feet
        steps.append(BreakAt(builder.agent, builder.task, builder.site, cell, TOWER_BLOCK, stand.feet))
        terrain.remove(cell)
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
