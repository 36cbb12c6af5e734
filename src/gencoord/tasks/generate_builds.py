"""Random construction tasks in MINDcraft's format: for property tests, benchmarks and stress runs.

A blueprint is drawn level by level on a small footprint: level 0 is any cells of it (they
rest on the ground); above, a cell either stands on a block of the level below or, less
often, juts out beside a cell that does (an overhang, built outwards). Some blocks are of
the kinds vanilla places differently: a carpet on a block, a door (two cells high) on the
ground. Every block's count is split at random over the agents, so the team holds exactly
what the blueprint uses: every drawn task is buildable, and removing one block of any
material makes it unbuildable.
"""

from __future__ import annotations

import random
from typing import Any

Cell = tuple[int, int, int]

PLAIN = ("stone", "oak_planks", "cobblestone", "bricks", "glass", "quartz_block", "gold_block", "terracotta")
CARPET, DOOR = "blue_carpet", "oak_door"
ORIGIN = (-60, -60, 6)
"""Where MINDcraft's shipped blueprints start (the first air layer of a 1.18+ superflat world)."""


def _levels(rng: random.Random, width: int, depth: int, levels: int) -> dict[Cell, str]:
    palette = rng.sample(PLAIN, rng.randint(1, 4))
    cells: dict[Cell, str] = {}
    for y in range(levels):
        for z in range(depth):
            for x in range(width):
                below = cells.get((x, y - 1, z))
                if (y == 0 and rng.random() < 0.8) or (
                    below is not None and below not in (CARPET, DOOR) and rng.random() < 0.7
                ):
                    cells[(x, y, z)] = rng.choice(palette)
        for x, z in [(x, z) for z in range(depth) for x in range(width) if (x, y, z) not in cells]:
            beside = [(x + dx, y, z + dz) for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1))]
            if y and any(cells.get(c) in palette for c in beside) and rng.random() < 0.15:
                cells[(x, y, z)] = rng.choice(palette)
    tops = [c for c, b in cells.items() if b in palette and (c[0], c[1] + 1, c[2]) not in cells and c[1] + 1 < levels]
    for cell in rng.sample(tops, min(len(tops), rng.randint(0, 2))):
        cells[(cell[0], cell[1] + 1, cell[2])] = CARPET
    ground = [
        (x, 0, z) for z in range(depth) for x in range(width) if (x, 0, z) not in cells and (x, 1, z) not in cells
    ]
    if levels >= 2 and ground and rng.random() < 0.4:
        x, _, z = rng.choice(ground)
        cells[(x, 0, z)] = cells[(x, 1, z)] = DOOR
    return cells


def random_build_task(seed: int, agents: int, levels: int | None = None) -> dict[str, Any]:
    """One construction task as MINDcraft writes it (``blueprint``, ``initial_inventory`` by agent index)."""
    rng = random.Random(seed)
    height = levels or rng.randint(1, 5)
    width, depth = rng.randint(2, 6), rng.randint(2, 6)
    cells = _levels(rng, width, depth, height)
    if not cells:
        cells[(0, 0, 0)] = PLAIN[0]
    uses: dict[str, int] = {}
    for cell, block in cells.items():
        if block == DOOR and cells.get((cell[0], cell[1] - 1, cell[2])) == DOOR:
            continue  # the upper half comes with the lower
        uses[block] = uses.get(block, 0) + 1
    bags: list[dict[str, int]] = [{} for _ in range(agents)]
    for block, count in sorted(uses.items()):
        for _ in range(count):
            bag = bags[rng.randrange(agents)]
            bag[block] = bag.get(block, 0) + 1
    placement = [
        {
            "level": y,
            "coordinates": [ORIGIN[0], ORIGIN[1] + y, ORIGIN[2]],
            "placement": [[cells.get((x, y, z), "air") for x in range(width)] for z in range(depth)],
        }
        for y in range(height)
    ]
    return {
        "type": "construction",
        "goal": "Make a structure with the blueprint below",
        "conversation": "Let's share materials and make a structure with the blueprint",
        "agent_count": agents,
        "timeout": 1000,
        "blueprint": {"materials": dict(sorted(uses.items())), "levels": placement},
        "initial_inventory": {str(i): bag for i, bag in enumerate(bags)},
    }
