"""The local solver: LOCAL_RECOVER through the recipe tree (obtain, craft, smelt).

It plans only from what the agent knows: the public refs, its own verified inventory,
and the sources its own history has seen run dry. The plan is a list of ordinary
Short DSL tasks, compiled and executed like any other node, so its cost estimate is
the exact number of executor actions it would take in the world the agent believes in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from gencoord.prior.gamedata import GameData
from gencoord.prior.public import Ref
from gencoord.protocol.plan import Place, PlannedTask
from gencoord.runtime.compile import compile_task
from gencoord.worlds.sim.physics import Physics
from gencoord.worlds.spec import AgentSpec, WorldSpec

MAX_DEPTH = 4
FUEL = "oak_planks"  # the fuel a local solver reaches for: minable here, 300 ticks each


@dataclass(frozen=True)
class Belief:
    """What one agent knows of the world: refs (public), where it stands, what ran dry."""

    agent: str
    position: tuple[float, float, float]
    refs: Mapping[str, Ref]
    exhausted: frozenset[str]
    blocked: frozenset[str]

    def world(self, inventory: Mapping[str, int]) -> WorldSpec:
        return WorldSpec((AgentSpec(self.agent, self.position, dict(inventory)),), self.refs)


class _Planner:
    def __init__(self, belief: Belief, inventory: Mapping[str, int], game: GameData, physics: Physics) -> None:
        self.belief = belief
        self.have = dict(inventory)
        self.game = game
        self.physics = physics
        self.tasks: list[PlannedTask] = []

    def _add(self, skill: str, args: dict[str, object], place: str | None) -> None:
        task_args = tuple((k, v) for k, v in args.items() if v is not None)
        ident = f"{self.belief.agent}#recover{len(self.tasks) + 1}"
        spot = None if place is None else Place("ref", place)
        self.tasks.append(PlannedTask(ident, self.belief.agent, skill, task_args, spot, ()))  # type: ignore[arg-type]

    def _station(self, block: str) -> str | None:
        return next((n for n, r in sorted(self.belief.refs.items()) if r.kind == "station" and r.block == block), None)

    def acquire(self, item: str, quantity: int, depth: int = 0) -> bool:
        """Make ``quantity`` of ``item`` held; False when no known route exists."""
        missing = quantity - self.have.get(item, 0)
        if missing <= 0:
            return True
        if depth > MAX_DEPTH:
            return False
        return (
            self._mine(item, missing, depth) or self._craft(item, missing, depth) or self._smelt(item, missing, depth)
        )

    def _gain(self, item: str, count: int) -> None:
        self.have[item] = self.have.get(item, 0) + count

    def _spend(self, item: str, count: int) -> None:
        self.have[item] = self.have.get(item, 0) - count

    def _mine(self, item: str, missing: int, depth: int) -> bool:
        blocks = set(self.game.sources_of(item))
        areas = [
            name
            for name, ref in sorted(self.belief.refs.items())
            if ref.kind == "resource" and ref.block in blocks and name not in self.belief.exhausted
        ]
        if not areas:
            return False
        area = min(areas, key=lambda n: math.dist(self.belief.position, self.belief.refs[n].position))
        block = self.game.blocks[self.belief.refs[area].block or ""]
        if not block.harvestable_with(k for k, v in self.have.items() if v > 0):
            tools = sorted(block.harvest_tools or ())
            if not any(self._try(tool, 1, depth + 1) for tool in tools):
                return False
        self._add("resource.obtain", {"q": missing, "item": item, "loc": area}, None)
        self._gain(item, missing)
        return True

    def _try(self, item: str, quantity: int, depth: int) -> bool:
        """Acquire with rollback: a failed branch leaves no half plan behind."""
        saved_have, saved_tasks = dict(self.have), list(self.tasks)
        if self.acquire(item, quantity, depth):
            return True
        self.have, self.tasks = saved_have, saved_tasks
        return False

    def _craft(self, item: str, missing: int, depth: int) -> bool:
        station = self._station("crafting_table")
        for recipe in sorted(self.game.recipes.get(item, ()), key=lambda r: len(r.ingredients)):
            if recipe.grid > 2 and station is None:
                continue
            runs = recipe.crafts_for(missing)
            saved_have, saved_tasks = dict(self.have), list(self.tasks)
            if all(self.acquire(i, n * runs, depth + 1) for i, n in sorted(recipe.ingredients.items())):
                for ingredient, n in recipe.ingredients.items():
                    self._spend(ingredient, n * runs)
                main = max(recipe.ingredients, key=lambda i: recipe.ingredients[i])
                self._add("craft.item", {"q": missing, "input": main, "item": item}, station)
                self._gain(item, recipe.count * runs)
                return True
            self.have, self.tasks = saved_have, saved_tasks
        return False

    def _smelt(self, item: str, missing: int, depth: int) -> bool:
        furnace = self._station("furnace")
        if furnace is None:
            return False
        per_fuel = self.physics.fuel_ticks[FUEL] / self.physics.smelt_ticks_per_item
        fuel = math.ceil(missing / per_fuel)
        for source, output in sorted(self.physics.smelting.items()):
            if output != item:
                continue
            saved_have, saved_tasks = dict(self.have), list(self.tasks)
            if self.acquire(source, missing, depth + 1) and self.acquire(FUEL, fuel, depth + 1):
                self._spend(source, missing)
                self._spend(FUEL, fuel)
                self._add("transform.supply_input", {"q": missing, "item": source, "station": furnace}, furnace)
                self._add("transform.supply_fuel", {"q": fuel, "item": FUEL, "station": furnace}, furnace)
                self._add("transform.collect_output", {"q": missing, "item": item, "station": furnace}, furnace)
                self._gain(item, missing)
                return True
            self.have, self.tasks = saved_have, saved_tasks
        return False


@dataclass(frozen=True)
class RecoveryPlan:
    tasks: tuple[PlannedTask, ...]
    cost: int  # executor actions, in the world the agent believes in


def plan_recovery(
    needs: Mapping[str, int], belief: Belief, inventory: Mapping[str, int], game: GameData, physics: Physics
) -> RecoveryPlan | None:
    """A local plan that leaves ``needs`` held, or None when the agent knows no route."""
    planner = _Planner(belief, inventory, game, physics)
    for item, quantity in sorted(needs.items()):
        if not planner.acquire(item, quantity):
            return None
    world = belief.world(inventory)
    cost = sum(len(compile_task(task, world, game)) for task in planner.tasks)
    return RecoveryPlan(tuple(planner.tasks), cost)
