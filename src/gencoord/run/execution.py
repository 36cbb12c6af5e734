"""Running a compiled plan with the hand-over check H taken the moment each hand-over lands.

Agents work at once (``worlds.executor.Cascade``). A hand-over that fails H stops what
waits on it, as a failed action does, so its consumer never starts on items that did
not arrive; work that does not depend on it goes on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gencoord.protocol.plan import DispatchPlan, HandoffCheck
from gencoord.runtime.verify import Execution, HandoffObservation, observe_handoff
from gencoord.worlds.actions import GiveItem, Program
from gencoord.worlds.executor import ActionRecord, Executor, Items
from gencoord.worlds.spec import WorldSpec


def run_observed(
    checks: Sequence[tuple[HandoffCheck, int]], program: Program, executor: Executor
) -> tuple[list[ActionRecord], list[HandoffObservation]]:
    """Run ``program`` from the world as it stands, judging each (check, action index) hand-over as it lands."""
    check_at = {index: check for check, index in checks}
    seen: dict[int, HandoffObservation] = {}

    def judge(index: int, before: Mapping[str, Items], after: Mapping[str, Items], delivered: int | None) -> bool:
        check = check_at.get(index)
        if check is None:
            return True
        action = program.actions[index]
        if delivered is not None and not (isinstance(action, GiveItem) and action.item == check.item):
            delivered = 0  # the world credits what was thrown; a stack of another item is none of this hand-over's
        seen[index] = observe_handoff(check, before, after, delivered)
        return seen[index].verified

    records = executor.run(program, 0, len(program.actions), judge)
    return records, [seen[index] for _, index in checks if index in seen]


def run_checked(plan: DispatchPlan, program: Program, world: WorldSpec, executor: Executor) -> Execution:
    """Reset the world and run ``program``, checking H the moment each hand-over lands."""
    initial = executor.reset(world)
    records, observed = run_observed(tuple(zip(plan.handoffs, program.handoffs, strict=True)), program, executor)
    return Execution(program, tuple(records), tuple(observed), initial, executor.snapshot())
