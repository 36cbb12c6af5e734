"""The single-step horizon in the world: the sender's first step runs before its second decision.

The paper's single-step controller commits one step, carries it out, and decides the rest
at the state that step leaves. Here the step really runs in the episode's world (the
simulator or Minecraft): the world is reset, the step is compiled and executed, and the
sender's view is what the world then shows. Once the rest is committed, the resolved
path's first task is that step; execution goes on from the world as it stands without
running it twice, and the episode's records hold both parts, indexed in the full program.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from gencoord.dsl.ast import Task
from gencoord.errors import CompileError
from gencoord.prior.prior import Prior
from gencoord.protocol.commitment import task_id
from gencoord.protocol.plan import DispatchPlan, PlannedTask
from gencoord.reasons import Reason
from gencoord.run.execution import run_observed
from gencoord.runtime.compile import compile_plan, compile_task
from gencoord.runtime.materialize import place_of
from gencoord.runtime.verify import Execution, HandoffObservation, observe_handoff
from gencoord.tasks.context import LocalContext
from gencoord.tasks.instances import EpisodeSpec
from gencoord.worlds.actions import Program
from gencoord.worlds.executor import ActionRecord, Executor, WorldSnapshot


@dataclass
class FirstStep:
    """The step a single-step sender committed first, carried out in the world."""

    spec: EpisodeSpec
    executor: Executor
    prior: Prior
    initial: WorldSnapshot | None = None
    ident: str | None = None  # its task id in the resolved commitment (the sender's first task)
    records: list[ActionRecord] = field(default_factory=list)
    around: tuple[WorldSnapshot, WorldSnapshot] | None = None  # the world before and after, for a hand-over's H
    error: CompileError | None = None
    seconds: float = 0.0  # world time spent on the step (not protocol time)

    def advancer(self, contexts: dict[str, LocalContext]) -> Callable[[str, Task], None]:
        def advance(agent: str, step: Task) -> None:
            started = time.perf_counter()
            try:
                self._carry_out(agent, step, contexts)
            finally:
                self.seconds += time.perf_counter() - started

        return advance

    def _carry_out(self, agent: str, step: Task, contexts: dict[str, LocalContext]) -> None:
        spec, prior = self.spec, self.prior
        self.initial = self.executor.reset(spec.world)
        self.ident = task_id((agent, 0))
        planned = PlannedTask(self.ident, agent, step.skill, step.args, place_of(step, prior, spec.public), ())
        try:
            actions = compile_task(planned, spec.world, prior.game)
        except CompileError as error:  # the world cannot run this step: the episode fails there
            self.error = error
            return
        before = self.executor.snapshot()
        self.records = self.executor.run(Program(actions, tuple(() for _ in actions), ()), 0, len(actions))
        after = self.executor.snapshot()
        self.around = (before, after)
        contexts[agent] = replace(contexts[agent], inventory=dict(after.inventories.get(agent, {})))

    def finish(self, plan: DispatchPlan) -> Execution:
        """Run the rest of the resolved plan from where the step left the world."""
        if self.error is not None:
            raise self.error
        assert self.initial is not None and self.around is not None, "the first step was never carried out"
        program = compile_plan(plan, self.spec.world, self.prior.game)
        done = [i for i, action in enumerate(program.actions) if action.task == self.ident]
        prefix = tuple(replace(r, index=done[n] if n < len(done) else r.index) for n, r in enumerate(self.records))
        if not all(record.ok for record in self.records):  # the step failed in the world: execution ends there
            return Execution(program, prefix, (), self.initial, self.executor.snapshot())
        if [program.actions[i] for i in done] != [record.action for record in self.records]:
            raise CompileError(
                Reason.STEP_MISMATCH, f"{self.ident} compiles to other actions than the step carried out"
            )
        kept = [i for i in range(len(program.actions)) if i not in set(done)]
        position = {index: n for n, index in enumerate(kept)}
        checks = list(zip(plan.handoffs, program.handoffs, strict=True))
        first = {
            check.producer: observe_handoff(check, self.around[0].inventories, self.around[1].inventories)
            for check, index in checks
            if index in done
        }
        if not all(seen.verified for seen in first.values()):
            return Execution(program, prefix, _ordered(plan, first, []), self.initial, self.executor.snapshot())
        rest = Program(
            tuple(program.actions[i] for i in kept),
            tuple(tuple(position[d] for d in program.deps[i] if d in position) for i in kept),
            tuple(position[index] for _, index in checks if index in position),
        )
        spans = [(check, position[index]) for check, index in checks if index in position]
        records, observed = run_observed(spans, rest, self.executor)
        remapped = tuple(replace(record, index=kept[record.index]) for record in records)
        handoffs = _ordered(plan, first, observed)
        return Execution(program, prefix + remapped, handoffs, self.initial, self.executor.snapshot())


def _ordered(
    plan: DispatchPlan, first: dict[str, HandoffObservation], rest: list[HandoffObservation]
) -> tuple[HandoffObservation, ...]:
    """The observations in the plan's hand-over order (the step's own first, where it made one)."""
    by_producer = {seen.check.producer: seen for seen in rest} | first
    return tuple(by_producer[check.producer] for check in plan.handoffs if check.producer in by_producer)
