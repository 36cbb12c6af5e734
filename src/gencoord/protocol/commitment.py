"""The resolved commitment C = (S_i, S_j, b, P_C) and its handoff edge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gencoord.dsl.ast import Path, Task

TaskRef = tuple[str, int]
"""A task of a commitment: (actor, 0-based index in that actor's path)."""


def task_id(ref: TaskRef) -> str:
    """The task-instance id shown to people and used in dispatch plans: ``agent_b#1``."""
    return f"{ref[0]}#{ref[1] + 1}"


@dataclass(frozen=True, slots=True)
class RolePath:
    """One actor's normalized, actorized path (every task's actor is ``agent``)."""

    agent: str
    tasks: Path


@dataclass(frozen=True, slots=True)
class Handoff:
    """The cross-agent edge: ``giver`` hands ``quantity`` × ``item`` to ``receiver``."""

    giver: str
    receiver: str
    item: str
    quantity: int
    producer: TaskRef
    consumer: TaskRef


@dataclass(frozen=True, slots=True)
class Commitment:
    """Resolved role-local obligations; proposals and responses stay in the trace."""

    direction: Literal["forward", "feedback"]
    paths: tuple[RolePath, ...]
    binding: str | None
    handoff: Handoff
    edges: tuple[tuple[TaskRef, TaskRef], ...]
    order: tuple[TaskRef, ...]

    def task(self, ref: TaskRef) -> Task:
        return self.path_of(ref[0]).tasks[ref[1]]

    def path_of(self, agent: str) -> RolePath:
        return next(path for path in self.paths if path.agent == agent)
