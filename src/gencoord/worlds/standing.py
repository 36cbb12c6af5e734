"""Where a builder can stand to reach a cell, and how it walks there: the game's rule, on a grid.

A player stands on a full block (or the ground), its body two cells high in cells that
hold nothing solid (a carpet is walked on, a door is not walked through), and it places
or breaks a block whose centre is within reach of its eyes (1.62 above its feet). It
walks to a neighbouring column one level up (a jump, with room over its head), on the
level, or down a drop of at most three. It does not fly, climb walls, or pass closed
doors. Around a build site lies open, flat ground (MINDcraft clears the footprint and
five blocks beyond).

A builder that must reach higher **pillars**: it jumps and places a scaffolding block in
the cell it stood in, and stands one higher; it comes down by breaking the block under
its feet. The simulator applies this rule to every placement and break, the planner
plans towers by it, and the Minecraft skill walks by the same reach.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from gencoord.dsl.cells import Cell
from gencoord.worlds.placing import ABOVE, needs_floor, offset, two_high
from gencoord.worlds.spec import BuildSite, Position

EYE_HEIGHT = 1.62
"""A player's eyes above its feet."""
REACH = 4.5
"""Vanilla survival reach for placing and breaking, from the eyes to the block's centre."""
MAX_DROP = 4
"""The highest drop a builder walks down: mineflayer-pathfinder's default (vanilla: one heart of damage)."""
MARGIN = 16
"""Columns of open ground around the site a builder walks on (where a team starts is among them)."""
JUMP_S = 0.5
"""Seconds a step up costs beyond walking: a jump."""


@dataclass(frozen=True, slots=True)
class Stand:
    """Where a builder stands (its feet cell, site offsets) and how many moves it walked to get there."""

    feet: Cell
    moves: int
    climbs: int


def eye_reach(feet: Cell, cell: Cell) -> float:
    """Distance from the eyes of a builder whose feet are in ``feet`` to the centre of ``cell``."""
    return math.dist(
        (feet[0] + 0.5, feet[1] + EYE_HEIGHT, feet[2] + 0.5), (cell[0] + 0.5, cell[1] + 0.5, cell[2] + 0.5)
    )


