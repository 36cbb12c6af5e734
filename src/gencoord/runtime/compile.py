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

from gencoord.dsl.cells import Cell, block_of, is_temporary, parse_cells, parse_share
from gencoord.errors import CompileError, Location, ParseError
from gencoord.prior.gamedata import GameData
from gencoord.prior.loot import Drop, certain, default_loot
from gencoord.protocol.plan import DispatchPlan, PlannedTask
from gencoord.reasons import Reason
from gencoord.runtime.interleave import dependency_order, interleave
from gencoord.runtime.stands import place_builders
from gencoord.worlds.actions import (
    Action,
    BreakAt,
    CraftItem,
    Deposit,
    FurnaceCollect,
    FurnaceLoad,
    GiveItem,
    GoTo,
    Hunt,
    ObtainBlock,
    PlaceAt,
    PlaceBlock,
    PlaceStation,
    Program,
    Wait,
    Withdraw,
)
from gencoord.worlds.placing import (
    NEIGHBOURS,
    ShareError,
    build_order,
    needs_floor,
    offset,
    share_placements,
    two_high,
)
from gencoord.worlds.spec import WorldSpec


def _int(task: PlannedTask, key: str) -> int:
    value = dict(task.args).get(key)
    if not isinstance(value, int):
        raise CompileError(
            Reason.MISSING_ARGUMENT, f"{task.id} ({task.skill}) has no integer {key!r}", Location(key=key)
        )
    return value


def _str(task: PlannedTask, key: str) -> str | None:
    value = dict(task.args).get(key)
    return None if value is None else str(value)


def _need(task: PlannedTask, key: str) -> str:
    value = _str(task, key)
    if value is None:
        raise CompileError(Reason.MISSING_ARGUMENT, f"{task.id} ({task.skill}) has no {key!r}", Location(key=key))
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
            raise CompileError(Reason.UNKNOWN_REF, f"{task}: {ref} does not exist in this world", Location(key="loc"))
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
        loot = default_loot()
        blocks = set(self.game.sources_of(item)) | {name for name in loot.blocks if loot.block_yields(name, item)}
        animals = {name for name, mob in loot.mobs.items() if _drops(mob.drops, item)}
        candidates = [
            name
            for name, ref in self.world.refs.items()
            if ref.kind == "resource" and (ref.block in blocks or ref.entity in animals)
        ]
        if not candidates:
            raise CompileError(Reason.NO_SOURCE, f"{task.id}: nothing in this world yields {item}")
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
        if skill == "build.place":
            return self.build(task)
        raise CompileError(Reason.UNKNOWN_SKILL, f"{ident}: no executor actions for skill {skill!r}")

    def build(self, task: PlannedTask) -> list[Action]:
        """Each placement in order, then the task's scaffolding broken, the last placed first.

        Breaking at the end (not once the agent's own blocks beside it stand) keeps every
        wait pointing backwards: a break waits for the teammates' blocks beside it
        (``_support``), and those wait only for placements earlier in the build order, so a
        team's commitment cannot deadlock on its scaffolding.
        """
        actor, ident, site_name = task.actor, task.id, _need(task, "site")
        site = self.world.builds.get(site_name)
        if site is None:
            raise CompileError(Reason.NOT_A_BUILD_SITE, f"{ident}: {site_name} has no exact cells in this world")
        key = "cells" if _str(task, "cells") else "share"
        try:
            if key == "cells":
                placements = list(parse_cells(_need(task, "cells")))
            elif not site.blueprint:
                raise CompileError(
                    Reason.NO_SHARED_BLUEPRINT, f"{ident}: {site_name}'s blueprint is not shared; name the cells"
                )
            else:
                placements = share_placements(site.plan(), site.size, parse_share(_need(task, "share")))
        except ParseError as error:
            raise CompileError(error.reason, f"{ident}: {error.message}", Location(key=key)) from None
        except ShareError as error:
            raise CompileError(Reason.SHARE_OUT_OF_RANGE, f"{ident}: {error}", Location(key=key)) from None
        steps: list[Action] = [PlaceAt(actor, ident, site_name, cell, block_of(block)) for block, cell in placements]
        temporary = [
            BreakAt(actor, ident, site_name, cell, block_of(block)) for block, cell in placements if is_temporary(block)
        ]
        return steps + temporary[::-1]

    def obtain(self, task: PlannedTask) -> list[Action]:
        item, quantity = _need(task, "item"), _int(task, "q")
        where = self.source(task, item)
        ref = self.world.refs.get(where)
        if ref is None:
            raise CompileError(
                Reason.UNKNOWN_REF, f"{task.id}: {where} does not exist in this world", Location(key="loc")
            )
        walk = self.go(task.actor, task.id, where)
        if ref.kind == "container":
            return [*walk, Withdraw(task.actor, task.id, where, item, quantity)]
        if ref.entity is not None:
            mob = default_loot().mobs.get(ref.entity)
            if mob is None or not _drops(mob.drops, item):
                raise CompileError(Reason.NO_SOURCE, f"{task.id}: the {ref.entity} of {where} drop no {item}")
            return [*walk, Hunt(task.actor, task.id, where, ref.entity, item, quantity)]
        block = ref.block
        data = self.game.blocks.get(block or "")
        crop = default_loot().blocks.get(block or "")
        # a ripe crop drops a random amount: break as many as make the count for certain
        per_block = certain(crop.drops, item) if crop is not None else data.drops.count(item) if data else 0
        if block is None or per_block == 0:
            raise CompileError(Reason.NO_SOURCE, f"{task.id}: {where} yields no {item}")
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


