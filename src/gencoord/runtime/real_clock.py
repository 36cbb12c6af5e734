"""The waits that keep a build's plan true when its builders act side by side, on the real clock.

``runtime/stands.py`` plans every stand, tower and walk in one merged order of the
builders' actions (the order the simulator applies them in). Real builders do not keep
that order: each goes at its own pace, and only the program's waits hold them back. These
passes add the waits that what the plan relied on needs: what bears a builder's body
(``footing``) and the ways it walks (``keep_ways_open``). Each wait points back in the
program, so none can deadlock; in the simulator, which applies the merged order, they
cost only time.
"""

from __future__ import annotations

from gencoord.dsl.cells import Cell
from gencoord.worlds.actions import Action, BreakAt, DigDown, Pillar, PlaceAt, StepAside
from gencoord.worlds.placing import ABOVE, BELOW, offset
from gencoord.worlds.standing import Terrain, Way, body_cells

PILLAR_HEAD_ROOM = 3
"""Empty cells over a tower's step a jump needs: the body risen one block, and the top of the jump."""


def _feet(action: Action) -> Cell | None:
    """Where ``action``'s agent stands while it acts, as planned."""
    if isinstance(action, PlaceAt | BreakAt):
        return action.stand
    if isinstance(action, StepAside):
        return action.feet
    if isinstance(action, Pillar):
        return action.cell  # it jumps from there
    return None


def footing(actions: list[Action], deps: list[tuple[int, ...]]) -> None:
    """Keep in order what bears a builder's body: its floor, and the cells it stands in or fills.

    The stands were planned in one merged order, but builders act side by side on the real
    clock. So a builder planned onto a teammate's tower waits for the tower to rise; the
    teammate waits to dig it down until nobody stands on it; and a builder planned into a
    cell (to stand, or to pillar up a tower of its own) where a teammate's tower stood waits
    for that tower to come down. (The other blocks of a walk are the world's to judge.)
    Every wait added points back in ``actions``, so no deadlock can follow.
    """
    placer: dict[tuple[str, Cell], int] = {}  # the action that put the block standing in a cell
    cleared: dict[tuple[str, Cell], int] = {}  # the action that last took a cell's block away
    standing: dict[tuple[str, Cell], list[int]] = {}  # the actions whose agent stands on a cell's block
    for index, action in enumerate(actions):
        site = getattr(action, "site", None)
        if site is None:
            continue
        needed: set[int] = set()
        if isinstance(action, DigDown | BreakAt):
            needed.update(standing.pop((site, action.cell), []))
            placer.pop((site, action.cell), None)
        feet = _feet(action)
        if feet is not None:
            under = (site, offset(feet, BELOW))
            needed.update(i for i in (placer.get(under),) if i is not None)
            needed.update(i for cell in (feet, offset(feet, ABOVE)) if (i := cleared.get((site, cell))) is not None)
            standing.setdefault(under, []).append(index)
        if isinstance(action, PlaceAt | Pillar):
            needed.update(i for i in (cleared.get((site, action.cell)),) if i is not None)
            placer[(site, action.cell)] = index
        if isinstance(action, DigDown | BreakAt):
            cleared[(site, action.cell)] = index
        added = {i for i in needed if actions[i].agent != action.agent}
        if added:
            deps[index] = tuple(sorted({*deps[index], *added}))


def keep_ways_open(actions: list[Action], deps: list[tuple[int, ...]], ways: dict[int, Way]) -> None:
    """Keep a builder's walk as planned on the real clock: open, and on the floors it was planned over.

    The stands and walks were planned in one merged order (the simulator's), where a block
    a teammate places later in that order is not there yet, and one placed earlier is. On
    the real clock a faster teammate may place the first kind before the walk and close it
    (mineflayer's "No path to the goal"), and a slower one may not yet have placed a floor
    the walk crosses (a tower's top to step off by). So a block placed into a cell that an
    earlier action's walk or stand relies on (``ways``: action index → its way) waits for
    that action; a walk waits for each step of a teammate's tower it crosses, and the tower
    comes down only after the walks planned over it before. (A walk over a teammate's
    blocks of the house does not wait for them: a bot's pathfinder walks round or below a
    floor still to come, and ``place_at`` waits for it where it cannot.) Every wait points
    back in ``actions``, so no deadlock can follow.
    """
    relying: dict[tuple[str, Cell], dict[str, int]] = {}  # (site, cell) → agent → its latest action relying on it
    tower: dict[tuple[str, Cell], int] = {}  # (site, cell) → the step up a tower that put its block there
    stepped_on: dict[tuple[str, Cell], dict[str, int]] = {}  # (site, cell) → agent → its latest walk over it
    for index, action in enumerate(actions):
        site = getattr(action, "site", None)
        if site is None:
            continue
        filled: frozenset[Cell] = frozenset()
        if isinstance(action, PlaceAt):
            filled = body_cells(action.cell, action.block)
        elif isinstance(action, Pillar):
            filled = frozenset([action.cell])
        needed = {earlier for cell in filled for earlier in relying.pop((site, cell), {}).values()}
        if isinstance(action, DigDown | BreakAt):
            tower.pop((site, action.cell), None)
            needed.update(stepped_on.pop((site, action.cell), {}).values())
        way = ways.get(index, Way())
        needed.update(i for cell in way.floors if (i := tower.get((site, cell))) is not None)
        needed = {i for i in needed if actions[i].agent != action.agent}
        if needed:
            deps[index] = tuple(sorted({*deps[index], *needed}))
        if isinstance(action, Pillar):
            tower[(site, action.cell)] = index
        for cell in way.clear:
            relying.setdefault((site, cell), {})[action.agent] = index
        for cell in way.floors:
            stepped_on.setdefault((site, cell), {})[action.agent] = index


def tower_ways(climbed: list[Action], first: int, terrain: Terrain, came_from: Cell) -> dict[int, Way]:
    """What each move up or off a tower relies on: a step's head room, the walk to its foot, the walk off.

    ``climbed`` are the moves just planned (their blocks already in ``terrain``), from index ``first``.
    """
    ways: dict[int, Way] = {}
    feet = came_from
    for index, step in enumerate(climbed, first):
        if isinstance(step, Pillar):
            head_room = frozenset(offset(step.cell, (0, up, 0)) for up in range(1, PILLAR_HEAD_ROOM + 1))
            ways[index] = Way(head_room)
            if index == first:  # it walks straight to the tower's foot
                with terrain.without(s.cell for s in climbed if isinstance(s, Pillar)):
                    ways[index] |= terrain.way_between(feet, step.cell)
            feet = offset(step.cell, ABOVE)
        elif isinstance(step, StepAside):
            ways[index] = terrain.way_between(feet, step.feet) | Way(frozenset([step.feet, offset(step.feet, ABOVE)]))
            feet = step.feet
    return ways
