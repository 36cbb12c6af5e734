"""Where an episode's world spec puts blocks in a Minecraft world.

Refs keep their task-data coordinates, shifted by ``origin``. A resource area becomes
real blocks to dig (up to 32: two layers on the 16 free ground cells nearest the ref);
a site becomes the 16 free ground cells nearest it, where bots place blocks. No cell
is shared between refs, nor with a ref's own block or an agent's start; two refs the
task data puts on one block (jitter can) are set one free block apart. The sim reads the same
spec without any of this, which is why it lives beside the Minecraft executor.
"""

from __future__ import annotations

from dataclasses import dataclass

from gencoord.prior.gamedata import GameData
from gencoord.prior.loot import default_loot
from gencoord.worlds.spec import WorldSpec

Cell = tuple[int, int, int]
RESOURCE_FOOTPRINT = 16  # ground cells of one resource area; a second layer sits on them
MAX_RESOURCE_BLOCKS = 2 * RESOURCE_FOOTPRINT
SITE_CELLS = 16
CLEAR_MARGIN = 3
CLEAR_HEIGHT = 4
WALL_RADIUS = 4  # a blocked ref's wall: the square ring this far out (a bot acts from 3 blocks)
WALL_HEIGHT = 2  # too high to jump, and no bot digs (pathfinder movements never dig)
WALL_GAP = 3  # the opening on the far side: the detour


def _nearest_free(centre: Cell, count: int, taken: set[Cell]) -> list[Cell]:
    """The ``count`` ground cells nearest ``centre`` (itself first) that nothing else holds."""
    x, y, z = centre
    reach = 1
    while (2 * reach + 1) ** 2 - len(taken) < count * 2:
        reach += 1
    ring = [(x + dx, y, z + dz) for dx in range(-reach, reach + 1) for dz in range(-reach, reach + 1)]
    ring.sort(key=lambda c: ((c[0] - x) ** 2 + (c[2] - z) ** 2, c))
    return [cell for cell in ring if cell not in taken][:count]


@dataclass(frozen=True)
class Layout:
    refs: dict[str, dict[str, object]]  # name → {kind, block, position} in world coordinates
    resources: dict[str, list[Cell]]  # resource ref → the cells holding its blocks
    sites: dict[str, list[Cell]]  # site ref → the cells blocks may be placed on
    clear: list[tuple[Cell, Cell]]  # boxes emptied (set to air) before each episode
    drops: dict[str, str]  # block → the item that breaking it yields
    builds: dict[str, dict[str, object]]  # build site ref → {origin, size, filled}: a box of exact cells
    herds: dict[str, dict[str, object]]  # herd ref → {animal, spots}: an animal spawned on each free cell

    def site_boxes(self) -> list[tuple[Cell, Cell]]:
        """One box per site covering its cells: what a reset must empty again."""
        return [bounds(cells) for cells in self.sites.values()]

    def at(self, ref: str) -> Cell:
        position = self.refs[ref]["position"]
        assert isinstance(position, list)
        return int(position[0]), int(position[1]), int(position[2])

    def wall(self, ref: str, keep_clear: set[Cell]) -> list[Cell]:
        """The cells of a wall round ``ref``: a square ring with one opening, facing away from the
        other refs, so the direct route is shut and the way in is the long way round. Cells that
        hold something else (another ref, a resource, a site, ``keep_clear``) are left as they are."""
        x, y, z = self.at(ref)
        others = [self.at(name) for name in self.refs if name != ref]
        cx = sum(p[0] for p in others) / len(others) if others else x
        cz = sum(p[2] for p in others) / len(others) if others else z - 1
        side = max(((1, 0), (-1, 0), (0, 1), (0, -1)), key=lambda d: (d[0] * (x - cx) + d[1] * (z - cz), d))
        held = keep_clear | {self.at(name) for name in self.refs}
        held |= {cell for cells in (*self.resources.values(), *self.sites.values()) for cell in cells}
        r = WALL_RADIUS
        ring: list[Cell] = []
        for dx in range(-r, r + 1):
            for dz in range(-r, r + 1):
                if max(abs(dx), abs(dz)) != r:
                    continue
                if _on_side(dx, dz, side, r) and abs(dz if side[0] else dx) <= WALL_GAP // 2:
                    continue  # the opening
                if (x + dx, y, z + dz) in held:
                    continue
                ring += [(x + dx, y + dy, z + dz) for dy in range(WALL_HEIGHT)]
        return ring

    def as_json(self) -> dict[str, object]:
        return {
            "refs": self.refs,
            "resources": self.resources,
            "sites": self.sites,
            "builds": self.builds,
            "herds": self.herds,
        }


