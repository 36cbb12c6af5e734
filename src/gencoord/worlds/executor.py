"""The Executor protocol that the simulator and the Mineflayer world both implement.

Modelled on Gymnasium's small surface: ``reset`` to a world spec, ``run`` a span of a
compiled program, read ground truth with ``snapshot``. An executor never raises for
a failed action: the failure is a record with a stable code, and the run stops there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from gencoord.dsl.cells import Cell
from gencoord.errors import CallOrderError
from gencoord.reasons import Reason
from gencoord.worlds.actions import Action, Program
from gencoord.worlds.spec import Position, WorldSpec

Items = dict[str, int]


@dataclass(frozen=True, slots=True)
class ActionFailure:
    """Why an action did not happen. ``code`` is stable; ``message`` names the numbers."""

    code: str
    message: str
    retry_after_s: float | None = None  # when waiting is the remedy (a busy station): how long


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """One action as the world ran it: when, whether it failed and why, and the bags after it (what H and F judge)."""

    index: int
    action: Action
    start_s: float
    end_s: float
    failure: ActionFailure | None
    inventories: Mapping[str, Items]  # the actor's (and a receiver's) inventory after the action

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True)
class WorldSnapshot:
    """Ground truth read from the world: what verifiers judge, never what agents see."""

    clock_s: float
    positions: Mapping[str, Position]
    inventories: Mapping[str, Items]
    containers: Mapping[str, Items]
    sites: Mapping[str, Items]
    credits: Mapping[str, Mapping[str, Items]] = field(default_factory=dict)  # holder → agent → items added
    crafted: Mapping[str, Items] = field(default_factory=dict)  # agent → items it crafted
    discrepancies: tuple[str, ...] = ()  # where the agents' view and the world's ground truth disagree
    blocks: Mapping[str, Mapping[Cell, str]] = field(default_factory=dict)  # build site → offset → block standing


HandoffHook = Callable[[int, Mapping[str, Items], Mapping[str, Items], int | None], bool]
"""Judges a hand-over the moment it ends: (action index, every agent's inventory just before
the action, just after, what this hand-over itself put in the receiver's bag) → whether it
counts. The last is the world's own attribution (None where a world cannot tell, and then the
receiver's counts decide): while other deliveries of the same item land at the same receiver,
the counts include theirs. A hand-over judged False stops its dependants as a failed action does."""


class Cascade:
    """Which actions of one ``run`` a failure stops, the same in every executor.

    Each agent works through its own actions in program order, and agents work at once:
    an action waits for its agent's previous action in the span and for every action it
    depends on inside the span (earlier spans have already finished). A failed action, or
    a hand-over the hook rejects, stops what waits on it, transitively: the same agent's
    later actions and every action depending on one that stopped. Independent work goes
    on, so which actions run does not depend on how fast the world is.
    """

    def __init__(self, program: Program, start: int, stop: int) -> None:
        self.span = range(start, stop)
        self.waits_on: dict[int, tuple[int, ...]] = {}
        last: dict[str, int] = {}
        for index in self.span:
            agent = program.actions[index].agent
            inside = tuple(d for d in program.deps[index] if start <= d < index)
            previous = last.get(agent)
            self.waits_on[index] = inside if previous is None else (previous, *inside)
            last[agent] = index
        self.stopped: set[int] = set()

    def cancelled(self, index: int) -> bool:
        """Whether ``index`` must not run (ask once everything it waits on has finished or stopped)."""
        if any(waited in self.stopped for waited in self.waits_on[index]):
            self.stopped.add(index)
            return True
        return False

    def stop(self, index: int) -> None:
        """``index`` failed, or its hand-over was rejected: what waits on it will not run."""
        self.stopped.add(index)


class Executor(Protocol):
    """A world that runs compiled programs: the simulator, Minecraft, or yours (``check_executor`` tests it)."""

    name: str

    def reset(self, world: WorldSpec) -> WorldSnapshot: ...

    def run(self, program: Program, start: int, stop: int, on_handoff: HandoffHook | None = None) -> list[ActionRecord]:
        """Execute ``program.actions[start:stop]`` with agents working at once, as :class:`Cascade`
        says: a failure stops its dependants and independent work goes on. ``on_handoff`` judges
        each action of ``program.handoffs`` that ran, failed ones too (a lost stack is a hand-over
        that did not verify). Records come in program order; an action that never ran has none."""
        ...

    def snapshot(self) -> WorldSnapshot: ...

    def close(self) -> None: ...


class OrderEnforcing:
    """The one guard every world gets from the factory: ``run``, ``snapshot`` and ``change`` need ``reset``.

    Misuse is a typed :class:`CallOrderError` naming the call, as Gymnasium's order-enforcing
    wrapper does, rather than whatever breaks deep inside; after ``close`` the world needs
    ``reset`` again. ``executor_for`` wraps every executor a world makes, so a world's own
    executor need not remember the order. Everything else reads through to the executor.
    """

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.name = executor.name
        self._ready = False

    def _require(self, operation: str) -> None:
        if not self._ready:
            raise CallOrderError(
                Reason.NOT_RESET, f"{self.name} executor: {operation}() before reset(); call reset(world) first"
            )

    def reset(self, world: WorldSpec) -> WorldSnapshot:
        snapshot = self.executor.reset(world)
        self._ready = True
        return snapshot

    def run(self, program: Program, start: int, stop: int, on_handoff: HandoffHook | None = None) -> list[ActionRecord]:
        self._require("run")
        return self.executor.run(program, start, stop, on_handoff)

    def snapshot(self) -> WorldSnapshot:
        self._require("snapshot")
        return self.executor.snapshot()

    def close(self) -> None:
        self._ready = False
        self.executor.close()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.executor, name)
        if name != "change":
            return found

        def change(change: Any) -> None:  # a world that takes changes takes them once reset
            self._require("change")
            found(change)

        return change
