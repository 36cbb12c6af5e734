"""The simulator executor: action semantics on an in-memory world, with simulated time.

Each agent has its own clock. An action starts when its agent is free and every action
it depends on has finished, so two agents work in parallel and a receiver's first
consuming action waits for the handoff. Effects apply in program order, which the
compiler guarantees is a valid order; a failure stops only what waits on it
(:class:`~gencoord.worlds.executor.Cascade`). Same world spec, same program: same trace.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gencoord.dsl.cells import Cell
from gencoord.prior.gamedata import GameData
from gencoord.prior.load import default_prior
from gencoord.prior.loot import LootTable, default_loot, roll
from gencoord.worlds.actions import (
    Action,
    BreakAt,
    CraftItem,
    Deposit,
    DigDown,
    FurnaceCollect,
    FurnaceLoad,
    GiveItem,
    GoTo,
    Hunt,
    ObtainBlock,
    Pillar,
    PlaceAt,
    PlaceBlock,
    PlaceStation,
    Program,
    StepAside,
    Wait,
    Withdraw,
)
from gencoord.worlds.changes import BlockRoute, DepleteSource, LoseThrow, OccupyStation, WorldChange
from gencoord.worlds.executor import (
    ActionFailure,
    ActionRecord,
    Cascade,
    HandoffHook,
    Items,
    WorldSnapshot,
)
from gencoord.worlds.placing import offset, supported, two_high
from gencoord.worlds.sim.physics import TICKS_PER_S, Physics, default_physics
from gencoord.worlds.spec import BuildSite, Position, WorldSpec
from gencoord.worlds.standing import (
    JUMP_S,
    REACH,
    Terrain,
    body_cells,
    choose_stand,
    feet_cell,
    feet_position,
    reaches,
)


class _RefusedError(Exception):
    def __init__(self, code: str, message: str, retry_after_s: float | None = None) -> None:
        self.failure = ActionFailure(code, message, retry_after_s)


@dataclass
class _Furnace:
    recipes: dict[str, str]  # input → output: a smoker takes food only
    ticks_per_item: int
    input_item: str | None = None
    input_count: int = 0
    fuel_ticks: int = 0
    output_item: str | None = None
    output_count: int = 0
    busy_since: float | None = None


def _distance(a: Position, b: Position) -> float:
    return math.dist(a, b)


def _take(items: Items, item: str, count: int, holder: str) -> None:
    have = items.get(item, 0)
    if count <= 0:
        return
    if have < count:
        raise _RefusedError("MISSING_ITEMS", f"{holder} has {have} {item}, needs {count}")
    if have == count:
        del items[item]
    else:
        items[item] = have - count


def _add(items: Items, item: str, count: int) -> None:
    if count:
        items[item] = items.get(item, 0) + count


class SimExecutor:
    """The embedded Minecraft-semantics world. Real recipes, mining and stack sizes."""

    name = "sim"

    def __init__(
        self, game: GameData | None = None, physics: Physics | None = None, loot: LootTable | None = None
    ) -> None:
        self.game = game or default_prior().game
        self.physics = physics or default_physics()
        self.loot = loot or default_loot()
        self._handlers: dict[type, Callable[[Any, float], float]] = {
            GoTo: self._go_to,
            ObtainBlock: self._obtain_block,
            Hunt: self._hunt,
            Withdraw: self._withdraw,
            GiveItem: self._give_item,
            Deposit: self._deposit,
            CraftItem: self._craft_item,
            PlaceBlock: self._place_block,
            PlaceAt: self._place_at,
            BreakAt: self._break_at,
            Pillar: self._pillar,
            StepAside: self._step_aside,
            DigDown: self._dig_down,
            PlaceStation: self._place_station,
            FurnaceLoad: self._furnace_load,
            FurnaceCollect: self._furnace_collect,
            Wait: self._wait,
        }
        self._world: WorldSpec | None = None

    # ------------------------------------------------------------------ protocol
    def reset(self, world: WorldSpec) -> WorldSnapshot:
        self._world = world
        self.positions: dict[str, Position] = {a.name: a.position for a in world.agents}
        self.inventories: dict[str, Items] = {a.name: dict(a.inventory) for a in world.agents}
        self.forbidden = {a.name: a.forbidden_actions for a in world.agents}
        self.containers: dict[str, Items] = {
            name: dict(world.contents.get(name, {})) for name, ref in world.refs.items() if ref.kind == "container"
        }
        self.sites: dict[str, Items] = {name: {} for name, ref in world.refs.items() if ref.kind == "site"}
        self.blocks: dict[str, dict[Cell, str]] = {name: {} for name in world.builds}  # cleared before each episode
        # one terrain per site, over its blocks, for the whole episode: what it learns of the ways stays learned
        self.terrains = {name: Terrain(site.size, self.blocks[name]) for name, site in world.builds.items()}
        self.credits: dict[str, dict[str, Items]] = {}
        self.crafted: dict[str, Items] = {}
        self.deposits = {
            name: world.deposits.get(name, 64) for name, ref in world.refs.items() if ref.kind == "resource"
        }
        self.furnaces = {
            name: self._new_furnace(ref.block == "smoker", world.fuel.get(name, {}))
            for name, ref in world.refs.items()
            if ref.kind == "station" and ref.block in ("furnace", "smoker")
        }
        self.rng = random.Random(world.seed)
        self.unplaced = set(world.unplaced)
        self.blocked = set(world.blocked)
        self.busy_until = dict(world.busy_until)
        self.clocks = dict.fromkeys(self.positions, 0.0)
        self._ends: dict[int, float] = {}
        self.losing: set[str] = set()  # givers whose next hand-over is lost in flight (LoseThrow)
        self._delivered = 0  # what the last give put in its receiver's bag
        return self.snapshot()

    def run(self, program: Program, start: int, stop: int, on_handoff: HandoffHook | None = None) -> list[ActionRecord]:
        records: list[ActionRecord] = []
        cascade = Cascade(program, start, stop)
        judged = set(program.handoffs) if on_handoff is not None else set()
        for index in range(start, stop):
            if cascade.cancelled(index):
                continue
            action = program.actions[index]
            agent = action.agent
            ready = max((self._ends[d] for d in program.deps[index] if d in self._ends), default=0.0)
            began = max(self.clocks.get(agent, 0.0), ready)
            before = {name: dict(items) for name, items in self.inventories.items()} if index in judged else {}
            failure = None
            self._delivered = 0
            try:
                if agent not in self.inventories:
                    raise _RefusedError("UNKNOWN_AGENT", f"{agent} is not in this world")
                if action.name in self.forbidden[agent]:
                    raise _RefusedError("WORKCELL_CANNOT", f"{agent}'s workcell cannot {action.name}")
                ended = self._handlers[type(action)](action, began)
            except _RefusedError as refused:
                failure, ended = refused.failure, began
            self.clocks[agent] = ended
            self._ends[index] = ended
            records.append(ActionRecord(index, action, began, ended, failure, self._inventories_after(action)))
            if index in judged and on_handoff is not None:  # a failed hand-over too: it delivered what it did
                judged_ok = on_handoff(index, before, self.inventories, self._delivered)
                if not judged_ok:
                    cascade.stop(index)
            if failure is not None:
                cascade.stop(index)
        return records

    def snapshot(self) -> WorldSnapshot:
        return WorldSnapshot(
            clock_s=max(self.clocks.values(), default=0.0),
            positions=dict(self.positions),
            inventories={name: dict(items) for name, items in self.inventories.items()},
            containers={name: dict(items) for name, items in self.containers.items()},
            sites={name: dict(items) for name, items in self.sites.items()},
            credits={holder: {a: dict(i) for a, i in by.items()} for holder, by in self.credits.items()},
            crafted={agent: dict(items) for agent, items in self.crafted.items()},
            blocks={site: dict(cells) for site, cells in self.blocks.items()},
        )

    def close(self) -> None:
        self._world = None

    def change(self, change: WorldChange) -> None:
        """A change nobody's action causes (``worlds/changes.py``), at the world's current time."""
        if isinstance(change, DepleteSource):
            self.deposits[change.source] = 0
        elif isinstance(change, BlockRoute):
            self.blocked.add(change.ref)
        elif isinstance(change, OccupyStation):
            now = max(self.clocks.values(), default=0.0)
            self.busy_until[change.station] = max(self.busy_until.get(change.station, 0.0), now + change.seconds)
        elif isinstance(change, LoseThrow):
            self.losing.add(change.giver)
        else:
            held = self.inventories.get(change.agent, {})
            lost = min(change.count, held.get(change.item, 0))
            if lost:
                _take(held, change.item, lost, change.agent)

    # ------------------------------------------------------------------ helpers
    def _inventories_after(self, action: Action) -> dict[str, Items]:
        after = {action.agent: dict(self.inventories.get(action.agent, {}))}
        if isinstance(action, GiveItem) and action.to in self.inventories:
            after[action.to] = dict(self.inventories[action.to])
        return after

    def _ref(self, name: str, kind: str) -> Position:
        assert self._world is not None
        ref = self._world.refs.get(name)
        if ref is None:
            raise _RefusedError("UNKNOWN_REF", f"{name} does not exist in this world")
        if ref.kind != kind:
            raise _RefusedError("WRONG_REF_KIND", f"{name} is a {ref.kind}, not a {kind}")
        return tuple(float(c) for c in ref.position)  # type: ignore[return-value]

    def _within_reach(self, agent: str, where: Position, what: str) -> None:
        gap = _distance(self.positions[agent], where)
        if gap > self.physics.reach_blocks:
            raise _RefusedError(
                "OUT_OF_REACH", f"{agent} is {gap:.1f} blocks from {what} (reach {self.physics.reach_blocks})"
            )

    def _slots(self, items: Items) -> int:
        return sum(math.ceil(n / self.game.stack_sizes.get(item, 64)) for item, n in items.items())

    def _make_room(
        self, items: Items, item: str, count: int, holder: str, slots: int, freed: Items | None = None
    ) -> None:
        """Refuse, before anything moves, a transfer the receiving holder has no slots for.

        ``freed`` is what leaves the same holder in the same action (a craft's ingredients).
        """
        after = dict(items)
        for gone, n in (freed or {}).items():
            _take(after, gone, n, holder)
        _add(after, item, count)
        if self._slots(after) > slots:
            raise _RefusedError("NO_SPACE", f"{holder} has no free slot for {count} {item}")

    def _credit(self, holder: str, agent: str, item: str, count: int) -> None:
        _add(self.credits.setdefault(holder, {}).setdefault(agent, {}), item, count)

    @staticmethod
    def _ticks(ticks: float) -> float:
        return ticks / TICKS_PER_S

    # ------------------------------------------------------------------ actions
    def _beside(self, agent: str) -> Position:
        x, y, z = self.positions[agent]
        return (x + 1.0, y, z)  # stand next to the agent, not inside it

    def _go_to(self, action: GoTo, began: float) -> float:
        if action.target_kind == "agent":
            if action.target not in self.positions:
                raise _RefusedError("UNKNOWN_AGENT", f"{action.target} is not in this world")
            goal = self._beside(action.target)
        else:
            assert self._world is not None
            if action.target not in self._world.refs:
                raise _RefusedError("UNKNOWN_REF", f"{action.target} does not exist in this world")
            if action.target in self.blocked and not action.detour:
                raise _RefusedError("PATH_BLOCKED", f"the route to {action.target} is blocked; a detour is needed")
            x, y, z = (float(c) for c in self._world.refs[action.target].position)
            goal = (x, y, z - 1.0)  # stand in front of the block
        walked = _distance(self.positions[action.agent], goal)
        if action.detour:
            walked *= self.physics.detour_factor
        self.positions[action.agent] = goal
        return began + walked / self.physics.walk_blocks_per_s

    def _obtain_block(self, action: ObtainBlock, began: float) -> float:
        where = self._ref(action.source, "resource")
        self._within_reach(action.agent, where, action.source)
        if self.deposits[action.source] <= 0:
            raise _RefusedError("SOURCE_EXHAUSTED", f"{action.source} has no {action.block} left")
        block = self.game.blocks.get(action.block)
        if block is None:
            raise _RefusedError("NOT_BREAKABLE", f"{action.block} cannot be broken")
        held = self.inventories[action.agent]
        if not block.harvestable_with(held):
            tools = ", ".join(sorted(block.harvest_tools or ()))
            raise _RefusedError("NOT_HARVESTABLE", f"{action.block} drops nothing without one of: {tools}")
        ticks = self.game.break_ticks(action.block, held)
        crop = self.loot.blocks.get(action.block)
        drops = roll(crop.drops, self.rng) if crop is not None else dict.fromkeys(block.drops, 1)
        for drop, count in drops.items():
            self._make_room(held, drop, count, action.agent, self.physics.inventory_slots)
        self.deposits[action.source] -= 1
        for drop, count in drops.items():
            _add(held, drop, count)
        return began + self._ticks(ticks)

    def _hunt(self, action: Hunt, began: float) -> float:
        where = self._ref(action.herd, "resource")
        self._within_reach(action.agent, where, action.herd)
        mob = self.loot.mobs.get(action.animal)
        if mob is None or self._world is None or self._world.refs[action.herd].entity != action.animal:
            raise _RefusedError("NO_SUCH_ANIMAL", f"{action.herd} has no {action.animal} to hunt")
        held = self.inventories[action.agent]
        got, ticks = 0, 0
        while got < action.count:
            if self.deposits[action.herd] <= 0:
                raise _RefusedError(
                    "SOURCE_EXHAUSTED",
                    f"{action.herd} has no {action.animal} left; "
                    f"{action.agent} got {got} of {action.count} {action.item}",
                )
            self.deposits[action.herd] -= 1
            drops = roll(mob.drops, self.rng)
            for drop, count in drops.items():
                self._make_room(held, drop, count, action.agent, self.physics.inventory_slots)
                _add(held, drop, count)
            got += drops.get(action.item, 0)
            ticks += self.physics.chase_ticks + mob.health * self.physics.hit_ticks
        return began + self._ticks(ticks)

    def _withdraw(self, action: Withdraw, began: float) -> float:
        where = self._ref(action.container, "container")
        self._within_reach(action.agent, where, action.container)
        held = self.inventories[action.agent]
        self._make_room(held, action.item, action.count, action.agent, self.physics.inventory_slots)
        _take(self.containers[action.container], action.item, action.count, action.container)
        _add(held, action.item, action.count)
        return began + self._transfer_ticks(action.item, action.count)

    def _give_item(self, action: GiveItem, began: float) -> float:
        if action.to not in self.inventories:
            raise _RefusedError("UNKNOWN_AGENT", f"{action.to} is not in this world")
        if _distance(self.positions[action.agent], self.positions[action.to]) > self.physics.reach_blocks:
            # the receiver moved on after the giver walked up (to dig, to a station): the giver
            # follows it, as a player would, and as the Minecraft skill does
            goal = self._beside(action.to)
            began += _distance(self.positions[action.agent], goal) / self.physics.walk_blocks_per_s
            self.positions[action.agent] = goal
        target = self.inventories[action.to]
        self._make_room(target, action.item, action.count, action.to, self.physics.inventory_slots)
        _take(self.inventories[action.agent], action.item, action.count, action.agent)
        if action.agent in self.losing:
            self.losing.discard(action.agent)
            raise _RefusedError(
                "HANDOFF_NOT_RECEIVED",
                f"{action.to} received 0 of {action.count} {action.item}; the stack was lost in flight",
            )
        _add(target, action.item, action.count)
        self._delivered = action.count
        return began + self._ticks(self.physics.toss_ticks + self.physics.pickup_delay_ticks)

    def _deposit(self, action: Deposit, began: float) -> float:
        where = self._ref(action.container, "container")
        self._within_reach(action.agent, where, action.container)
        chest = self.containers[action.container]
        self._make_room(chest, action.item, action.count, action.container, self.physics.container_slots)
        _take(self.inventories[action.agent], action.item, action.count, action.agent)
        _add(chest, action.item, action.count)
        self._credit(action.container, action.agent, action.item, action.count)
        return began + self._transfer_ticks(action.item, action.count)

    def _transfer_ticks(self, item: str, count: int) -> float:
        stacks = math.ceil(count / self.game.stack_sizes.get(item, 64))
        return self._ticks(self.physics.open_window_ticks + stacks * self.physics.click_ticks)

    def _craft_item(self, action: CraftItem, began: float) -> float:
        recipe = self.game.recipe(action.item, action.material)
        if recipe is None:
            source = f" from {action.material}" if action.material else ""
            raise _RefusedError("NO_RECIPE", f"no recipe makes {action.item}{source}")
        if action.station is None:
            if recipe.grid > 2:
                raise _RefusedError("NEEDS_STATION", f"{action.item} needs a 3x3 grid: craft it at a crafting_table")
        else:
            assert self._world is not None
            where = self._ref(action.station, "station")
            if self._world.refs[action.station].block != "crafting_table":
                raise _RefusedError("WRONG_STATION", f"{action.station} is not a crafting_table")
            if action.station in self.unplaced:
                raise _RefusedError("STATION_NOT_PLACED", f"no crafting_table has been placed at {action.station} yet")
            self._within_reach(action.agent, where, action.station)
            free_at = self.busy_until.get(action.station, 0.0)
            if began < free_at:
                wait = free_at - began
                raise _RefusedError("STATION_BUSY", f"{action.station} is busy for another {wait:.1f} s", wait)
        held = self.inventories[action.agent]
        needs = {item: n * action.runs for item, n in recipe.ingredients.items()}
        missing = {item: n - held.get(item, 0) for item, n in needs.items() if held.get(item, 0) < n}
        if missing:
            short = ", ".join(f"{n} {item}" for item, n in sorted(missing.items()))
            raise _RefusedError("MISSING_INGREDIENT", f"missing ingredient: {short}")
        made = recipe.count * action.runs
        self._make_room(held, action.item, made, action.agent, self.physics.inventory_slots, needs)
        for item, n in needs.items():
            _take(held, item, n, action.agent)
        _add(held, action.item, made)
        _add(self.crafted.setdefault(action.agent, {}), action.item, made)
        opened = self.physics.open_window_ticks if action.station else 0
        return began + self._ticks(opened + action.runs * self.physics.click_ticks)

    def _place_block(self, action: PlaceBlock, began: float) -> float:
        where = self._ref(action.site, "site")
        self._within_reach(action.agent, where, action.site)
        _take(self.inventories[action.agent], action.item, 1, action.agent)
        _add(self.sites[action.site], action.item, 1)
        self._credit(action.site, action.agent, action.item, 1)
        return began + self._ticks(self.physics.place_ticks)

    def _build_site(self, name: str) -> BuildSite:
        assert self._world is not None
        site = self._world.builds.get(name)
        if site is None:
            self._ref(name, "site")  # unknown, or not a site
            raise _RefusedError("NOT_A_BUILD_SITE", f"{name} is a site without exact cells")
        return site

    def _place_at(self, action: PlaceAt, began: float) -> float:
        site = self._build_site(action.site)
        standing = self.blocks[action.site]
        cells = [action.cell, offset(action.cell, (0, 1, 0))] if two_high(action.block) else [action.cell]
        where = ",".join(map(str, action.cell))
        if not all(site.contains(cell) for cell in cells):
            raise _RefusedError("OUTSIDE_SITE", f"cell {where} is outside {action.site}")
        taken = next((cell for cell in cells if cell in standing), None)
        if taken is not None:
            raise _RefusedError("CELL_TAKEN", f"{standing[taken]} already stands at {action.site} cell {where}")
        if not supported(action.cell, action.block, standing):
            raise _RefusedError("NO_SUPPORT", f"{action.block} at {action.site} cell {where} has no face to go against")
        self._refuse_occupied(action.agent, site, cells, f"{action.site} cell {where}")
        if self.inventories[action.agent].get(action.block, 0) < 1:  # refused before any walking
            _take(self.inventories[action.agent], action.block, 1, action.agent)
        walked = self._stand_within_reach(action.agent, action.site, action.cell, action.block, action.stand, True)
        _take(self.inventories[action.agent], action.block, 1, action.agent)
        self.terrains[action.site].place(cells, action.block)
        _add(self.sites[action.site], action.block, 1)
        self._credit(action.site, action.agent, action.block, 1)
        return began + walked + self._ticks(self.physics.place_ticks)

    def _refuse_occupied(self, agent: str, site: BuildSite, cells: list[Cell], where: str) -> None:
        """Vanilla places no block where a body is: a teammate standing in the cells must have stepped aside."""
        for other in self.positions:
            feet = self._feet(other, site)
            if other != agent and (feet in cells or offset(feet, (0, 1, 0)) in cells):
                raise _RefusedError("CELL_OCCUPIED", f"{other} stands in {where}")

    def _feet(self, agent: str, site: BuildSite) -> Cell:
        return feet_cell(self.positions[agent], site)

    def _stand_within_reach(
        self, agent: str, site_name: str, cell: Cell, block: str, planned: Cell | None, placing: bool
    ) -> float:
        """Seconds ``agent`` walks to a stand within reach of ``cell`` (the planned one if it can get there)."""
        site = self._build_site(site_name)
        terrain = self.terrains[site_name]
        start = self._feet(agent, site)
        filled = body_cells(cell, block) if placing else frozenset()
        stand = None
        if planned is not None and reaches(cell, filled)(planned):
            stand = terrain.walk_to(start, lambda feet: feet == planned)
        stand = stand or choose_stand(terrain, start, cell, block, placing)
        if stand is None:
            where = ",".join(map(str, cell))
            raise _RefusedError(
                "NO_STAND",
                f"{agent} can walk to nowhere within reach of {site_name} cell {where} (reach {REACH}; "
                "it walks, steps up one block and drops at most four)",
            )
        self.positions[agent] = feet_position(stand.feet, site)
        return stand.moves / self.physics.walk_blocks_per_s + stand.climbs * JUMP_S

    def _break_at(self, action: BreakAt, began: float) -> float:
        """Break scaffolding: the block must stand there; its drop falls where it stood (nobody's bag)."""
        standing = self.blocks[action.site]
        self._build_site(action.site)
        where = ",".join(map(str, action.cell))
        found = standing.get(action.cell)
        if found != action.block:
            raise _RefusedError(
                "NOTHING_TO_BREAK", f"{action.site} cell {where} holds {found or 'air'}, not {action.block}"
            )
        ticks = self._break_ticks(action.block)
        walked = self._stand_within_reach(action.agent, action.site, action.cell, action.block, action.stand, False)
        self.terrains[action.site].remove(action.cell)
        _take(self.sites[action.site], action.block, 1, action.site)
        return began + walked + self._ticks(ticks)

    def _break_ticks(self, block: str) -> int:
        ticks = self.physics.break_ticks.get(block)
        if ticks is None:
            raise _RefusedError("NOT_SCAFFOLDING", f"{block} is not a block scaffolding is made of")
        return ticks

    def _pillar(self, action: Pillar, began: float) -> float:
        """Walk into ``cell``, jump, and place the block under the feet: the agent stands one higher."""
        site = self._build_site(action.site)
        terrain = self.terrains[action.site]
        where = ",".join(map(str, action.cell))
        head_room = offset(action.cell, (0, 2, 0))
        if not terrain.standable(action.cell) or not terrain.passable(head_room):
            raise _RefusedError("NO_STAND", f"{action.agent} cannot stand and jump at {action.site} cell {where}")
        stand = terrain.walk_to(self._feet(action.agent, site), lambda feet: feet == action.cell)
        if stand is None:
            raise _RefusedError("NO_STAND", f"{action.agent} can walk to no way up at {action.site} cell {where}")
        self._refuse_occupied(action.agent, site, [action.cell, head_room], f"{action.site} cell {where}")
        _take(self.inventories[action.agent], action.block, 1, action.agent)
        terrain.place([action.cell], action.block)
        _add(self.sites[action.site], action.block, 1)
        self.positions[action.agent] = feet_position(offset(action.cell, (0, 1, 0)), site)
        walked = stand.moves / self.physics.walk_blocks_per_s + stand.climbs * JUMP_S
        return began + walked + JUMP_S + self._ticks(self.physics.place_ticks)

    def _step_aside(self, action: StepAside, began: float) -> float:
        """Walk to the cell the plan names, out of a teammate's way."""
        site = self._build_site(action.site)
        terrain = self.terrains[action.site]
        stand = terrain.walk_to(self._feet(action.agent, site), lambda feet: feet == action.feet)
        if stand is None:
            where = ",".join(map(str, action.feet))
            raise _RefusedError("NO_STAND", f"{action.agent} can walk to no way out at {action.site} cell {where}")
        self.positions[action.agent] = feet_position(stand.feet, site)
        return began + stand.moves / self.physics.walk_blocks_per_s + stand.climbs * JUMP_S

    def _dig_down(self, action: DigDown, began: float) -> float:
        """Break the block under the feet; the agent drops onto what is below, and the drop with it into its bag."""
        site = self._build_site(action.site)
        where = ",".join(map(str, action.cell))
        if self._feet(action.agent, site) != offset(action.cell, (0, 1, 0)):
            raise _RefusedError("NO_STAND", f"{action.agent} is not standing on {action.site} cell {where}")
        if self.blocks[action.site].get(action.cell) != action.block:
            raise _RefusedError("NOTHING_TO_BREAK", f"{action.site} cell {where} holds no {action.block}")
        ticks = self._break_ticks(action.block)
        terrain = self.terrains[action.site]
        terrain.remove(action.cell)
        _take(self.sites[action.site], action.block, 1, action.site)
        landed = action.cell
        while not terrain.standable(landed) and landed[1] > 0:
            landed = offset(landed, (0, -1, 0))
        self.positions[action.agent] = feet_position(landed, site)
        _add(self.inventories[action.agent], action.block, 1)
        return began + self._ticks(ticks + self.physics.pickup_delay_ticks // 4)

    def _place_station(self, action: PlaceStation, began: float) -> float:
        assert self._world is not None
        where = self._ref(action.station, "station")
        self._within_reach(action.agent, where, action.station)
        block = self._world.refs[action.station].block
        if action.item != block:
            raise _RefusedError("WRONG_STATION", f"{action.station} takes a {block}, not {action.item}")
        if action.station not in self.unplaced:
            raise _RefusedError("STATION_OCCUPIED", f"a {block} already stands at {action.station}")
        _take(self.inventories[action.agent], action.item, 1, action.agent)
        self.unplaced.discard(action.station)
        return began + self._ticks(self.physics.place_ticks)

    def _new_furnace(self, smoker: bool, fuel: Mapping[str, int]) -> _Furnace:
        """A furnace, or a smoker (food only, twice as fast, fuel burning twice as fast), with its fuel slot filled."""
        physics = self.physics
        per_item = physics.smoke_ticks_per_item if smoker else physics.smelt_ticks_per_item
        furnace = _Furnace(dict(physics.smoking if smoker else physics.smelting), per_item)
        # a smoker gets half the items out of each fuel: its per-item time is half, so halve the burn
        scale = per_item / physics.smelt_ticks_per_item
        furnace.fuel_ticks = sum(int(physics.fuel_ticks[item] * scale) * count for item, count in fuel.items())
        return furnace

    def _furnace(self, station: str, agent: str) -> _Furnace:
        where = self._ref(station, "station")
        furnace = self.furnaces.get(station)
        if furnace is None:
            raise _RefusedError("WRONG_STATION", f"{station} is not a furnace or a smoker")
        self._within_reach(agent, where, station)
        return furnace

    def _advance(self, furnace: _Furnace, now: float) -> None:
        """Smelt what the elapsed time and the fuel allow, then idle or keep going."""
        per_item = furnace.ticks_per_item
        if furnace.busy_since is not None:
            elapsed = int((now - furnace.busy_since) * TICKS_PER_S + 1e-6)  # ticks, clear of float rounding
            done = min(furnace.input_count, elapsed // per_item, furnace.fuel_ticks // per_item)
            if done and furnace.input_item is not None:
                furnace.output_item = furnace.recipes[furnace.input_item]
                furnace.output_count += done
                furnace.input_count -= done
                furnace.fuel_ticks -= done * per_item
                furnace.busy_since += self._ticks(done * per_item)
        can_work = furnace.input_count > 0 and furnace.fuel_ticks >= per_item
        if not can_work:
            furnace.busy_since = None
        elif furnace.busy_since is None:
            furnace.busy_since = now

    def _furnace_load(self, action: FurnaceLoad, began: float) -> float:
        furnace = self._furnace(action.station, action.agent)
        self._advance(furnace, began)
        held = self.inventories[action.agent]
        if action.slot == "input":
            if action.item not in furnace.recipes:
                raise _RefusedError("NOT_SMELTABLE", f"{action.item} does not cook or smelt at {action.station}")
            if furnace.input_item not in (None, action.item) and furnace.input_count:
                raise _RefusedError("SLOT_OCCUPIED", f"{action.station}'s input holds {furnace.input_item}")
            _take(held, action.item, action.count, action.agent)
            furnace.input_item = action.item
            furnace.input_count += action.count
        else:
            burn = self.physics.fuel_ticks.get(action.item)
            if burn is None:
                raise _RefusedError("NOT_FUEL", f"{action.item} is not a furnace fuel")
            _take(held, action.item, action.count, action.agent)
            furnace.fuel_ticks += int(burn * furnace.ticks_per_item / self.physics.smelt_ticks_per_item) * action.count
        ended = began + self._transfer_ticks(action.item, action.count)
        self._advance(furnace, ended)
        return ended

    def _furnace_collect(self, action: FurnaceCollect, began: float) -> float:
        furnace = self._furnace(action.station, action.agent)
        self._advance(furnace, began)
        ready = began
        short = action.count - furnace.output_count
        if short > 0:
            per_item = furnace.ticks_per_item
            possible = min(furnace.input_count, furnace.fuel_ticks // per_item)
            if possible < short or furnace.busy_since is None:
                raise _RefusedError(
                    "FURNACE_SHORT",
                    f"{action.station} can make {furnace.output_count + possible} {action.item}, "
                    f"{action.count} requested",
                )
            ready = furnace.busy_since + self._ticks(short * per_item)
            self._advance(furnace, ready)
        if furnace.output_item != action.item:
            raise _RefusedError("WRONG_OUTPUT", f"{action.station} makes {furnace.output_item}, not {action.item}")
        held = self.inventories[action.agent]
        self._make_room(held, action.item, action.count, action.agent, self.physics.inventory_slots)
        furnace.output_count -= action.count
        _add(held, action.item, action.count)
        return max(began, ready) + self._transfer_ticks(action.item, action.count)

    def _wait(self, action: Wait, began: float) -> float:
        return began + self._ticks(action.ticks)
