"""Verify(ω) → Outcome: the v2 paper's stage checks C/H/T/F/G, judged on world state.

C: a commitment formed. H: right after the handoff action the recipient's inventory
gained the intended item and quantity. T: the plan's declared terminal predicate holds
at the end. F: the delivered commitment was discharged (executed through, H and T).
G: the *original task* holds, judged against the task's own goal, never against the
commitment, so a fulfilled commitment to the wrong branch still fails G. A stage
that is not reached is None (the paper's dash).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from gencoord.errors import FailureCode
from gencoord.protocol.plan import Conjunct, DispatchPlan, HandoffCheck
from gencoord.worlds.actions import Program
from gencoord.worlds.executor import ActionRecord, WorldSnapshot

Kind = Literal["container_contains", "site_has", "inventory_contains", "crafted"]


@dataclass(frozen=True, slots=True)
class Requirement:
    """One conjunct of an original task's goal. ``by``: the agent that must have put it there."""

    kind: Kind
    holder: str
    item: str
    quantity: int
    by: str | None = None

    def describe(self) -> str:
        where = {
            "container_contains": "in",
            "site_has": "at",
            "inventory_contains": "held by",
            "crafted": "crafted by",
        }[self.kind]
        by = f" (by {self.by})" if self.by else ""
        return f"{self.quantity} {self.item} {where} {self.holder}{by}"


def amount(snapshot: WorldSnapshot, kind: Kind, holder: str, item: str, by: str | None = None) -> int:
    if by is not None:
        return snapshot.credits.get(holder, {}).get(by, {}).get(item, 0)
    tables = {"container_contains": snapshot.containers, "site_has": snapshot.sites, "crafted": snapshot.crafted}
    table = tables.get(kind, snapshot.inventories)
    return table.get(holder, {}).get(item, 0)


def unmet(requirements: Iterable[Requirement | Conjunct], snapshot: WorldSnapshot) -> list[str]:
    """Descriptions of the requirements the world does not satisfy (empty: all hold)."""
    missing: list[str] = []
    for need in requirements:
        by = need.by if isinstance(need, Requirement) else None
        have = amount(snapshot, need.kind, need.holder, need.item, by)
        if have < need.quantity:
            missing.append(f"{need.holder} has {have} {need.item}, needs {need.quantity}")
    return missing


@dataclass(frozen=True, slots=True)
class HandoffObservation:
    """Inventories of the handoff item around the handoff action (Table S9's "8→0, 0→8")."""

    check: HandoffCheck
    giver_before: int
    giver_after: int
    receiver_before: int
    receiver_after: int
    delivered: int | None = None  # what this hand-over itself put in the receiver's bag, as the world credits it

    @property
    def received(self) -> int:
        """This hand-over's items in the receiver's bag: the world's attribution, else the count's change."""
        return self.receiver_after - self.receiver_before if self.delivered is None else self.delivered

    @property
    def verified(self) -> bool:
        return self.received >= self.check.quantity

    def describe(self) -> str:
        c = self.check
        own = "" if self.delivered is None else f", {self.delivered} of them from this hand-over"
        return (
            f"{c.giver} {c.item} {self.giver_before}→{self.giver_after}, "
            f"{c.receiver} {self.receiver_before}→{self.receiver_after}{own} (expected +{c.quantity})"
        )


