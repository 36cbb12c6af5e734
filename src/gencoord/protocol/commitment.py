"""The resolved commitment C = ({S_i}, b, {h}, P_C): role paths, hand-over edges and their merged DAG.

The paper's commitment joins two agents by one hand-over; a team commitment joins any
number of agents by any number of hand-overs (none when one agent does the task alone).
"""

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
    """A cross-agent edge: ``giver`` hands ``quantity`` × ``item`` to ``receiver``.

    ``consumer`` is the receiver's first task that uses the item; None when the items
    are the point of the hand-over (the goal delivered to the agent who must hold it).
    """

    giver: str
    receiver: str
    item: str
    quantity: int
    producer: TaskRef
    consumer: TaskRef | None


@dataclass(frozen=True, slots=True)
class Commitment:
    """Resolved role-local obligations; proposals and responses stay in the trace."""

    direction: Literal["forward", "feedback"]
    paths: tuple[RolePath, ...]
    binding: str | None
    handoffs: tuple[Handoff, ...]
    edges: tuple[tuple[TaskRef, TaskRef], ...]
    order: tuple[TaskRef, ...]

    def task(self, ref: TaskRef) -> Task:
        return self.path_of(ref[0]).tasks[ref[1]]

    def path_of(self, agent: str) -> RolePath:
        return next(path for path in self.paths if path.agent == agent)
