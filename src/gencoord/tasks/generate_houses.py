"""Houses as MINDcraft's construction generator makes them: for property tests, benchmarks and acceptance-like runs.

Written from reading MINDcraft's ``proceduralGeneration`` (``src/agent/tasks/construction_tasks.js``)
and the script that calls it (``tasks/construction_tasks/generate_multiagent_construction_tasks.js``),
so it spans every axis they vary:

* a cube of 15 blocks (4 or 6 rooms) or 20 (8 rooms), a stone slab on level 0 inside an air rim;
* rooms of 5–9 × 5–9 blocks and 4–5 levels, each of a random material of the first 2–5 of
  stone, terracotta, quartz_block, copper_block, purpur_block (``materials`` 0–4), placed
  one after another against the last: above it (with a stair of single blocks that cuts
  through the floors), or to its left, right, front or back (with a dark-oak door in the
  shared wall; left is drawn when no other direction is, so it is the likeliest), so rooms
  rest on air, hang from rooms above, and overwrite each other's doors;
* the first room with a door on each side; windows as squares or as whole glass faces
  (``window`` 0, 1, 2), carried over with the producer's habit of passing the room's level
  where its x belongs; carpets of four colours on 30 % or 70 % of a room's floor (``carpet``
  0, 1, 2; never in the first room);
* each agent gets an even share of each material (remainders to the first agents), a
  diamond pickaxe and 128 dirt; the timeout is 600 s plus 300 s per room tier.

The producer draws with ``Math.random``; this draws with a seeded ``random.Random``, so the
houses are of the same distribution, not the same houses. Coordinates follow the producer:
its matrix is ``[level][x][y]``, written as ``placement[x][y]``, so a placement row is the
generator's x and a column its y.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

MATERIALS = ("stone", "terracotta", "quartz_block", "copper_block", "purpur_block")
ROOM_COUNTS = (4, 6, 8)
CARPETS = ("blue", "cyan", "light_blue", "lime")
DOOR = "dark_oak_door"
AIR = "air"
START = (148, -60, -170)
"""Where the producer's blueprints start."""
MIN_WIDTH, MIN_LENGTH, MIN_DEPTH = 5, 5, 4  # minRoomWidth, minRoomLength, minRoomDepth as the task script passes them
VARIANCE = 5
DIRECTIONS = ("above", "left", "right", "forward", "backward")
DIRECTION_CHANCE = 0.15
ATTEMPTS = 150


@dataclass(frozen=True, slots=True)
class _Room:
    x: int
    y: int
    z: int
    length: int
    width: int
    depth: int