class Terrain:
    """What stands in a site box (site offsets → block), seen by a builder walking through it.

    It reads (and, for a plan, writes) the dict it is given: a world's own record of the site.
    """

    def __init__(self, size: Cell, blocks: dict[Cell, str]) -> None:
        self.size = size
        self.blocks = blocks
        width, height, depth = size
        self._bounds = (-MARGIN, width + MARGIN, 0, height + 1, -MARGIN, depth + MARGIN)
        self._ways_out: dict[Cell, frozenset[Cell]] = {}  # feet → the cells its known way out relies on
        self._standable: dict[Cell, bool] = {}

    def place(self, cells: Iterable[Cell], block: str) -> None:
        """``block`` now fills ``cells`` (forgetting what was known of the ways through them)."""
        changed = set(cells)
        self.blocks.update(dict.fromkeys(changed, block))
        self._forget(changed)

    def remove(self, cell: Cell) -> None:
        """``cell`` is empty now (forgetting what was known of the ways over it)."""
        self.blocks.pop(cell, None)
        self._forget({cell})

    @contextmanager
    def adding(self, cells: Iterable[Cell], block: str) -> Iterator[None]:
        """``block`` in the empty ones of ``cells`` for a while: what the world would be once it is placed."""
        added = [cell for cell in set(cells) if cell not in self.blocks]
        self.place(added, block)
        try:
            yield
        finally:
            for cell in added:
                self.remove(cell)

    @contextmanager
    def without(self, cells: Iterable[Cell]) -> Iterator[None]:
        """``cells`` empty for a while: what the world would be once they are broken."""
        gone = {cell: self.blocks[cell] for cell in set(cells) if cell in self.blocks}
        for cell in gone:
            self.remove(cell)
        try:
            yield
        finally:
            for cell, block in gone.items():
                self.place([cell], block)

    def _forget(self, changed: set[Cell]) -> None:
        if self._ways_out:
            self._ways_out = {feet: used for feet, used in self._ways_out.items() if not used & changed}
        for x, y, z in changed:
            for feet in ((x, y + 1, z), (x, y, z), (x, y - 1, z)):
                self._standable.pop(feet, None)

    def escapes_after(self, feet: Cell, filled: Iterable[Cell], block: str) -> bool:
        """Whether a builder at ``feet`` can still walk out of the box once ``block`` fills ``filled``."""
        filled = frozenset(filled)
        known = self._ways_out.get(feet)
        if known is not None and not known & filled:
            return True  # the way out it had touches none of the new cells
        with self.adding(filled, block):
            route = self._route(feet, self.outside, 3000)
        if route is None:
            return False
        used = _relied_on(route)
        if not used & filled:  # a way out that does not use the new cells holds without them too
            self._ways_out[feet] = used
        return True

    def inside(self, cell: Cell) -> bool:
        x, y, z = cell
        low_x, high_x, low_y, high_y, low_z, high_z = self._bounds
        return low_x <= x < high_x and low_y <= y <= high_y and low_z <= z < high_z

    def passable(self, cell: Cell) -> bool:
        """Whether a body can be in ``cell``: nothing, or a carpet-like block, stands there."""
        block = self.blocks.get(cell)
        return block is None or (needs_floor(block) and not two_high(block))

    def floor(self, cell: Cell) -> bool:
        """Whether a body can stand on ``cell``: the ground below level 0, or a full block."""
        if cell[1] < 0:
            return True
        block = self.blocks.get(cell)
        return block is not None and not needs_floor(block)

    def standable(self, feet: Cell) -> bool:
        known = self._standable.get(feet)
        if known is None:
            x, y, z = feet
            known = (
                self.inside(feet) and self.floor((x, y - 1, z)) and self.passable(feet) and self.passable((x, y + 1, z))
            )
            self._standable[feet] = known
        return known

    def moves(self, feet: Cell) -> list[tuple[Cell, bool]]:
        """Where one step from ``feet`` leads, and whether it is a climb."""
        x, y, z = feet
        found: list[tuple[Cell, bool]] = []
        for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nx, nz = x + dx, z + dz
            if self.standable((nx, y, nz)):
                found.append(((nx, y, nz), False))
                continue
            if self.standable((nx, y + 1, nz)) and self.passable((x, y + 2, z)):
                found.append(((nx, y + 1, nz), True))
                continue
            if not (self.passable((nx, y, nz)) and self.passable((nx, y + 1, nz))):
                continue
            for drop in range(1, MAX_DROP + 1):
                below = (nx, y - drop, nz)
                if not self.inside(below) or not self.passable(below):
                    break
                if self.standable(below):
                    found.append((below, False))
                    break
        return found

    def outside(self, feet: Cell) -> bool:
        """Whether ``feet`` is on the open ground around the site, clear of the blueprint's box."""
        x, _, z = feet
        width, _, depth = self.size
        return not (0 <= x < width and 0 <= z < depth)

    def escapes(self, start: Cell, limit: int = 3000) -> bool:
        """Whether a builder at ``start`` can still walk out of the site's box."""
        if start in self._ways_out:
            return True
        route = self._route(start, self.outside, limit)
        if route is not None:
            self._ways_out[start] = _relied_on(route)
        return route is not None

    def _route(self, start: Cell, arrived: Callable[[Cell], bool], limit: int) -> list[Cell] | None:
        """The feet cells of the fewest-moves walk from ``start`` to where ``arrived`` holds."""
        if arrived(start):
            return [start]
        parents: dict[Cell, Cell | None] = {start: None}
        queue = deque([start])
        while queue and len(parents) < limit:
            here = queue.popleft()
            for near, _ in self.moves(here):
                if near in parents:
                    continue
                parents[near] = here
                if arrived(near):
                    route = [near]
                    while (back := parents[route[-1]]) is not None:
                        route.append(back)
                    return route[::-1]
                queue.append(near)
        return None

    def reaching(self, target: Cell, limit: int = 3000) -> set[Cell]:
        """Every stand from which a builder can walk to ``target`` (a reverse walk from it)."""
        found = {target}
        queue = deque([target])
        while queue and len(found) < limit:
            x, y, z = here = queue.popleft()
            for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                for height in range(y - 1, y + MAX_DROP + 1):
                    before = (x - dx, height, z - dz)
                    if before not in found and self.standable(before) and any(
                        near == here for near, _ in self.moves(before)
                    ):
                        found.add(before)
                        queue.append(before)
        return found

    def walk_to(self, start: Cell, arrived: Callable[[Cell], bool], limit: int = 20000) -> Stand | None:
        """The nearest stand (fewest moves) from ``start`` where ``arrived`` holds; None when there is none."""
        if arrived(start):
            return Stand(start, 0, 0)
        seen: dict[Cell, tuple[int, int]] = {start: (0, 0)}
        queue = deque([start])
        while queue and len(seen) < limit:
            here = queue.popleft()
            moves, climbs = seen[here]
            for near, climb in self.moves(here):
                if near in seen:
                    continue
                seen[near] = (moves + 1, climbs + climb)
                if arrived(near):
                    return Stand(near, moves + 1, climbs + climb)
                queue.append(near)
        return None


