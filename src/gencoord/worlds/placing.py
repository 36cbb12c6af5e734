"""Where a block may be placed: vanilla's rule that a block needs a face to be placed against.

A player places a block by clicking a face of a block next to the cell, any of the six,
the underside of a block above included, so a cell needs a standing neighbour (or the
ground under the build site). Some blocks stand only on a block below (carpets, doors,
torches, rails, pressure plates, saplings) and offer no face to build against; a door fills
its cell and the one above. The simulator applies this rule, the planner orders cells by it,
and the Minecraft skill (``js/skills.js`` ``placeAt``) finds the face the same way.

A blueprint part that touches nothing that stands (a room resting on air, a stair step
joined to the next only by an edge) is reached through **scaffolding**: temporary blocks in
cells the blueprint leaves empty, placed from what stands to the part and broken again once
the part stands (:func:`plan_scaffold`). Both sides of a commitment compute it from the
shared blueprint, so a commitment can name it by index (``dsl/cells.py``).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from gencoord.dsl.cells import Cell, Placement, ShareRange, is_temporary

_FLOOR_SUFFIXES = ("_carpet", "_door", "_pressure_plate", "_sapling", "_rail", "_bed", "_banner")
_FLOOR_NAMES = frozenset({"torch", "soul_torch", "redstone_torch", "rail", "snow", "carpet", "moss_carpet"})

NEIGHBOURS: tuple[Cell, ...] = ((0, -1, 0), (0, 1, 0), (1, 0, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1))
"""The six faces of a cell, the one below first (a player builds on top of what stands)."""
BELOW, ABOVE = NEIGHBOURS[0], NEIGHBOURS[1]


def needs_floor(block: str) -> bool:
    """Whether ``block`` stands only on a block below it (or on the ground), and offers no face to others."""
    return block in _FLOOR_NAMES or block.endswith(_FLOOR_SUFFIXES)


def two_high(block: str) -> bool:
    """Whether placing ``block`` fills its cell and the one above (a door's two halves)."""
    return block.endswith("_door")


def offset(cell: Cell, by: Cell) -> Cell:
    return (cell[0] + by[0], cell[1] + by[1], cell[2] + by[2])


def supported(cell: Cell, block: str, standing: Mapping[Cell, str]) -> bool:
    """Whether ``block`` can be placed at ``cell`` (a site offset; level 0 rests on the ground) now.

    A floor block needs a full block (or the ground) below it; any other block needs any
    face of a full block that stands next to it, the underside of one above included.
    """
    below = offset(cell, BELOW)
    if needs_floor(block):
        return cell[1] == 0 or (below in standing and not needs_floor(standing[below]))
    if cell[1] == 0:
        return True
    return any((near := offset(cell, face)) in standing and not needs_floor(standing[near]) for face in NEIGHBOURS)


Rank = int
"""Steps through faces from the ground: placing cells in rank order always finds a face."""


def support_ranks(blocks: Mapping[Cell, str], extra: Iterable[Cell] = ()) -> dict[Cell, Rank]:
    """Each cell's rank (its support distance from the ground); a cell nothing can hold up is absent.

    Breadth first from level 0 (the ground holds it) through the six faces: a cell is
    reached from any full block next to it, a floor block only from the full block under it,
    and a door's upper half comes with its lower half. ``extra`` cells are full blocks that
    stand besides ``blocks`` (scaffolding).
    """
    solid = {cell: block for cell, block in blocks.items()}
    for cell in extra:
        solid.setdefault(cell, "")
    ranks: dict[Cell, Rank] = {cell: 0 for cell in solid if cell[1] == 0}
    queue = deque(sorted(ranks))
    while queue:
        cell = queue.popleft()
        here = solid[cell]
        if needs_floor(here):
            upper = offset(cell, ABOVE)
            if two_high(here) and solid.get(upper) == here and upper not in ranks:
                ranks[upper] = ranks[cell]
            continue
        for face in NEIGHBOURS:
            near = offset(cell, face)
            if near in ranks or near not in solid:
                continue
            if needs_floor(solid[near]) and face != ABOVE:
                continue
            ranks[near] = ranks[cell] + 1
            queue.append(near)
    return ranks


@dataclass(frozen=True, slots=True)
class Scaffolding:
    """Temporary blocks that let a blueprint stand: placed in ``cells`` order, broken in reverse."""

    paths: tuple[tuple[Cell, ...], ...]  # each from what stands (or the ground) to a face of a floating part
    serves: tuple[Cell, ...]  # per path, the blueprint cell it gives a face to
    stranded: tuple[Cell, ...]  # cells nothing can hold up even so (a carpet over air), sorted

    @property
    def cells(self) -> tuple[Cell, ...]:
        return tuple(cell for path in self.paths for cell in path)


def _scaffold_path(
    blocks: Mapping[Cell, str], size: Cell, standing: set[Cell], used: set[Cell], floating: set[Cell]
) -> tuple[tuple[Cell, ...], Cell] | None:
    """The fewest empty cells that join what stands (or the ground) to a face of a floating cell."""
    width, height, depth = size

    def empty(cell: Cell) -> bool:
        x, y, z = cell
        return 0 <= x < width and 0 <= y < height and 0 <= z < depth and cell not in blocks and cell not in used

    def holds(cell: Cell) -> bool:  # a cell here can be placed now
        return cell[1] == 0 or any(
            (near := offset(cell, face)) in used or (near in standing and not needs_floor(blocks[near]))
            for face in NEIGHBOURS
        )

    def target(cell: Cell) -> Cell | None:
        return next(
            (near for face in NEIGHBOURS if (near := offset(cell, face)) in floating and not needs_floor(blocks[near])),
            None,
        )

    starts = sorted(cell for cell in _empty_box(size) if empty(cell) and holds(cell))
    parents: dict[Cell, Cell | None] = dict.fromkeys(starts)
    queue = deque(starts)
    while queue:
        cell = queue.popleft()
        served = target(cell)
        if served is not None:
            path = [cell]
            while (parent := parents[path[-1]]) is not None:
                path.append(parent)
            return tuple(reversed(path)), served
        for face in NEIGHBOURS:
            near = offset(cell, face)
            if near not in parents and empty(near):
                parents[near] = cell
                queue.append(near)
    return None


def _empty_box(size: Cell) -> list[Cell]:
    width, height, depth = size
    return [(x, y, z) for y in range(height) for z in range(depth) for x in range(width)]


def plan_scaffold(blocks: Mapping[Cell, str], size: Cell) -> Scaffolding:
    """Scaffolding for ``blocks`` (site offsets) in a box of ``size``: the shortest paths, one floating part at a time.

    Deterministic in the blueprint alone, so every agent that holds it computes the same
    cells. A path runs through cells the blueprint leaves empty, from the ground or a face of
    what already stands, to a face of the floating part nearest to it; that part then stands
    (rank by rank), and the next part is joined. A floor block over an empty cell is
    stranded: the block under it would have to stay, and vanilla drops a carpet whose
    support is broken.
    """
    return _plan_scaffold(tuple(sorted(blocks.items())), size)


@lru_cache(maxsize=64)
def _plan_scaffold(items: tuple[tuple[Cell, str], ...], size: Cell) -> Scaffolding:
    blocks = dict(items)
    used: set[Cell] = set()
    paths: list[tuple[Cell, ...]] = []
    serves: list[Cell] = []
    while True:
        standing = set(support_ranks(blocks, used))
        floating = {cell for cell in blocks if cell not in standing}
        if not any(not needs_floor(blocks[cell]) for cell in floating):
            break
        found = _scaffold_path(blocks, size, standing, used, floating)
        if found is None:
            break
        path, served = found
        paths.append(path)
        serves.append(served)
        used.update(path)
    stranded = tuple(sorted((c for c in blocks if c not in standing), key=lambda c: (c[1], c[2], c[0])))
    return Scaffolding(tuple(paths), tuple(serves), stranded)


BAND = 4
"""Levels a builder works through from one stand before moving on: about what its reach spans upwards."""
TILE = 6
"""Columns a side of the squares a band is swept in: what a builder reaches around one stand."""


def build_order(blocks: Mapping[Cell, str], scaffold: Iterable[Cell]) -> list[Cell]:
    """Every cell to place, blueprint and scaffolding, in the one order both sides of a commitment derive.

    Wanted: bands of four levels from the bottom, each swept in squares of six by six
    columns, row of squares by row in alternating directions, so a builder places much from
    one stand (one tower serves a square through four levels) and walks little; ground-floor
    doors last, the innermost first, since their openings are the ways in and out of the
    rooms while the walls rise and no block rests on a door. Taken: the wanted order, except
    that a cell waits until a block beside it (below
    it, for a carpet or a door) has been placed, so each cell finds a face. Cells nothing
    holds up come last. A door's upper half is left out: it comes with the lower.
    """
    return list(_build_order(tuple(sorted(blocks.items())), tuple(scaffold)))


@lru_cache(maxsize=64)
def _build_order(items: tuple[tuple[Cell, str], ...], scaffold: tuple[Cell, ...]) -> tuple[Cell, ...]:
    blocks = dict(items)
    solid = {**blocks, **{cell: "" for cell in scaffold if cell not in blocks}}
    cells = set(placed_cells(blocks)) | {cell for cell in scaffold if cell not in blocks}

    width = max(c[0] for c in cells) + 1 if cells else 0
    depth = max(c[2] for c in cells) + 1 if cells else 0

    sealed = _sealed_doors(solid, width, depth)

    def wanted(c: Cell) -> tuple[bool, int, int, int, int, int, int]:
        if two_high(solid[c]) and c[1] <= 1 and c not in sealed:  # ground-floor doors last, the innermost first
            inside = min(c[0], c[2], width - 1 - c[0], depth - 1 - c[2])
            return (True, -inside, 0, 0, c[2], c[0], c[1])
        tile_z, tile_x = c[2] // TILE, c[0] // TILE
        return (False, c[1] // BAND, tile_z, tile_x if tile_z % 2 == 0 else -tile_x, c[2], c[0], c[1])

    def ready(c: Cell, placed: set[Cell]) -> bool:
        if c[1] == 0:
            return True
        faces = (BELOW,) if needs_floor(solid[c]) else NEIGHBOURS
        return any((near := offset(c, face)) in placed and not needs_floor(solid[near]) for face in faces)

    placed: set[Cell] = set()
    queued = {c for c in cells if ready(c, placed)}
    heap = [(wanted(c), c) for c in queued]
    heapq.heapify(heap)
    order: list[Cell] = []
    while heap:
        _, cell = heapq.heappop(heap)
        order.append(cell)
        placed.add(cell)
        if needs_floor(solid[cell]):
            continue
        for face in NEIGHBOURS:
            near = offset(cell, face)
            if near in cells and near not in queued and ready(near, placed):
                queued.add(near)
                heapq.heappush(heap, (wanted(near), near))
    return (*order, *sorted(cells - placed, key=lambda c: (c[1], c[2], c[0])))


def _sealed_doors(solid: Mapping[Cell, str], width: int, depth: int) -> frozenset[Cell]:
    """The ground-floor doors no walk at their level leads to from outside the box once the rest stands.

    MINDcraft's generator now and then sets a room's outer door against another room's wall, so
    two rooms joined by one inner door are shut off: left to the end, that door could be reached
    from nowhere. Such a door goes in with its walls instead, while a builder can still get at it.
    Ground-floor doors are the openings of the walk; carpets are walked over.
    """
    doors = [c for c, block in solid.items() if two_high(block) and c[1] <= 1 and solid.get(offset(c, BELOW)) != block]
    openings = {*doors, *(offset(door, ABOVE) for door in doors)}

    def open_at(x: int, y: int, z: int) -> bool:
        return all(
            (block := solid.get(cell)) is None or cell in openings or (needs_floor(block) and not two_high(block))
            for cell in ((x, y, z), (x, y + 1, z))
        )

    sealed: set[Cell] = set()
    for door in doors:
        x0, y, z0 = door
        seen = {(x0, z0)}
        queue = [(x0, z0)]
        outside = False
        while queue and not outside:
            x, z = queue.pop()
            for nx, nz in ((x + 1, z), (x - 1, z), (x, z + 1), (x, z - 1)):
                if not (0 <= nx < width and 0 <= nz < depth):
                    outside = True
                    break
                if (nx, nz) not in seen and open_at(nx, y, nz):
                    seen.add((nx, nz))
                    queue.append((nx, nz))
        if not outside:
            sealed.add(door)
    return frozenset(sealed)


def placed_cells(blocks: Mapping[Cell, str]) -> list[Cell]:
    """The cells an agent places: every block but a door's upper half, which comes with its lower half."""
    return [
        cell for cell, block in blocks.items() if not (two_high(block) and blocks.get(offset(cell, BELOW)) == block)
    ]


def cells_by_block(blocks: Mapping[Cell, str]) -> dict[str, list[Cell]]:
    """Each block's placed cells in (x, z, level) order: what a share's indices count."""
    found: dict[str, list[Cell]] = {}
    for cell in sorted(placed_cells(blocks), key=lambda c: (c[0], c[2], c[1])):
        found.setdefault(blocks[cell], []).append(cell)
    return found


class ShareError(ValueError):
    """A share names cells the blueprint does not have."""


def share_placements(blocks: Mapping[Cell, str], size: Cell, ranges: Iterable[ShareRange]) -> list[Placement]:
    """The placements a share names, in the blueprint's build order (``dsl/cells.py`` defines a share)."""
    scaffold = plan_scaffold(blocks, size)
    pools = cells_by_block(blocks)
    chosen: dict[Cell, str] = {}
    for block, first, last in ranges:
        pool = list(scaffold.cells) if is_temporary(block) else pools.get(block, [])
        if last >= len(pool):
            what = "scaffolding cells" if is_temporary(block) else f"{block} cells"
            raise ShareError(f"{block}:{first}-{last} is past the blueprint's {len(pool)} {what}")
        for cell in pool[first : last + 1]:
            chosen[cell] = block
    return [(chosen[cell], cell) for cell in build_order(blocks, scaffold.cells) if cell in chosen]
