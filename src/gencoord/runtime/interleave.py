"""Each builder's placements put in the order in which it need not wait for a teammate: derived, by rule.

A commitment gives each builder a share of the blueprint, and the share's cells come in
the blueprint's one build order (``worlds/placing.build_order``). Side by side, a builder
that keeps that order strictly idles whenever its next cell rests on a teammate's block
the teammate has not placed yet, although cells of its own further on could go now: on
MINDcraft's 4-agent houses the builders idled about half of the build that way.

So the builders are stepped together, one placement each a step: at each step a builder
takes, of the next :data:`WINDOW` cells of its share, the first that a block placed at an
earlier step (anyone's) or the ground gives a face. The blueprint's globally first
cell not yet placed is always ready, so every step places something and no builder waits
for ever. The step each cell is placed at is the order the compiler's waits follow
(``runtime/compile.py``): a cell waits only for a block placed at an earlier step, so no
wait can close a circle. Every agent derives the same order from the same commitment.

The same turns give the one order of every builder's actions that the world applies and
the stands are planned in (:func:`merged_order`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from gencoord.dsl.cells import Cell
from gencoord.worlds.actions import Action, BreakAt, PlaceAt, Program
from gencoord.worlds.placing import NEIGHBOURS, needs_floor, offset, supported, two_high
from gencoord.worlds.spec import WorldSpec

WINDOW = 32
"""How far ahead in its share a builder looks for a cell it can place now (its walk stays local)."""


def interleave(actions: list[Action]) -> dict[str, dict[Cell, int]]:
    """Reorder, in place, each build task's placements into the steps above; per site, each cell's step.

    A site where some agent has more than one build task keeps the build order, and so does
    one whose shares do not follow it (a per-cell list in another order): the steps assume
    one share a builder, each in build order.
    """
    slots: dict[str, dict[str, list[int]]] = {}  # site → task → the indices of its placements
    for index, action in enumerate(actions):
        if isinstance(action, PlaceAt):
            slots.setdefault(action.site, {}).setdefault(action.task, []).append(index)
    steps: dict[str, dict[Cell, int]] = {}
    for site, by_task in slots.items():
        agents = [actions[indices[0]].agent for indices in by_task.values()]
        stepped = _step(actions, by_task) if len(set(agents)) == len(agents) else None
        if stepped is not None:
            steps[site] = stepped
    return steps


def _step(actions: list[Action], by_task: dict[str, list[int]]) -> dict[Cell, int] | None:
    pending = {task: [actions[i] for i in indices] for task, indices in by_task.items()}
    taken: dict[str, list[PlaceAt]] = {task: [] for task in by_task}
    standing: dict[Cell, str] = {}
    step_of: dict[Cell, int] = {}
    step = 0
    while any(pending.values()):
        placed: list[PlaceAt] = []
        for task in sorted(pending, key=lambda task: actions[by_task[task][0]].agent):
            queue = pending[task]
            for position, action in enumerate(queue[:WINDOW]):
                assert isinstance(action, PlaceAt)
                if supported(action.cell, action.block, standing):
                    placed.append(action)
                    taken[task].append(action)
                    del queue[position]
                    break
        if not placed:  # a share out of build order: it keeps its order
            return None
        for action in placed:
            standing[action.cell] = action.block
            step_of.setdefault(action.cell, step)
            if two_high(action.block):
                standing[offset(action.cell, (0, 1, 0))] = action.block
        step += 1
    for task, indices in by_task.items():
        for index, action in zip(indices, taken[task], strict=True):
            actions[index] = action
    return step_of


def merged_order(program: Program, world: WorldSpec) -> list[int]:
    """A valid order of the program's actions: the builders' placements in turn, each builder's k-th before any k+1-th.

    It is the order the world applies them in and ``runtime/stands.py`` plans every stand and
    walk in. Builders act side by side, so it follows the order they act in on the clock, the
    order the support waits were derived in (one placement a builder a step, above). The
    blueprint's own order would put a fast builder's upper levels after everyone's lower ones,
    and the waits that keep the plan true on the real clock (``runtime/real_clock.py``) would
    then hold it back to the slowest builder's pace: on MINDcraft's 4-agent houses that cost
    about a tenth of the makespan. Each agent's own order and every wait are kept; a
    scaffolding block's breaking comes after the last block beside it that needed its face.
    """
    actions, deps = program.actions, program.deps
    key: dict[int, int] = {}
    turns: dict[tuple[str, str], int] = {}
    turn_of: dict[tuple[str, Cell], int] = {}  # (site, cell) → the turn of the placement that fills it
    for index, action in enumerate(actions):
        if isinstance(action, PlaceAt | BreakAt) and action.site in world.builds:
            turn = turns[(action.agent, action.site)] = turns.get((action.agent, action.site), 0) + 1
            key[index] = turn
            if isinstance(action, PlaceAt) and not needs_floor(action.block):
                turn_of[(action.site, action.cell)] = turn
    for index, action in enumerate(actions):
        if isinstance(action, BreakAt) and index in key:
            beside = (turn_of.get((action.site, offset(action.cell, face)), 0) for face in NEIGHBOURS)
            key[index] = max(key[index], *beside)
    order = dependency_order(actions, deps, lambda index: (key.get(index, -1), index))
    return order if len(order) == len(actions) else list(range(len(actions)))


def dependency_order(
    actions: Sequence[Action], deps: Sequence[tuple[int, ...]], key: Callable[[int], tuple[int, ...]]
) -> list[int]:
    """The actions' indices with each after its agent's previous action and after what it waits for, the least
    ``key`` first among those ready; shorter than ``actions`` when some wait can never end (a circle)."""
    waiting: list[set[int]] = []
    previous: dict[str, int] = {}
    for index, action in enumerate(actions):
        before = set(deps[index])
        if action.agent in previous:
            before.add(previous[action.agent])
        previous[action.agent] = index
        waiting.append(before)
    followers: dict[int, list[int]] = {}
    for index, before in enumerate(waiting):
        for earlier in before:
            followers.setdefault(earlier, []).append(index)
    ready = [(key(index), index) for index, before in enumerate(waiting) if not before]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, index = heapq.heappop(ready)
        order.append(index)
        for after in followers.get(index, []):
            waiting[after].discard(index)
            if not waiting[after]:
                heapq.heappush(ready, (key(after), after))
    return order
