"""Running a compiled plan with the hand-over check H taken the moment each hand-over lands.

The paper's runtime stops when H fails, so T is never reached; an action that fails stops
the run the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from gencoord.protocol.plan import DispatchPlan, HandoffCheck
from gencoord.runtime.verify import Execution, HandoffObservation, observe_handoff
from gencoord.worlds.actions import Program
from gencoord.worlds.executor import ActionRecord, Executor
from gencoord.worlds.spec import WorldSpec


def run_spans(
    checks: Sequence[tuple[HandoffCheck, int]], program: Program, executor: Executor
) -> tuple[list[ActionRecord], list[HandoffObservation]]:
    """Run ``program`` from the world as it stands, in spans around each (check, action index) hand-over."""
    records: list[ActionRecord] = []
    observed: list[HandoffObservation] = []
    cursor = 0
    for check, index in checks:
        records += executor.run(program, cursor, index)
        if not all(r.ok for r in records):
            return records, observed
        before = executor.snapshot()
        records += executor.run(program, index, index + 1)
        if not records[-1].ok:
            return records, observed
        observed.append(observe_handoff(check, before, executor.snapshot()))
        cursor = index + 1
        if not observed[-1].verified:
            return records, observed
    records += executor.run(program, cursor, len(program.actions))
    return records, observed


def run_checked(plan: DispatchPlan, program: Program, world: WorldSpec, executor: Executor) -> Execution:
    """Reset the world and run ``program``, checking H the moment each hand-over lands."""
    initial = executor.reset(world)
    records, observed = run_spans(tuple(zip(plan.handoffs, program.handoffs, strict=True)), program, executor)
    return Execution(program, tuple(records), tuple(observed), initial, executor.snapshot())