def _relied_on(route: list[Cell]) -> frozenset[Cell]:
    """Every cell a walk along ``route`` relies on: floors, bodies, head room, the columns it drops or climbs."""
    used: set[Cell] = set()
    for step, after in zip(route, [*route[1:], route[-1]], strict=True):
        for x, z in ((step[0], step[2]), (after[0], after[2])):
            used.update((x, y, z) for y in range(min(step[1], after[1]) - 1, max(step[1], after[1]) + 3))
    return frozenset(used)


def reaches(cell: Cell, avoid: frozenset[Cell] = frozenset()) -> Callable[[Cell], bool]:
    """A stand from which ``cell`` is within reach, with the body clear of ``avoid`` (the cells being filled)."""

    def arrived(feet: Cell) -> bool:
        head = (feet[0], feet[1] + 1, feet[2])
        return feet not in avoid and head not in avoid and eye_reach(feet, cell) <= REACH

    return arrived


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
    limit: int = 4000,
) -> tuple[Stand, Tower] | None:
    """A tower from which ``cell`` is in reach, at a column the builder can walk to from ``start``.

    ``free`` says whether a cell may hold scaffolding (the blueprint leaves it empty). Of the
    columns within reach of ``cell`` and the heights (up to three above the lowest that
    reaches) from which it is in reach, the one that also reaches most of the builder's
    ``upcoming`` cells is taken, then the lower, then the nearer: one tower for many blocks.
    """
    seen = {start: 0}
    queue = deque([start])
    while queue and len(seen) < limit:
        here = queue.popleft()
        for near, _ in terrain.moves(here):
            if near not in seen:
                seen[near] = seen[here] + 1
                queue.append(near)
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


def feet_cell(position: Position, site: BuildSite) -> Cell:
    """The site cell a body at world ``position`` has its feet in."""
    x, y, z = position
    ox, oy, oz = site.origin
    return (math.floor(x - ox), round(y - oy), math.floor(z - oz))


def feet_position(feet: Cell, site: BuildSite) -> Position:
    """The world position of a body standing in the middle of site cell ``feet``."""
    x, y, z = site.world(feet)
    return (x + 0.5, float(y), z + 0.5)


def body_cells(cell: Cell, block: str) -> frozenset[Cell]:
    """The cells a placed ``block`` fills: its own, and the one above for a door."""
    return frozenset([cell, offset(cell, ABOVE)] if two_high(block) else [cell])


def choose_stand(
    terrain: Terrain,
    start: Cell,
    cell: Cell,
    block: str,
    placing: bool,
    back: Cell | None = None,
    strict: bool = False,
) -> Stand | None:
    """The stand a builder takes to place (or break) ``block`` at ``cell``: one it can leave the site from, if any.

    With ``back`` (the top of the tower it came up by), only stands from which it can walk
    back there: it must come down the way it went up. ``strict``: only such stands, never
    one it could not leave the site from.
    """
    filled = body_cells(cell, block) if placing else frozenset()
    within = reaches(cell, filled)
    if back is not None:

        with terrain.adding(filled, block):
            way_back = terrain.reaching(back)
        return terrain.walk_to(start, lambda feet: within(feet) and feet in way_back)

    def free(feet: Cell) -> bool:
        return within(feet) and terrain.escapes_after(feet, filled, block)

    found = terrain.walk_to(start, free)
    return found if found is not None or strict else terrain.walk_to(start, within)


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
    """
    seen = {start: 0}
    queue = deque([start])
    while queue and len(seen) < 4000:
        here = queue.popleft()
        for near, _ in terrain.moves(here):
            if near not in seen:
                seen[near] = seen[here] + 1
                queue.append(near)
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

            def and_back(feet: Cell, top: Cell = top) -> bool:  # it must come back down the way it went up
                return within(feet) and terrain.walk_to(feet, lambda there: there == top, limit=3000) is not None

            with terrain.adding(tower.cells, "scaffolding"):
                stand = terrain.walk_to(top, and_back, limit=3000)
            if stand is not None and stand.feet != tower.top:
                return Stand(stand.feet, seen[base] + stand.moves, stand.climbs), tower
    return None
