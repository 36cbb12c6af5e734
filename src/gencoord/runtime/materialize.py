"""Materialize(C, K, xi_pub) → DispatchPlan, and the post-materialization consistency check.

The materializer instantiates what the commitment leaves implicit: task-instance ids,
where each task happens (crafting happens at the episode's crafting station, its
workcell; without one only a 2x2 recipe can be crafted in the inventory grid), the
predecessor lists, and the checker attachments (a check H per hand-over, terminal predicate T).
A station the episode only marks as a spot (``unplaced``: a held crafting table goes there)
is used only by the tasks that name it, after the task that places it.
"""

from __future__ import annotations

from gencoord.dsl.ast import Task
from gencoord.dsl.cells import block_counts, is_temporary, parse_cells, parse_share, share_counts
from gencoord.errors import MaterializationError
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.commitment import Commitment, TaskRef, task_id
from gencoord.protocol.plan import Conjunct, DispatchPlan, HandoffCheck, Place, PlannedTask
from gencoord.reasons import Reason

_PLACE_KEYS = ("dst", "site", "station", "loc")


def place_of(task: Task, prior: Prior, episode: PublicEpisode) -> Place | None:
    for key in _PLACE_KEYS:
        value = task.get(key)
        if value is not None:
            if str(value) not in episode.refs:
                raise MaterializationError(Reason.REF_NOT_INSTANTIATED, f"{value!r} does not exist in this episode")
            return Place("ref", str(value))
    if task.has("to"):
        return Place("agent", str(task.get("to")))
    spec = prior.skills[task.skill]
    if spec.consumes == "recipe" and spec.station_block is not None:
        material = task.get("input")
        recipe = prior.game.recipe(str(task.get("item")), None if material is None else str(material))
        station = episode.station_for(spec.station_block)
        if station is not None and station not in episode.unplaced:  # the workcell: crafting happens there
            return Place("ref", station)
        if recipe is not None and recipe.grid > 2:
            raise MaterializationError(
                Reason.NO_STATION, f"{task.get('item')} needs a 3x3 grid and this episode has no {spec.station_block}"
            )
    return None


def observable_effect(
    task: Task, actor: str, ident: str, prior: Prior, episode: PublicEpisode | None = None
) -> Conjunct | None:
    """What the world shows once ``task`` ran (T checks it for a final task); None when nothing observable.

    A delivery to a site places its blocks there (the compiler does), so the site shows
    them, not a container; ``episode`` says which refs are sites (the prior's default
    episode when not given).
    """
    item, quantity = task.get("item"), task.get("q")
    if not isinstance(item, str) or not isinstance(quantity, int):
        return None
    if task.has("dst"):
        dst = str(task.get("dst"))
        kind = (episode or prior.default_episode).ref_kind(dst)
        return Conjunct("site_has" if kind == "site" else "container_contains", dst, item, quantity, ident)
    if task.has("site"):
        return Conjunct("site_has", str(task.get("site")), item, quantity, ident)
    if task.has("to"):
        return Conjunct("inventory_contains", str(task.get("to")), item, quantity, ident)
    if prior.skills[task.skill].produces is not None:
        return Conjunct("inventory_contains", actor, item, quantity, ident)
    return None


def _built(task: Task, ident: str) -> list[Conjunct]:
    """A build task's effect: its site holds the blocks it places (the blueprint check judges each cell).

    Scaffolding is left out: the task breaks it again, so it is no effect.
    """
    cells, share, site = task.get("cells"), task.get("share"), task.get("site")
    if site is None:
        return []
    if isinstance(cells, str):
        counts = block_counts((block, cell) for block, cell in parse_cells(cells) if not is_temporary(block))
    elif isinstance(share, str):
        counts = share_counts(item for item in parse_share(share) if not is_temporary(item[0]))
    else:
        return []
    return [Conjunct("site_has", str(site), block, count, ident) for block, count in sorted(counts.items())]


def materialize(commitment: Commitment, prior: Prior, episode: PublicEpisode) -> DispatchPlan:
    preds: dict[TaskRef, list[str]] = {ref: [] for ref in commitment.order}
    successors: set[TaskRef] = set()
    for before, after in commitment.edges:
        preds[after].append(task_id(before))
        successors.add(before)
    tasks: list[PlannedTask] = []
    terminal: list[Conjunct] = []
    for ref in commitment.order:
        task, ident = commitment.task(ref), task_id(ref)
        tasks.append(
            PlannedTask(ident, ref[0], task.skill, task.args, place_of(task, prior, episode), tuple(preds[ref]))
        )
        if ref not in successors:
            condition = observable_effect(task, ref[0], ident, prior, episode)
            if condition is not None:
                terminal.append(condition)
            terminal += _built(task, ident)
    if not terminal:
        raise MaterializationError(Reason.NO_TERMINAL, "no final task has an observable effect to verify")
    position = {ref: index for index, ref in enumerate(commitment.order)}
    checks = tuple(
        HandoffCheck(
            task_id(handoff.producer),
            None if handoff.consumer is None else task_id(handoff.consumer),
            handoff.giver,
            handoff.receiver,
            handoff.item,
            handoff.quantity,
        )
        for handoff in sorted(commitment.handoffs, key=lambda handoff: position[handoff.producer])
    )
    plan = DispatchPlan(commitment.binding, tuple(tasks), checks, tuple(terminal))
    check_plan(plan, commitment)
    return plan


def check_plan(plan: DispatchPlan, commitment: Commitment) -> None:
    """Static plan consistency (Table S8): actors, fields, handoff edge and checkers match C."""
    expected = {task_id(ref): (ref[0], commitment.task(ref)) for ref in commitment.order}
    if len(plan.tasks) != len(expected) or {t.id for t in plan.tasks} != set(expected):
        raise MaterializationError(Reason.PLAN_INCONSISTENT, "the plan's tasks are not the commitment's tasks")
    seen: set[str] = set()
    for planned in plan.tasks:
        actor, task = expected[planned.id]
        if planned.actor != actor or planned.skill != task.skill or planned.args != task.args:
            raise MaterializationError(Reason.PLAN_INCONSISTENT, f"{planned.id} differs from the committed task")
        if not set(planned.preds) <= seen:
            raise MaterializationError(Reason.PLAN_INCONSISTENT, f"{planned.id} is dispatched before its predecessors")
        seen.add(planned.id)
    for check in plan.handoffs:
        if check.consumer is not None and check.producer not in plan.task(check.consumer).preds:
            raise MaterializationError(
                Reason.PLAN_INCONSISTENT, f"the handoff edge {check.producer} → {check.consumer} is missing"
            )
    if any(condition.task not in expected for condition in plan.terminal):
        raise MaterializationError(Reason.PLAN_INCONSISTENT, "a terminal checker is attached to an unknown task")
