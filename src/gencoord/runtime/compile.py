"""Compile(D, ω) → executor actions: our own compiler, never code a model sent.

Each planned task becomes a short, fixed action sequence (walk there, then act), and
the plan's dependency DAG becomes action dependencies: the first action of a task
waits for the last action of each predecessor, so a receiver does nothing of its
consuming task before the handoff lands. Where the plan leaves a choice to the world
(which resource area yields an item), the compiler picks the one nearest the actor.
"""

from __future__ import annotations

import math
from typing import Literal

from gencoord.errors import CompileError, Location
from gencoord.prior.gamedata import GameData
from gencoord.protocol.plan import DispatchPlan, PlannedTask
from gencoord.worlds.actions import (
    Action,
    CraftItem,
    Deposit,
    FurnaceCollect,
    FurnaceLoad,
    GiveItem,
    GoTo,
    ObtainBlock,
    PlaceBlock,
    PlaceStation,
    Program,
    Wait,
    Withdraw,
)
from gencoord.worlds.spec import WorldSpec


def _int(task: PlannedTask, key: str) -> int:
    value = dict(task.args).get(key)
    if not isinstance(value, int):
        raise CompileError("MISSING_ARGUMENT", f"{task.id} ({task.skill}) has no integer {key!r}", Location(key=key))
    return value


def _str(task: PlannedTask, key: str) -> str | None:
    value = dict(task.args).get(key)
    return None if value is None else str(value)


def _need(task: PlannedTask, key: str) -> str:
    value = _str(task, key)
    if value is None:
        raise CompileError("MISSING_ARGUMENT", f"{task.id} ({task.skill}) has no {key!r}", Location(key=key))
    return value