def _on_side(dx: int, dz: int, side: tuple[int, int], r: int) -> bool:
    return (side[0] != 0 and dx == r * side[0]) or (side[1] != 0 and dz == r * side[1])


def shift(position: tuple[float, float, float], origin: Cell) -> tuple[float, float, float]:
    return (position[0] + origin[0], position[1] + origin[1], position[2] + origin[2])


def shift_cell(cell: Cell, origin: Cell) -> Cell:
    return (cell[0] + origin[0], cell[1] + origin[1], cell[2] + origin[2])


def lay_out(world: WorldSpec, game: GameData, origin: Cell = (0, 0, 0)) -> Layout:
    refs: dict[str, dict[str, object]] = {}
    resources: dict[str, list[Cell]] = {}
    sites: dict[str, list[Cell]] = {}
    drops: dict[str, str] = {}
    builds: dict[str, dict[str, object]] = {}
    herds: dict[str, dict[str, object]] = {}
    cells: list[Cell] = []
    for name, ref in world.refs.items():
        at: Cell = (ref.position[0] + origin[0], ref.position[1] + origin[1], ref.position[2] + origin[2])
        if at in cells:  # two refs on one block in the task data: a world has room for one
            at = _nearest_free(at, 1, set(cells))[0]
        cells.append(at)
        refs[name] = {"kind": ref.kind, "block": ref.block, "position": list(at), "placed": name not in world.unplaced}
    # every ref's own block, and where agents start, stays clear of other refs' cells
    taken = set(cells) | {
        (int(a.position[0]) + origin[0], int(a.position[1]) + origin[1], int(a.position[2]) + origin[2])
        for a in world.agents
    }
    for name, ref in sorted(world.refs.items()):
        at = cells[list(world.refs).index(name)]
        if ref.kind == "resource" and ref.block is not None:
            count = min(world.deposits.get(name, 64), MAX_RESOURCE_BLOCKS)
            ground = [at, *_nearest_free(at, min(count, RESOURCE_FOOTPRINT) - 1, taken)]
            resources[name] = (ground + [(cx, cy + 1, cz) for cx, cy, cz in ground])[:count]
            block = game.blocks.get(ref.block)
            crop = default_loot().blocks.get(ref.block)
            # what the skill waits for: a ripe crop's first loot entry, another block's own drop
            drops[ref.block] = (
                crop.drops[0].item
                if crop is not None
                else block.drops[0]
                if block is not None and block.drops
                else ref.block
            )
        elif ref.kind == "resource" and ref.entity is not None:  # one free ground cell per animal round the spot
            spots = _nearest_free(at, world.deposits.get(name, 8), taken)
            herds[name] = {"animal": ref.entity, "spots": [list(cell) for cell in spots]}
            taken |= set(spots)
        elif name in world.builds:  # every cell of the blueprint's box, where it stands in this world
            site = world.builds[name]
            corner = shift_cell(site.origin, origin)
            filled = [list(cell) for cell in sorted(site.filled)]
            builds[name] = {"origin": list(corner), "size": list(site.size), "filled": filled}
            sites[name] = [(corner[0] + x, corner[1] + y, corner[2] + z) for x, y, z in site.cells()]
        elif ref.kind == "site":
            sites[name] = [at, *_nearest_free(at, SITE_CELLS - 1, taken)]
        taken |= {(cx, at[1], cz) for cx, _, cz in resources.get(name, sites.get(name, []))}
    cells += [cell for placed in (*resources.values(), *sites.values()) for cell in placed]
    (x0, y0, z0), (x1, y1, z1) = bounds(cells)
    low = (x0 - CLEAR_MARGIN, y0, z0 - CLEAR_MARGIN)
    high = (x1 + CLEAR_MARGIN, max(y0 + CLEAR_HEIGHT - 1, y1 + 1), z1 + CLEAR_MARGIN)
    return Layout(refs, resources, sites, _boxes(low, high), drops, builds, herds)


def bounds(cells: list[Cell]) -> tuple[Cell, Cell]:
    low = (min(c[0] for c in cells), min(c[1] for c in cells), min(c[2] for c in cells))
    high = (max(c[0] for c in cells), max(c[1] for c in cells), max(c[2] for c in cells))
    return low, high


def _boxes(low: Cell, high: Cell, limit: int = 32768) -> list[tuple[Cell, Cell]]:
    """Split a box into slabs along x that /fill accepts (vanilla's 32,768-block limit)."""
    depth = (high[1] - low[1] + 1) * (high[2] - low[2] + 1)
    step = max(1, limit // depth)
    boxes = []
    for x in range(low[0], high[0] + 1, step):
        boxes.append(((x, low[1], low[2]), (min(x + step - 1, high[0]), high[1], high[2])))
    return boxes
