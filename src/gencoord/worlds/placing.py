"""Where a block may be placed: vanilla's rule that a block needs a face to be placed against.

A player places a block by clicking a face of a block next to the cell, so a cell needs a
solid neighbour (or the ground under the build site). Some blocks stand only on a block
below (carpets, doors, torches, rails, pressure plates, saplings); a door fills its cell
and the one above. The simulator applies this rule, the planner orders cells by it, and
the Minecraft skill (``js/skills.js`` ``placeAt``) finds the face the same way.
"""

from __future__ import annotations

from collections.abc import Mapping

from gencoord.dsl.cells import Cell

_FLOOR_SUFFIXES = ("_carpet", "_door", "_pressure_plate", "_sapling", "_rail", "_bed", "_banner")
_FLOOR_NAMES = frozenset({"torch", "soul_torch", "redstone_torch", "rail", "snow", "carpet", "moss_carpet"})

NEIGHBOURS: tuple[Cell, ...] = ((0, -1, 0), (0, 1, 0), (1, 0, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1))
"""The six faces of a cell, the one below first (a player builds on top of what stands)."""


def needs_floor(block: str) -> bool:
    """Whether ``block`` stands only on a block below it (or on the ground)."""
    return block in _FLOOR_NAMES or block.endswith(_FLOOR_SUFFIXES)


def two_high(block: str) -> bool:
    """Whether placing ``block`` fills its cell and the one above (a door's two halves)."""
    return block.endswith("_door")


def offset(cell: Cell, by: Cell) -> Cell:
    return (cell[0] + by[0], cell[1] + by[1], cell[2] + by[2])


def supported(cell: Cell, block: str, standing: Mapping[Cell, str]) -> bool:
    """Whether ``block`` can be placed at ``cell`` (a site offset; level 0 rests on the ground) now."""
    below = offset(cell, (0, -1, 0))
    if cell[1] == 0 or below in standing:
        return True
    if needs_floor(block):
        return False
    return any(offset(cell, face) in standing for face in NEIGHBOURS[1:])


Rank = tuple[int, int]
"""(level, steps from a cell that rests on something below): a placement order that always has a face."""


def support_ranks(blocks: Mapping[Cell, str]) -> dict[Cell, Rank]:
    """Each cell's rank, when the cells are placed in rank order; a cell that nothing can hold up is absent.

    Within a level, a cell with a block (or the ground) below has rank 0; a cell held up only
    by its neighbours on the level gets one more than the nearest of them, so overhangs are
    built outwards from what stands. A block that needs a floor is never held up sideways.
    """
    ranks: dict[Cell, Rank] = {}
    for level in sorted({cell[1] for cell in blocks}):
        layer = [cell for cell in blocks if cell[1] == level]
        frontier = [c for c in layer if level == 0 or (offset(c, (0, -1, 0)) in ranks)]
        depth = 0
        while frontier:
            for cell in frontier:
                ranks[cell] = (level, depth)
            depth += 1
            frontier = sorted(
                {
                    near
                    for cell in frontier
                    for face in NEIGHBOURS[2:]
                    if (near := offset(cell, face)) in blocks
                    and near not in ranks
                    and near[1] == level
                    and not needs_floor(blocks[near])
                }
            )
        for cell in layer:  # a door's upper half stands on its lower half
            below = offset(cell, (0, -1, 0))
            if cell not in ranks and two_high(blocks[cell]) and blocks.get(below) == blocks[cell] and below in ranks:
                ranks[cell] = (level, 0)
    return ranks