class _House:
    """The producer's matrix and its drawing steps, one method each."""

    def __init__(self, rng: random.Random, side: int, materials: tuple[str, ...], window: int, carpet: int) -> None:
        self.rng, self.side, self.materials = rng, side, materials
        self.window, self.carpet = window, carpet
        self.m = [[[AIR] * side for _ in range(side)] for _ in range(side)]  # [level][x][y]
        for x in range(1, side - 1):
            for y in range(1, side - 1):
                self.m[0][x][y] = "stone"

    def inside(self, z: int, x: int, y: int) -> bool:
        return 0 <= z < self.side and 0 <= x < self.side and 0 <= y < self.side

    def space_valid(self, r: _Room) -> bool:
        for di in range(1, r.depth - 1):
            for dj in range(1, r.length - 1):
                for dk in range(1, r.width - 1):
                    if self.m[r.z + di][r.x + dj][r.y + dk] != AIR:
                        return False
        return True

    def build_border(self, r: _Room, material: str) -> bool:
        fits = r.x >= 0 and r.x + r.length <= self.side and r.y >= 0 and r.y + r.width <= self.side
        if not (fits and r.z >= 0 and r.z + r.depth <= self.side and self.space_valid(r)):
            return False
        for di in range(r.depth):
            for dj in range(r.length):
                for dk in range(r.width):
                    z, x, y = r.z + di, r.x + dj, r.y + dk
                    if z == 0:
                        continue
                    border = di in (0, r.depth - 1) or dj in (0, r.length - 1) or dk in (0, r.width - 1)
                    if di == 0 and self.m[z - 1][x][y] != AIR:
                        self.m[z][x][y] = AIR  # no floor over a ceiling below
                    else:
                        self.m[z][x][y] = material if border else AIR
        return True

    def door(self, x: int, y: int, z: int, material: str) -> None:
        self.m[z][x][y] = material
        self.m[z + 1][x][y] = DOOR
        self.m[z + 2][x][y] = DOOR

    def glass(self, z: int, x: int, y: int, material: str) -> None:
        if self.inside(z, x, y) and self.m[z][x][y] == material:
            self.m[z][x][y] = "glass"

    def windows_as_squares(self, x: int, y: int, z: int, r: _Room, material: str) -> None:
        wx, wy, wz = math.ceil(MIN_WIDTH / 2), math.ceil(MIN_LENGTH / 2), math.ceil(MIN_DEPTH / 2)
        if self.rng.random() < 0.8:
            cx, cy = x + math.floor(r.length / 2 - wx / 2), y + math.floor(r.width / 2 - wy / 2)
            for dx in range(wx + 1):
                for dy in range(wy + 1):
                    self.glass(z, cx + dx, cy + dy, material)
                    self.glass(z + r.depth - 1, cx + dx, cy + dy, material)
        if self.rng.random() < 0.8:
            cz, cy = z + math.floor(r.depth / 2 - wz / 2), y + math.floor(r.width / 2 - wy / 2)
            for dz in range(wz + 1):
                for dy in range(wy + 1):
                    self.glass(cz + dz, x, cy + dy, material)
                    self.glass(cz + dz, x + r.length - 1, cy + dy, material)
        if self.rng.random() < 0.8:
            cx, cz = x + math.floor(r.length / 2 - wx / 2), z + math.floor(r.depth / 2 - wz / 2)
            for dx in range(wx + 1):
                for dz in range(wz + 1):
                    self.glass(cz + dz, cx + dx, y, material)
                    self.glass(cz + dz, cx + dx, y + r.width - 1, material)

    def windows_as_planes(self, x: int, y: int, z: int, r: _Room, material: str) -> None:
        if self.rng.random() < 0.8:
            for dx in range(r.length):
                for dy in range(r.width):
                    self.glass(z, x + dx, y + dy, material)
                    self.glass(z + r.depth - 1, x + dx, y + dy, material)
        if self.rng.random() < 0.8:
            for dz in range(r.depth):
                for dy in range(r.width):
                    self.glass(z + dz, x, y + dy, material)
                    self.glass(z + dz, x + r.length - 1, y + dy, material)

    def stairs(self, r: _Room, material: str) -> None:
        z, x, y, direction = r.z, r.x + 1, r.y + 1, 0
        for _ in range(r.length * r.width):
            if not (z >= 0 and x < r.x + r.length - 1 and y < r.y + r.width - 1):
                break
            self.m[z][x][y] = material
            for above in range(1, 4):
                if z + above < self.side:
                    self.m[z + above][x][y] = AIR
            if direction == 0:
                x += 1
                if x >= r.x + r.length - 1:
                    x, direction = r.x + r.length - 2, 1
                else:
                    z -= 1
            else:
                y += 1
                if y >= r.y + r.width - 1:
                    y, direction = r.y + r.width - 2, 0
                else:
                    z -= 1

    def carpets(self, probability: float, r: _Room, material: str | None) -> None:
        for dx in range(1, r.length - 1):
            for dy in range(1, r.width - 1):
                x, y = r.x + dx, r.y + dy
                if self.m[r.z][x][y] == material and self.rng.random() < probability:
                    self.m[r.z + 1][x][y] = f"{self.rng.choice(CARPETS)}_carpet"

    def embellish(self, r: _Room, material: str) -> None:
        if self.window == 1:
            self.windows_as_squares(r.z, r.y, r.z, r, material)  # the producer passes the level as x
        elif self.window == 2:
            self.windows_as_planes(r.z, r.y, r.z, r, material)
        if self.carpet:
            self.carpets(0.3 if self.carpet == 1 else 0.7, r, material)

    def direction(self) -> str:
        draw, cumulative = self.rng.random(), 0.0
        for name in DIRECTIONS:
            cumulative += DIRECTION_CHANCE
            if draw <= cumulative:
                return name
        return "left"

    def size(self) -> tuple[int, int, int]:
        rng = self.rng
        length = max(MIN_LENGTH, math.floor(rng.random() * VARIANCE) + MIN_LENGTH)
        width = max(MIN_WIDTH, math.floor(rng.random() * VARIANCE) + MIN_WIDTH)
        depth = max(MIN_DEPTH, math.floor(rng.random() * math.floor(VARIANCE / 2)) + MIN_DEPTH)
        return length, width, depth

    def first_room(self) -> _Room | None:
        material = self.rng.choice(self.materials)
        length, width, depth = self.size()
        x = math.floor(self.rng.random() * (self.side - length - 1)) + 1
        y = math.floor(self.rng.random() * (self.side - width - 1)) + 1
        room = _Room(x, y, 0, length, width, depth)
        if not self.build_border(room, material):
            return None
        self.door(x, y + width // 2, 0, material)
        self.door(x + length - 1, y + width // 2, 0, material)
        self.door(x + length // 2, y, 0, material)
        self.door(x + length // 2, y + width - 1, 0, material)
        self.carpets(0.7, room, None)  # the producer passes no material here: no carpet is laid
        return room

    def next_room(self, last: _Room) -> _Room | None:
        for _ in range(ATTEMPTS):
            material = self.rng.choice(self.materials)
            length, width, depth = self.size()
            way = self.direction()
            if way == "above":
                room = _Room(last.x, last.y, last.z + last.depth - 1, length, width, depth)
            elif way == "left":
                room = _Room(last.x - length + 1, last.y, last.z, length, width, depth)
            elif way == "right":
                room = _Room(last.x + last.length - 1, last.y, last.z, length, width, depth)
            elif way == "forward":
                room = _Room(last.x, last.y + last.width - 1, last.z, length, width, depth)
            else:
                room = _Room(last.x, last.y - width + 1, last.z, length, width, depth)
            if not self.build_border(room, material):
                continue
            self.embellish(room, material)
            if way == "above":
                self.stairs(room, material)
            elif way == "left":
                self.door(last.x, last.y + last.width // 2, last.z, material)
            elif way == "right":
                self.door(last.x + last.length - 1, last.y + last.width // 2, last.z, material)
            elif way == "forward":
                self.door(last.x + last.length // 2, last.y + last.width - 1, last.z, material)
            else:
                self.door(last.x + last.length // 2, last.y, last.z, material)
            return room
        return None

    def blueprint(self) -> dict[str, Any]:
        sx, sy, sz = START
        return {
            "levels": [
                {"level": z, "coordinates": [sx, sy + z, sz], "placement": [list(row) for row in level]}
                for z, level in enumerate(self.m)
            ]
        }


def house_blueprint(
    seed: int, *, materials: int = 4, rooms: int = 8, window: int = 1, carpet: int = 1
) -> dict[str, Any]:
    """One blueprint as ``proceduralGeneration`` draws it for a task of these settings (its task names' indices)."""
    if (
        not 0 <= materials < len(MATERIALS)
        or rooms not in ROOM_COUNTS
        or window not in (0, 1, 2)
        or carpet not in (0, 1, 2)
    ):
        raise ValueError(f"no such house: materials {materials}, rooms {rooms}, window {window}, carpet {carpet}")
    complexity = materials + 1
    palette = MATERIALS[: complexity + 1] if complexity < len(MATERIALS) else MATERIALS
    side = 10 + (rooms // 4) * 5
    house = _House(random.Random(seed), side, palette, window, carpet)
    last = house.first_room()
    placed = 1 if last is not None else rooms
    while last is not None and placed < rooms:
        last = house.next_room(last)
        placed += 1
    return house.blueprint()


def house_inventories(blueprint: dict[str, Any], agents: int) -> dict[str, dict[str, int]]:
    """Each agent's bag: a diamond pickaxe, an even share of every material (remainders first), 128 dirt."""
    counts: dict[str, int] = {}
    for level in blueprint["levels"]:
        for row in level["placement"]:
            for block in row:
                if block != AIR:
                    counts[block] = counts.get(block, 0) + 1
    bags: dict[str, dict[str, int]] = {}
    for index in range(agents):
        bag = {"diamond_pickaxe": 1}
        for block, count in counts.items():
            bag[block] = count // agents + (1 if index < count % agents else 0)
        bag["dirt"] = 128
        bags[str(index)] = bag
    return bags


def house_task(
    seed: int, agents: int, *, materials: int = 4, rooms: int = 8, window: int = 1, carpet: int = 1
) -> dict[str, Any]:
    """One construction task in MINDcraft's format, as its generator and task script write it."""
    blueprint = house_blueprint(seed, materials=materials, rooms=rooms, window=window, carpet=carpet)
    return {
        "type": "construction",
        "goal": "Make a house with the blueprint",
        "conversation": "Let's share materials and make a house with the blueprint",
        "agent_count": agents,
        "initial_inventory": house_inventories(blueprint, agents),
        "timeout": 600 + 300 * ROOM_COUNTS.index(rooms),
        "blueprint": blueprint,
    }


def house_tasks(seed: int, agents: int, variants: int = 1) -> dict[str, dict[str, Any]]:
    """Every combination the producer's task script draws (materials × rooms × windows × carpets × variants)."""
    tasks: dict[str, dict[str, Any]] = {}
    for materials in range(len(MATERIALS)):
        for tier, rooms in enumerate(ROOM_COUNTS):
            for window in range(3):
                for carpet in range(3):
                    for variant in range(variants):
                        name = f"materials_{materials}_rooms_{tier}_window_{window}_carpet_{carpet}_variant_{variant}"
                        draw = random.Random(f"{seed}/{name}").getrandbits(31)
                        tasks[name] = house_task(
                            draw, agents, materials=materials, rooms=rooms, window=window, carpet=carpet
                        )
    return tasks
