"""Towers: how a builder reaches what no stand on the ground or the build reaches, as players do.

It stands in an empty column, jumps, and places a scaffolding block in the cell it stood in,
standing one higher each time; it works from the top, or steps off onto the build, and comes
back down the way it went up, breaking the block under its feet each step, so the column ends
as air. Which column and how high follow from the builder's next blocks (``runtime/stands.py``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from gencoord.dsl.cells import Cell
from gencoord.worlds.standing import REACH, Stand, Terrain, eye_reach, reaches

WALK_LIMIT = 4000
"""Stands around the builder a tower's column is chosen among."""


def _walkable(terrain: Terrain, start: Cell, limit: int) -> dict[Cell, int]:
    """Every stand the builder can walk to from ``start`` (the nearest ``limit``), with its moves."""
    seen = {start: 0}
    queue = deque([start])
    while queue and len(seen) < limit:
        here = queue.popleft()
        for near, _ in terrain.moves(here):
            if near not in seen:
                seen[near] = seen[here] + 1
                queue.append(near)
    return seen


@dataclass(frozen=True, slots=True)
class Tower:
    """A pillar of scaffolding: ``height`` blocks in column ``base``'s (x, z), from ``base``'s level up.

    The builder stands in ``base``, jumps and places a block under its feet ``height`` times,
    works from the top, and breaks the blocks under its feet again, top first.
    """

    base: Cell
    height: int

    @property
    def cells(self) -> tuple[Cell, ...]:
        x, y, z = self.base
        return tuple((x, y + level, z) for level in range(self.height))

    @property
    def top(self) -> Cell:
        """Where the builder's feet are once the tower stands."""
        x, y, z = self.base
        return (x, y + self.height, z)


def tower_to(
    terrain: Terrain,
    start: Cell,
    cell: Cell,
    free: Callable[[Cell], bool],
    avoid: frozenset[Cell] = frozenset(),
    upcoming: tuple[Cell, ...] = (),
    max_height: int = 16,
    limit: int = WALK_LIMIT,
) -> tuple[Stand, Tower] | None:
    """A tower from which ``cell`` is in reach, at a column the builder can walk to from ``start``.

    ``free`` says whether a cell may hold scaffolding (the blueprint leaves it empty). Of the
    columns within reach of ``cell`` and the heights (up to three above the lowest that
    reaches) from which it is in reach, the one that also reaches most of the builder's
    ``upcoming`` cells is taken, then the lower, then the nearer: one tower for many blocks.
    """
    seen = _walkable(terrain, start, limit)
    candidates: list[tuple[tuple[int, int, float, int], Tower]] = []
    for base, walked in seen.items():
        x, y, z = base
        if math.dist((x, z), (cell[0], cell[2])) > REACH or ((x, z) == (cell[0], cell[2]) and cell[1] >= y):
            continue  # too far, or the cell's own column: the tower would stand in its way
        lowest = None
        for height in range(1, max_height + 1):
            tower = Tower(base, height)
            top, step, head = tower.top, tower.cells[-1], (x, y + height + 1, z)
            if not free(step) or not terrain.passable(step) or step in avoid:
                break
            if not terrain.inside(head) or not terrain.passable(head) or top in avoid or head in avoid:
                break
            if lowest is not None and height > lowest + 3:
                break
            if not (free(top) and free(head)) or eye_reach(top, cell) > REACH:
                continue  # the blueprint fills where the builder would stand, or it is still out of reach
            lowest = height if lowest is None else lowest
            covered = sum(eye_reach(top, later) <= REACH for later in upcoming)
            candidates.append(((-covered, height, math.dist((x, z), (cell[0], cell[2])), walked), tower))
    for _, tower in sorted(candidates, key=lambda candidate: (candidate[0], candidate[1].base)):
        if terrain.escapes(tower.base):  # dug down again, the builder can leave the site from there
            return Stand(tower.base, seen[tower.base], 0), tower
    return None


def tower_to_walk_off(
    terrain: Terrain,
    start: Cell,
    cell: Cell,
    free: Callable[[Cell], bool],
    avoid: frozenset[Cell] = frozenset(),
    max_height: int = 16,
    columns: int = 96,
) -> tuple[Stand, Tower] | None:
    """A tower to climb onto what stands (a roof, a wall's top) and walk from there to a stand within reach.

    For parts no column near enough reaches: the builder pillars up beside the build, steps
    off onto it, and walks on. The tower stays until the builder comes back to dig it down.
    The columns nearest ``cell`` that the builder can walk to are tried, lowest tower first.
    The walk off, and the walk back to the top, keep off the stands the builder walks to
    already: a stand among those would need no tower, and a walk that drops back onto the
    ground would search all of it (most of a house's planning time, before).
    """
    seen = _walkable(terrain, start, WALK_LIMIT)
    nearest = sorted(seen, key=lambda feet: (math.dist((feet[0], feet[2]), (cell[0], cell[2])), seen[feet], feet))
    bases: dict[tuple[int, int], Cell] = {}
    for feet in nearest:  # one base a column: the nearest walk to it
        bases.setdefault((feet[0], feet[2]), feet)
        if len(bases) == columns:
            break
    within = reaches(cell, avoid)
    for base in bases.values():
        x, y, z = base
        for height in range(1, max_height + 1):
            tower = Tower(base, height)
            step = tower.cells[-1]
            above = (x, y + height + 1, z)
            if not free(step) or not terrain.passable(step) or step in avoid or not terrain.passable(above):
                break
            if not (free(tower.top) and free(above)):
                continue  # the blueprint fills where the builder would stand: it could not come back to it
            top = tower.top
            back: list[set[Cell]] = []  # where the builder can walk back to the top from: one reverse walk a tower

            def and_back(feet: Cell, top: Cell = top, back: list[set[Cell]] = back) -> bool:
                if not within(feet):
                    return False
                if not back:  # it must come back down the way it went up
                    back.append(terrain.reaching(top, limit=3000, avoid=seen.keys()))
                return feet in back[0]

            with terrain.adding(tower.cells, "scaffolding"):
                stand = terrain.walk_to(top, and_back, limit=3000, avoid=seen.keys())
            if stand is not None and stand.feet != tower.top:
                return Stand(stand.feet, seen[base] + stand.moves, stand.climbs), tower
    return None