def observe_handoff(
    check: HandoffCheck,
    before: Mapping[str, Mapping[str, int]],
    after: Mapping[str, Mapping[str, int]],
    delivered: int | None = None,
) -> HandoffObservation:
    """H from every agent's inventory just before and just after the hand-over action, and, where
    the world attributes pickups to their throws, from what this hand-over itself delivered."""

    def held(inventories: Mapping[str, Mapping[str, int]], agent: str) -> int:
        return inventories.get(agent, {}).get(check.item, 0)

    return HandoffObservation(
        check,
        held(before, check.giver),
        held(after, check.giver),
        held(before, check.receiver),
        held(after, check.receiver),
        delivered,
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    formed: bool  # C
    handoff: bool | None  # H
    terminal: bool | None  # T
    fulfilled: bool | None  # F
    success: bool  # G
    failure: FailureCode | None = None
    reason: str | None = None
    message: str | None = None
    duration_s: float | None = None

    def within(self, seconds: float, commit_s: float = 0.0) -> bool:
        """Deadline success V(seconds), as the paper counts it: the original task succeeded and
        time-to-commitment (``commit_s``) plus execution time is at most ``seconds``."""
        return self.success and self.duration_s is not None and commit_s + self.duration_s <= seconds

    @property
    def stages(self) -> dict[str, bool | None]:
        return {"C": self.formed, "H": self.handoff, "T": self.terminal, "F": self.fulfilled, "G": self.success}


def not_formed(failure: FailureCode | None, reason: str, message: str) -> Outcome:
    """No commitment (a stage failure or a REJECT): nothing executes, so G cannot hold."""
    return Outcome(False, None, None, None, False, failure, reason, message)


@dataclass(frozen=True)
class Execution:
    """What happened in the world: the program, one record per action run, the hand-over checks."""

    program: Program
    records: tuple[ActionRecord, ...]
    handoffs: tuple[HandoffObservation, ...]  # one per hand-over that ran, in plan order
    initial: WorldSnapshot
    final: WorldSnapshot

    @property
    def cancelled(self) -> tuple[int, ...]:
        """Actions that never ran: something they waited on failed (see ``worlds.executor.Cascade``)."""
        ran = {record.index for record in self.records}
        return tuple(index for index in range(len(self.program.actions)) if index not in ran)


def _failed_at(record: ActionRecord) -> str:
    assert record.failure is not None
    action = record.action
    return f"{action.agent} {action.name} ({action.task}): {record.failure.message}"


def _handoff_problem(plan: DispatchPlan, observed: tuple[HandoffObservation, ...]) -> str | None:
    """Why H fails (the first hand-over that never ran or did not land), or None when every one held."""
    total = len(plan.handoffs)
    left = list(observed)
    for number, check in enumerate(plan.handoffs, start=1):
        seen = next((o for o in left if o.check == check), None)
        if seen is not None:
            left.remove(seen)
        if seen is not None and seen.verified:
            continue
        which = "" if total == 1 else f" {number} of {total} ({check.producer})"
        what = "the handoff never ran" if seen is None else seen.describe()
        return f"handoff{which} not verified: {what}"
    return None


def judge(plan: DispatchPlan, goal: Iterable[Requirement], execution: Execution) -> Outcome:
    """C/H/T/F/G of a formed commitment, with the failing stage's code and its reason.

    H holds when every hand-over landed; a commitment with none (one agent did it alone)
    has no H stage, which is None like a stage not reached.
    """
    final, observed = execution.final, execution.handoffs
    goal_missing = unmet(goal, final)
    verdict = Outcome(True, None, None, False, not goal_missing, duration_s=final.clock_s)
    handoff_ok: bool | None = all(seen.verified for seen in observed) if observed else None
    failed = next((r for r in execution.records if not r.ok), None)
    if failed is not None:
        assert failed.failure is not None
        return replace(
            verdict,
            handoff=handoff_ok,
            failure=FailureCode.EXECUTION_FAILURE,
            reason=failed.failure.code,
            message=_failed_at(failed),
        )
    problem = _handoff_problem(plan, observed)
    if problem is not None:
        return replace(
            verdict, handoff=False, failure=FailureCode.HANDOFF_FAILURE, reason="HANDOFF_UNVERIFIED", message=problem
        )
    stage_h = True if plan.handoffs else None
    missing = unmet(plan.terminal, final)
    if missing:
        return replace(
            verdict,
            handoff=stage_h,
            terminal=False,
            failure=FailureCode.TERMINAL_FAILURE,
            reason="TERMINAL_UNMET",
            message="; ".join(missing),
        )
    if goal_missing:
        return replace(
            verdict,
            handoff=stage_h,
            terminal=True,
            fulfilled=True,
            reason="GOAL_UNMET",
            message="; ".join(goal_missing),
        )
    return replace(verdict, handoff=stage_h, terminal=True, fulfilled=True)