def _drops(drops: tuple[Drop, ...], item: str) -> bool:
    return any(drop.item == item for drop in drops)


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
            raise CompileError(Reason.EMPTY_TASK, f"{task.id} ({task.skill}) compiles to no action")
        for position, action in enumerate(steps):
            deps.append(waits if position == 0 else ())
            actions.append(action)
        last[task.id] = len(actions) - 1
    _support(actions, deps, interleave(actions))
    handoffs = tuple(last[check.producer] for check in plan.handoffs if check.producer in last)
    if len(handoffs) < len(plan.handoffs):
        missing = next(check.producer for check in plan.handoffs if check.producer not in last)
        raise CompileError(Reason.NO_HANDOFF_ACTION, f"the handoff task {missing} compiled to no action")
    return place_builders(_in_dependency_order(Program(tuple(actions), tuple(deps), handoffs)), world)


def _in_dependency_order(program: Program) -> Program:
    """``program`` with every action after what it waits for; unchanged when it already is.

    A placement may wait for a teammate's later task (the block under it); executors apply
    effects in program order, so the actions are interleaved: each agent's own order kept,
    otherwise the earliest action first. A wait that can never end is refused (``DEADLOCK``).
    """
    actions, deps = program.actions, program.deps
    if all(d < index for index, waits in enumerate(deps) for d in waits):
        return program
    order = dependency_order(actions, deps, lambda index: (index,))
    if len(order) < len(actions):
        stuck = next(actions[i] for i in range(len(actions)) if i not in set(order))
        raise CompileError(
            Reason.DEADLOCK, f"{stuck.task} ({stuck.agent}) waits for a placement that waits for it: reorder the cells"
        )
    moved = {old: new for new, old in enumerate(order)}
    return Program(
        tuple(actions[old] for old in order),
        tuple(tuple(sorted(moved[d] for d in deps[old])) for old in order),
        tuple(moved[h] for h in program.handoffs),  # paired with the plan's hand-over checks, in their order
    )


def _support(actions: list[Action], deps: list[tuple[int, ...]], steps: dict[str, dict[Cell, int]]) -> None:
    """Make each placement wait for the teammate's placement that gives it a face to go against.

    The supporter is the block under it, else the neighbour placed first: in the steps the
    builders' placements were put in (``runtime/interleave.py``), else in the site's build
    order (``worlds/placing.build_order``), which every agent's cells then follow.

    A cell beside a block its own agent placed earlier needs no wait (its actions run in
    order), even when a teammate's block comes earlier in the build order: a team building
    side by side then waits only where its parts meet, not down a chain of ceilings; a cell
    held up by another agent's block alone waits for that block. A commitment that
    lists each agent's cells in build order (the planner's) cannot deadlock: every wait points
    to a cell earlier in that order.

    A scaffolding block's breaking waits for every teammate's block beside it: the last face
    it gave. Its own agent breaks it at the end of the task, after its own placements.
    """
    by_site: dict[str, dict[Cell, int]] = {}
    for index, action in enumerate(actions):
        if isinstance(action, PlaceAt):
            cells = by_site.setdefault(action.site, {})
            cells[action.cell] = index
            if two_high(action.block):
                cells[offset(action.cell, (0, 1, 0))] = index
    for index, action in enumerate(actions):  # scaffolding comes down once every block beside it stands
        if isinstance(action, BreakAt):
            cells = by_site.get(action.site, {})
            beside = {cells[near] for face in NEIGHBOURS if (near := offset(action.cell, face)) in cells}
            deps[index] = tuple(sorted({*deps[index], *(i for i in beside if actions[i].agent != action.agent)}))
    for site, cells in by_site.items():
        blocks = {cell: actions[index].block for cell, index in cells.items()}  # type: ignore[union-attr]
        order = steps.get(site) or {cell: position for position, cell in enumerate(build_order(blocks, []))}
        for cell, index in cells.items():
            action = actions[index]
            assert isinstance(action, PlaceAt)
            if action.cell != cell or cell[1] == 0:
                continue
            faces = NEIGHBOURS[:1] if needs_floor(action.block) else NEIGHBOURS
            if any(
                (near := offset(cell, face)) in cells
                and cells[near] < index
                and actions[cells[near]].agent == action.agent
                and not needs_floor(blocks[near])
                for face in faces
            ):
                continue  # a block it placed itself, earlier, gives it a face: nothing to wait for
            earlier = [
                near
                for face in faces
                if (near := offset(cell, face)) in order and order[near] < order[cell] and not needs_floor(blocks[near])
            ]
            if not earlier:
                continue
            below = offset(cell, (0, -1, 0))
            chosen = below if below in earlier else min(earlier, key=lambda near: (order[near], near))
            helper = cells[chosen]
            if actions[helper].agent != action.agent:
                deps[index] = tuple(sorted({*deps[index], helper}))
