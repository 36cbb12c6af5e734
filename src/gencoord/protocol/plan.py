"""The dispatch plan: what the compiler and executors consume, and what verify checks against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gencoord.dsl.ast import Args


@dataclass(frozen=True, slots=True)
class Place:
    """Where a task happens: a grounding reference, or next to an agent (for a handoff)."""

    kind: Literal["ref", "agent"]
    name: str


@dataclass(frozen=True, slots=True)
class PlannedTask:
    id: str
    actor: str
    skill: str
    args: Args
    place: Place | None  # None: wherever the actor stands (e.g. 2x2 crafting, gathering)
    preds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HandoffCheck:
    """H: after ``producer`` runs, ``receiver``'s inventory has gained ``quantity`` × ``item``."""

    producer: str
    consumer: str | None
    giver: str
    receiver: str
    item: str
    quantity: int


@dataclass(frozen=True, slots=True)
class Conjunct:
    """One conjunct of the declared terminal predicate T."""

    kind: Literal["container_contains", "site_has", "inventory_contains"]
    holder: str  # a container or site ref, or an agent
    item: str
    quantity: int
    task: str  # the plan task whose effect this is


@dataclass(frozen=True, slots=True)
class DispatchPlan:
    binding: str | None
    tasks: tuple[PlannedTask, ...]  # in a topological order of the merged DAG
    handoffs: tuple[HandoffCheck, ...]  # in dispatch order; H runs after each
    terminal: tuple[Conjunct, ...]

    def task(self, task_id: str) -> PlannedTask:
        return next(task for task in self.tasks if task.id == task_id)