class _Compiler:
    def __init__(self, world: WorldSpec, game: GameData) -> None:
        self.world = world
        self.game = game
        self.at: dict[str, str] = {}  # where each agent will stand, by ref name

    def go(self, agent: str, task: str, ref: str) -> list[Action]:
        if self.at.get(agent) == ref:
            return []
        if ref not in self.world.refs:
            raise CompileError("UNKNOWN_REF", f"{task}: {ref} does not exist in this world", Location(key="loc"))
        self.at[agent] = ref
        return [GoTo(agent, task, ref, "ref")]

    def go_to_agent(self, agent: str, task: str, other: str) -> list[Action]:
        self.at.pop(agent, None)
        return [GoTo(agent, task, other, "agent")]

    def source(self, task: PlannedTask, item: str) -> str:
        """The resource area (or named container) the actor takes ``item`` from."""
        named = _str(task, "loc")
        if named is not None:
            return named
        blocks = set(self.game.sources_of(item))
        candidates = [name for name, ref in self.world.refs.items() if ref.kind == "resource" and ref.block in blocks]
        if not candidates:
            raise CompileError("NO_SOURCE", f"{task.id}: nothing in this world yields {item}")
        start = self.world.agent(task.actor).position
        return min(candidates, key=lambda name: (math.dist(start, self.world.refs[name].position), name))

    def task(self, task: PlannedTask) -> list[Action]:
        actor, ident, skill = task.actor, task.id, task.skill
        if skill == "control.wait":
            loc = _str(task, "loc")
            return [*(self.go(actor, ident, loc) if loc else []), Wait(actor, ident, _int(task, "q"))]
        if skill == "resource.obtain":
            return self.obtain(task)
        if skill == "resource.deliver":
            return self.deliver(task)
        if skill == "craft.item":
            item, runs = _need(task, "item"), _int(task, "q")
            material = _str(task, "input")
            recipe = self.game.recipe(item, material)
            runs = recipe.crafts_for(runs) if recipe is not None else runs
            station = task.place.name if task.place is not None and task.place.kind == "ref" else None
            walk = self.go(actor, ident, station) if station else []
            return [*walk, CraftItem(actor, ident, item, runs, material, station)]
        if skill in ("transform.supply_input", "transform.supply_fuel"):
            station = _need(task, "station")
            slot: Literal["input", "fuel"] = "input" if skill == "transform.supply_input" else "fuel"
            load = FurnaceLoad(actor, ident, station, slot, _need(task, "item"), _int(task, "q"))
            return [*self.go(actor, ident, station), load]
        if skill == "transform.collect_output":
            station = _need(task, "station")
            collect = FurnaceCollect(actor, ident, station, _need(task, "item"), _int(task, "q"))
            return [*self.go(actor, ident, station), collect]
        if skill == "station.place":
            station = _need(task, "station")
            return [*self.go(actor, ident, station), PlaceStation(actor, ident, station, _need(task, "item"))]
        if skill == "build.component":
            site, item = _need(task, "site"), _need(task, "item")
            return [
                *self.go(actor, ident, site),
                *(PlaceBlock(actor, ident, site, item) for _ in range(_int(task, "q"))),
            ]
        raise CompileError("UNKNOWN_SKILL", f"{ident}: no executor actions for skill {skill!r}")

    def obtain(self, task: PlannedTask) -> list[Action]:
        item, quantity = _need(task, "item"), _int(task, "q")
        where = self.source(task, item)
        ref = self.world.refs.get(where)
        if ref is None:
            raise CompileError("UNKNOWN_REF", f"{task.id}: {where} does not exist in this world", Location(key="loc"))
        walk = self.go(task.actor, task.id, where)
        if ref.kind == "container":
            return [*walk, Withdraw(task.actor, task.id, where, item, quantity)]
        block = ref.block
        data = self.game.blocks.get(block or "")
        per_block = data.drops.count(item) if data is not None else 0
        if block is None or per_block == 0:
            raise CompileError("NO_SOURCE", f"{task.id}: {where} yields no {item}")
        blocks = math.ceil(quantity / per_block)
        return [*walk, *(ObtainBlock(task.actor, task.id, where, block) for _ in range(blocks))]

    def deliver(self, task: PlannedTask) -> list[Action]:
        item, quantity = _need(task, "item"), _int(task, "q")
        to = _str(task, "to")
        if to is not None:
            return [*self.go_to_agent(task.actor, task.id, to), GiveItem(task.actor, task.id, to, item, quantity)]
        dst = _need(task, "dst")
        kind = self.world.refs[dst].kind if dst in self.world.refs else None
        if kind == "site":
            placed = (PlaceBlock(task.actor, task.id, dst, item) for _ in range(quantity))
            return [*self.go(task.actor, task.id, dst), *placed]
        return [*self.go(task.actor, task.id, dst), Deposit(task.actor, task.id, dst, item, quantity)]


def compile_task(task: PlannedTask, world: WorldSpec, game: GameData) -> tuple[Action, ...]:
    """The actions of one planned task on its own, for controllers that dispatch task by task."""
    return tuple(_Compiler(world, game).task(task))


def compile_plan(plan: DispatchPlan, world: WorldSpec, game: GameData) -> Program:
    """The executor program for ``plan`` in ``world``; raises CompileError (EXECUTION_FAILURE)."""
    compiler = _Compiler(world, game)
    actions: list[Action] = []
    deps: list[tuple[int, ...]] = []
    last: dict[str, int] = {}
    for task in plan.tasks:
        waits = tuple(sorted(last[pred] for pred in task.preds if pred in last))
        steps = compiler.task(task)
        if not steps:
            raise CompileError("EMPTY_TASK", f"{task.id} ({task.skill}) compiles to no action")
        for position, action in enumerate(steps):
            deps.append(waits if position == 0 else ())
            actions.append(action)
        last[task.id] = len(actions) - 1
    handoffs = tuple(last[check.producer] for check in plan.handoffs if check.producer in last)
    if len(handoffs) < len(plan.handoffs):
        missing = next(check.producer for check in plan.handoffs if check.producer not in last)
        raise CompileError("NO_HANDOFF_ACTION", f"the handoff task {missing} compiled to no action")
    return Program(tuple(actions), tuple(deps), handoffs)
