"""The simulator executor: action semantics on an in-memory world, with simulated time.

Each agent has its own clock. An action starts when its agent is free and every action
it depends on has finished, so two agents work in parallel and a receiver's first
consuming action waits for the handoff. Effects apply in program order, which the
compiler guarantees is a valid order; a failure stops only what waits on it
(:class:`~gencoord.worlds.executor.Cascade`). Same world spec, same program: same trace.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from gencoord.dsl.cells import Cell
from gencoord.prior.gamedata import GameData
from gencoord.prior.load import default_prior
from gencoord.prior.loot import LootTable, default_loot, roll
from gencoord.reasons import Reason
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
    ActionRecord,
    Cascade,
    HandoffHook,
    Items,
    WorldSnapshot,
)
from gencoord.worlds.sim.building import BuildingActions
from gencoord.worlds.sim.furnaces import FurnaceActions
from gencoord.worlds.sim.physics import Physics, default_physics
from gencoord.worlds.sim.state import RefusedError, add, distance, take
from gencoord.worlds.spec import Position, WorldSpec
from gencoord.worlds.standing import (
    Terrain,
)


class SimExecutor(BuildingActions, FurnaceActions):
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
                    raise RefusedError(Reason.UNKNOWN_AGENT, f"{agent} is not in this world")
                if action.name in self.forbidden[agent]:
                    raise RefusedError(Reason.WORKCELL_CANNOT, f"{agent}'s workcell cannot {action.name}")
                ended = self._handlers[type(action)](action, began)
            except RefusedError as refused:
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
                take(held, change.item, lost, change.agent)

    # ------------------------------------------------------------------ helpers
    def _inventories_after(self, action: Action) -> dict[str, Items]:
        after = {action.agent: dict(self.inventories.get(action.agent, {}))}
        if isinstance(action, GiveItem) and action.to in self.inventories:
            after[action.to] = dict(self.inventories[action.to])
        return after

    # ------------------------------------------------------------------ actions
    def _beside(self, agent: str) -> Position:
        x, y, z = self.positions[agent]
        return (x + 1.0, y, z)  # stand next to the agent, not inside it

    def _go_to(self, action: GoTo, began: float) -> float:
        if action.target_kind == "agent":
            if action.target not in self.positions:
                raise RefusedError(Reason.UNKNOWN_AGENT, f"{action.target} is not in this world")
            goal = self._beside(action.target)
        else:
            assert self._world is not None
            if action.target not in self._world.refs:
                raise RefusedError(Reason.UNKNOWN_REF, f"{action.target} does not exist in this world")
            if action.target in self.blocked and not action.detour:
                raise RefusedError(Reason.PATH_BLOCKED, f"the route to {action.target} is blocked; a detour is needed")
            x, y, z = (float(c) for c in self._world.refs[action.target].position)
            goal = (x, y, z - 1.0)  # stand in front of the block
        walked = distance(self.positions[action.agent], goal)
        if action.detour:
            walked *= self.physics.detour_factor
        self.positions[action.agent] = goal
        return began + walked / self.physics.walk_blocks_per_s

    def _obtain_block(self, action: ObtainBlock, began: float) -> float:
        where = self._ref(action.source, "resource")
        self._within_reach(action.agent, where, action.source)
        if self.deposits[action.source] <= 0:
            raise RefusedError(Reason.SOURCE_EXHAUSTED, f"{action.source} has no {action.block} left")
        block = self.game.blocks.get(action.block)
        if block is None:
            raise RefusedError(Reason.NOT_BREAKABLE, f"{action.block} cannot be broken")
        held = self.inventories[action.agent]
        if not block.harvestable_with(held):
            tools = ", ".join(sorted(block.harvest_tools or ()))
            raise RefusedError(Reason.NOT_HARVESTABLE, f"{action.block} drops nothing without one of: {tools}")
        ticks = self.game.break_ticks(action.block, held)
        crop = self.loot.blocks.get(action.block)
        drops = roll(crop.drops, self.rng) if crop is not None else dict.fromkeys(block.drops, 1)
        for drop, count in drops.items():
            self._make_room(held, drop, count, action.agent, self.physics.inventory_slots)
        self.deposits[action.source] -= 1
        for drop, count in drops.items():
            add(held, drop, count)
        return began + self._ticks(ticks)

    def _hunt(self, action: Hunt, began: float) -> float:
        where = self._ref(action.herd, "resource")
        self._within_reach(action.agent, where, action.herd)
        mob = self.loot.mobs.get(action.animal)
        if mob is None or self._world is None or self._world.refs[action.herd].entity != action.animal:
            raise RefusedError(Reason.NO_SUCH_ANIMAL, f"{action.herd} has no {action.animal} to hunt")
        held = self.inventories[action.agent]
        got, ticks = 0, 0
        while got < action.count:
            if self.deposits[action.herd] <= 0:
                raise RefusedError(
                    Reason.SOURCE_EXHAUSTED,
                    f"{action.herd} has no {action.animal} left; "
                    f"{action.agent} got {got} of {action.count} {action.item}",
                )
            self.deposits[action.herd] -= 1
            drops = roll(mob.drops, self.rng)
            for drop, count in drops.items():
                self._make_room(held, drop, count, action.agent, self.physics.inventory_slots)
                add(held, drop, count)
            got += drops.get(action.item, 0)
            ticks += self.physics.chase_ticks + mob.health * self.physics.hit_ticks
        return began + self._ticks(ticks)

    def _withdraw(self, action: Withdraw, began: float) -> float:
        where = self._ref(action.container, "container")
        self._within_reach(action.agent, where, action.container)
        held = self.inventories[action.agent]
        self._make_room(held, action.item, action.count, action.agent, self.physics.inventory_slots)
        take(self.containers[action.container], action.item, action.count, action.container)
        add(held, action.item, action.count)
        return began + self._transfer_ticks(action.item, action.count)

    def _give_item(self, action: GiveItem, began: float) -> float:
        if action.to not in self.inventories:
            raise RefusedError(Reason.UNKNOWN_AGENT, f"{action.to} is not in this world")
        if distance(self.positions[action.agent], self.positions[action.to]) > self.physics.reach_blocks:
            # the receiver moved on after the giver walked up (to dig, to a station): the giver
            # follows it, as a player would, and as the Minecraft skill does
            goal = self._beside(action.to)
            began += distance(self.positions[action.agent], goal) / self.physics.walk_blocks_per_s
            self.positions[action.agent] = goal
        target = self.inventories[action.to]
        self._make_room(target, action.item, action.count, action.to, self.physics.inventory_slots)
        take(self.inventories[action.agent], action.item, action.count, action.agent)
        if action.agent in self.losing:
            self.losing.discard(action.agent)
            raise RefusedError(
                Reason.HANDOFF_NOT_RECEIVED,
                f"{action.to} received 0 of {action.count} {action.item}; the stack was lost in flight",
            )
        add(target, action.item, action.count)
        self._delivered = action.count
        return began + self._ticks(self.physics.toss_ticks + self.physics.pickup_delay_ticks)

    def _deposit(self, action: Deposit, began: float) -> float:
        where = self._ref(action.container, "container")
        self._within_reach(action.agent, where, action.container)
        chest = self.containers[action.container]
        self._make_room(chest, action.item, action.count, action.container, self.physics.container_slots)
        take(self.inventories[action.agent], action.item, action.count, action.agent)
        add(chest, action.item, action.count)
        self._credit(action.container, action.agent, action.item, action.count)
        return began + self._transfer_ticks(action.item, action.count)

    def _craft_item(self, action: CraftItem, began: float) -> float:
        recipe = self.game.recipe(action.item, action.material)
        if recipe is None:
            source = f" from {action.material}" if action.material else ""
            raise RefusedError(Reason.NO_RECIPE, f"no recipe makes {action.item}{source}")
        if action.station is None:
            if recipe.grid > 2:
                raise RefusedError(
                    Reason.NEEDS_STATION, f"{action.item} needs a 3x3 grid: craft it at a crafting_table"
                )
        else:
            assert self._world is not None
            where = self._ref(action.station, "station")
            if self._world.refs[action.station].block != "crafting_table":
                raise RefusedError(Reason.WRONG_STATION, f"{action.station} is not a crafting_table")
            if action.station in self.unplaced:
                raise RefusedError(
                    Reason.STATION_NOT_PLACED, f"no crafting_table has been placed at {action.station} yet"
                )
            self._within_reach(action.agent, where, action.station)
            free_at = self.busy_until.get(action.station, 0.0)
            if began < free_at:
                wait = free_at - began
                raise RefusedError(Reason.STATION_BUSY, f"{action.station} is busy for another {wait:.1f} s", wait)
        held = self.inventories[action.agent]
        needs = {item: n * action.runs for item, n in recipe.ingredients.items()}
        missing = {item: n - held.get(item, 0) for item, n in needs.items() if held.get(item, 0) < n}
        if missing:
            short = ", ".join(f"{n} {item}" for item, n in sorted(missing.items()))
            raise RefusedError(Reason.MISSING_INGREDIENT, f"missing ingredient: {short}")
        made = recipe.count * action.runs
        self._make_room(held, action.item, made, action.agent, self.physics.inventory_slots, needs)
        for item, n in needs.items():
            take(held, item, n, action.agent)
        add(held, action.item, made)
        add(self.crafted.setdefault(action.agent, {}), action.item, made)
        opened = self.physics.open_window_ticks if action.station else 0
        return began + self._ticks(opened + action.runs * self.physics.click_ticks)

    def _place_block(self, action: PlaceBlock, began: float) -> float:
        where = self._ref(action.site, "site")
        self._within_reach(action.agent, where, action.site)
        take(self.inventories[action.agent], action.item, 1, action.agent)
        add(self.sites[action.site], action.item, 1)
        self._credit(action.site, action.agent, action.item, 1)
        return began + self._ticks(self.physics.place_ticks)

    def _place_station(self, action: PlaceStation, began: float) -> float:
        assert self._world is not None
        where = self._ref(action.station, "station")
        self._within_reach(action.agent, where, action.station)
        block = self._world.refs[action.station].block
        if action.item != block:
            raise RefusedError(Reason.WRONG_STATION, f"{action.station} takes a {block}, not {action.item}")
        if action.station not in self.unplaced:
            raise RefusedError(Reason.STATION_OCCUPIED, f"a {block} already stands at {action.station}")
        take(self.inventories[action.agent], action.item, 1, action.agent)
        self.unplaced.discard(action.station)
        return began + self._ticks(self.physics.place_ticks)

    def _wait(self, action: Wait, began: float) -> float:
        return began + self._ticks(action.ticks)
