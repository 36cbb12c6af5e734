"""A world that runs with the simulator alongside it, action for action.

Real Minecraft decides what happened; the simulator is given the same reset, actions and
changes, and each action on which the two disagree is written down with both outcomes.
That is how a run on Minecraft says whether the simulator would have told the same story,
and it is also what counterfactual rollouts (the gate's oracle) copy: a rollout cannot
replay a real server, so ``copy.deepcopy`` of a mirrored world is its simulator.
"""

from __future__ import annotations

import copy
from typing import Any

from gencoord.reasons import Reason
from gencoord.worlds.actions import Program
from gencoord.worlds.changes import Changeable, WorldChange
from gencoord.worlds.executor import ActionRecord, Executor, HandoffHook, WorldSnapshot
from gencoord.worlds.sim import SimExecutor
from gencoord.worlds.spec import WorldSpec

# Failure codes that depend on the clock: real seconds are not simulated ones.
CLOCK_CODES = frozenset(
    {Reason.STATION_BUSY, Reason.PATH_TIMEOUT, Reason.HANDOFF_NOT_RECEIVED, Reason.DROP_NOT_COLLECTED}
)


def _outcome(record: ActionRecord | None) -> str:
    if record is None:
        return "did not run"
    return "ok" if record.failure is None else record.failure.code


def _detail(record: ActionRecord | None) -> str:
    """What the failing world said, so a disagreement in a record can be understood later."""
    return f" ({record.failure.message})" if record is not None and record.failure is not None else ""


class MirroredExecutor:
    """``primary`` acts and is believed; ``shadow`` (a simulator) follows and is compared."""

    def __init__(self, primary: Executor, shadow: SimExecutor) -> None:
        self.primary = primary
        self.shadow = shadow
        self.name = primary.name
        self.disagreements: list[str] = []
        self._actions = 0

    def reset(self, world: WorldSpec) -> WorldSnapshot:
        self.disagreements = []
        self._actions = 0
        self.shadow.reset(world)
        return self.primary.reset(world)

    def run(self, program: Program, start: int, stop: int, on_handoff: HandoffHook | None = None) -> list[ActionRecord]:
        records = self.primary.run(program, start, stop, on_handoff)
        simulated = {record.index: record for record in self.shadow.run(program, start, stop)}
        real = {record.index: record for record in records}
        for index in range(start, stop):
            said, thought = _outcome(real.get(index)), _outcome(simulated.get(index))
            if said != thought:
                action = program.actions[index]
                why = (
                    " (stations and pick-ups keep real time, the simulator its own)"
                    if {said, thought} & CLOCK_CODES
                    else ""
                )
                self.disagreements.append(
                    f"action {self._actions + index - start + 1} ({action.agent} {action.name}): "
                    f"{self.primary.name} {said}{_detail(real.get(index))}, "
                    f"simulator {thought}{_detail(simulated.get(index))}{why}"
                )
        self._actions += stop - start
        return records

    def snapshot(self) -> WorldSnapshot:
        return self.primary.snapshot()

    def change(self, change: WorldChange) -> None:
        if not isinstance(self.primary, Changeable):
            raise TypeError(f"the {self.primary.name} world cannot change mid-run")
        self.primary.change(change)
        self.shadow.change(change)

    def close(self) -> None:
        self.shadow.close()  # the primary is the caller's: a warm world outlives one episode

    def __deepcopy__(self, memo: dict[int, Any]) -> SimExecutor:
        return copy.deepcopy(self.shadow, memo)
