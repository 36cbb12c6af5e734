"""Where a builder can stand to reach a cell, and how it walks there: the game's rule, on a grid.

A player stands on a full block (or the ground), its body two cells high in cells that
hold nothing solid (a carpet is walked on, a door is not walked through), and it places
or breaks a block whose centre is within reach of its eyes (1.62 above its feet). It
walks to a neighbouring column one level up (a jump, with room over its head), on the
level, or down a drop of at most four. It does not fly, climb walls, or pass closed
doors. Around a build site lies open, flat ground (MINDcraft clears the footprint and
five blocks beyond).

A builder that must reach higher pillars up (``worlds/towers.py``). The simulator applies
this rule to every placement and break, the compiler plans stands and towers by it
(``runtime/stands.py``), and the Minecraft skill walks by the same reach.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator
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
"""The highest drop (feet to feet) a builder walks down; vanilla deals half a heart for it.

mineflayer-pathfinder's ``maxDropDown`` counts from the feet to the block landed on
(``getLandingBlock``), so the bots walk with it set one higher (``js/bridge.js``)."""
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


@dataclass(frozen=True, slots=True)
class Way:
    """The cells a builder's walk and stand rely on: those that must stay empty, and the floors it steps on."""

    clear: frozenset[Cell] = frozenset()
    floors: frozenset[Cell] = frozenset()

    def __or__(self, other: Way) -> Way:
        return Way(self.clear | other.clear, self.floors | other.floors)


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
        self._relied_by: dict[Cell, set[Cell]] = {}  # cell → the feet whose known way out relies on it
        self._standable: dict[Cell, bool] = {}
        self._moves: dict[Cell, list[tuple[Cell, bool]]] = {}  # a stand's steps: every walk asks for them again
        self._move_ends: dict[Cell, frozenset[Cell]] = {}  # where those steps lead: what a reverse walk asks

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

    def _remember_way_out(self, feet: Cell, used: frozenset[Cell]) -> None:
        self._ways_out[feet] = used
        for cell in used:
            self._relied_by.setdefault(cell, set()).add(feet)

    def _forget(self, changed: set[Cell]) -> None:
        for cell in changed:  # a feet listed under a cell its current way no longer uses is forgotten too: harmless
            for feet in self._relied_by.pop(cell, ()):
                self._ways_out.pop(feet, None)
        for x, y, z in changed:
            for feet in ((x, y + 1, z), (x, y, z), (x, y - 1, z)):
                self._standable.pop(feet, None)
            if self._moves:
                self._forget_moves_near(x, y, z)

    def _forget_moves_near(self, x: int, y: int, z: int) -> None:
        """Forget the steps of every stand a change at ``x, y, z`` may open or close, as :meth:`moves` reads:
        the four columns beside it, from a climb's floor below to the foot of the deepest drop above, and the
        stand two below, whose climbs need head room there."""
        moves, ends = self._moves, self._move_ends
        moves.pop((x, y - 2, z), None)
        ends.pop((x, y - 2, z), None)
        for nx, nz in ((x + 1, z), (x - 1, z), (x, z + 1), (x, z - 1)):
            for level in range(y - 2, y + MAX_DROP + 2):
                moves.pop((nx, level, nz), None)
                ends.pop((nx, level, nz), None)

    def escapes_after(self, feet: Cell, filled: Iterable[Cell], block: str) -> bool:
        """Whether a builder at ``feet`` can still walk out of the box once ``block`` fills ``filled``."""
        filled = frozenset(filled)
        known = self._ways_out.get(feet)
        if known is not None and not known & filled:
            return True  # the way out it had touches none of the new cells
        with self.adding(filled, block):
            route = self._route(feet, self.outside, 20000)
        if route is None:
            return False
        used = _relied_on(route)
        if not used & filled:  # a way out that does not use the new cells holds without them too
            self._remember_way_out(feet, used)
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
        known = self._moves.get(feet)
        if known is None:
            known = self._moves[feet] = self._steps_from(feet)
        return known

    def move_ends(self, feet: Cell) -> frozenset[Cell]:
        """Where one step from ``feet`` leads (:meth:`moves` without the climbs)."""
        known = self._move_ends.get(feet)
        if known is None:
            known = self._move_ends[feet] = frozenset(near for near, _ in self.moves(feet))
        return known

    def _steps_from(self, feet: Cell) -> list[tuple[Cell, bool]]:
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

    def escapes(self, start: Cell, limit: int = 20000) -> bool:
        """Whether a builder at ``start`` can still walk out of the site's box."""
        if start in self._ways_out:
            return True
        route = self._route(start, self.outside, limit)
        if route is not None:
            self._remember_way_out(start, _relied_on(route))
        return route is not None

    def way_between(self, start: Cell, end: Cell, shaky: frozenset[Cell] = frozenset(), limit: int = 4000) -> Way:
        """What a fewest-moves walk from ``start`` to ``end`` relies on; an empty way when there is none.

        A teammate's block in one of its clear cells, placed before the walk on the real clock,
        closes the walk, and a floor above the ground not yet placed leaves a gap in it:
        ``runtime/stands.py`` orders both around the walk. A walk off the ``shaky`` floors
        (teammates' towers, there only for a while) is taken when there is one. With no walk
        within ``limit`` cells (a builder that climbs a tower instead) nothing is ordered.
        """
        route = self._route(start, lambda feet: feet == end, limit, shaky) if shaky else None
        route = route or self._route(start, lambda feet: feet == end, limit)
        if route is None:
            return Way()
        clear = frozenset(cell for cell in _relied_on(route) if self.passable(cell))
        return Way(clear, frozenset((x, y - 1, z) for x, y, z in route if y >= 2))

    def _route(
        self, start: Cell, arrived: Callable[[Cell], bool], limit: int, shaky: frozenset[Cell] = frozenset()
    ) -> list[Cell] | None:
        """The feet cells of the fewest-moves walk from ``start`` to where ``arrived`` holds, off ``shaky`` floors."""
        if arrived(start):
            return [start]
        parents: dict[Cell, Cell | None] = {start: None}
        queue = deque([start])
        while queue and len(parents) < limit:
            here = queue.popleft()
            for near, _ in self.moves(here):
                if near in parents or (near[0], near[1] - 1, near[2]) in shaky:
                    continue
                parents[near] = here
                if arrived(near):
                    route = [near]
                    while (back := parents[route[-1]]) is not None:
                        route.append(back)
                    return route[::-1]
                queue.append(near)
        return None

    def reaching(self, target: Cell, limit: int = 500, avoid: Container[Cell] = ()) -> set[Cell]:
        """Stands from which a builder can walk to ``target`` not through ``avoid`` (a reverse walk from it, the
        nearest ``limit``).

        A stand reaches ``here`` when ``here`` is among its :meth:`moves`: the reverse walk reads
        the same (remembered) steps as every forward one, so the two never disagree.
        """
        found = {target}
        queue = deque([target])
        known, standable = self._standable, self.standable  # the hot loop of a roof's planning: no lookups
        ends, move_ends = self._move_ends, self.move_ends
        while queue and len(found) < limit:
            x, y, z = here = queue.popleft()
            for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                for height in range(y - 1, y + MAX_DROP + 1):
                    before = (x - dx, height, z - dz)
                    if before in found or not (known.get(before) or (before not in known and standable(before))):
                        continue
                    if before in avoid:
                        continue
                    if here in (ends.get(before) or move_ends(before)):
                        found.add(before)
                        queue.append(before)
        return found

    def walk_to(
        self, start: Cell, arrived: Callable[[Cell], bool], limit: int = 20000, avoid: Container[Cell] = ()
    ) -> Stand | None:
        """The nearest stand (fewest moves) from ``start`` where ``arrived`` holds, not through ``avoid``; None when
        there is none."""
        if arrived(start):
            return Stand(start, 0, 0)
        seen: dict[Cell, tuple[int, int]] = {start: (0, 0)}
        queue = deque([start])
        while queue and len(seen) < limit:
            here = queue.popleft()
            moves, climbs = seen[here]
            for near, climb in self.moves(here):
                if near in seen or near in avoid:
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
        if not any(within(feet) for feet in way_back):
            return None  # no stand it could walk back from reaches the cell: no walk finds one
        return terrain.walk_to(start, lambda feet: within(feet) and feet in way_back)

    def free(feet: Cell) -> bool:
        return within(feet) and terrain.escapes_after(feet, filled, block)

    found = terrain.walk_to(start, free)
    return found if found is not None or strict else terrain.walk_to(start, within)
