"""Executor conformance: what every Executor (the simulator, real Minecraft, yours) must do.

Shipped with the package, as Gymnasium ships its environment checker, so that a user's
own executor can be held to the same contract:

    from gencoord.worlds.conformance import check_executor
    check_executor(MyExecutor())   # raises ConformanceError listing every check that failed

The checks are about effects, failure reporting and which actions run, not durations: a
real server's clock is not the simulator's. Order in time is checked where the contract
fixes it: a consumer starts after its hand-over, and independent agents overlap.
``reset`` is what each check relies on, so one warm executor serves them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gencoord.errors import ConformanceError
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.worlds import conformance_checks as checks
from gencoord.worlds.conformance_fixtures import ExpectationError
from gencoord.worlds.executor import Executor

Check = Callable[[Executor, Prior], None]

CHECKS: dict[str, Check] = {
    check.__name__: check
    for check in (
        checks.reset_reports_the_initial_world,
        checks.recorded_episode_moves_the_items_it_should,
        checks.running_in_spans_equals_running_at_once,
        checks.a_failed_action_stops_what_waits_on_it,
        checks.a_rejected_handoff_stops_its_consumer,
        checks.overlapping_handoffs_are_each_their_own,
        checks.a_lost_overlapping_handoff_fails_alone,
        checks.agents_work_at_once,
        checks.missing_ingredient_and_no_recipe_are_different_failures,
        checks.deposits_withdrawals_and_placements_show_in_ground_truth,
        checks.acting_out_of_reach_fails,
        checks.a_giver_follows_a_receiver_that_moved_on,
        checks.a_workcell_refuses_what_its_mode_forbids,
        checks.a_refused_transfer_moves_nothing,
        checks.a_furnace_smelts_at_vanilla_speed,
        checks.changes_show_in_the_world,
        checks.misuse_is_a_typed_error,
    )
}
"""Every check by name, in the order :func:`check_executor` runs them."""


def violations(executor: Executor, prior: Prior | None = None, checks: Sequence[str] | None = None) -> list[str]:
    """``check name: what broke`` for each failed check (empty: conformant)."""
    prior = prior or default_prior()
    found: list[str] = []
    for name in checks or list(CHECKS):
        try:
            CHECKS[name](executor, prior)
        except ExpectationError as violation:
            found.append(f"{name}: {violation}")
    return found


def check_executor(executor: Executor, prior: Prior | None = None, checks: Sequence[str] | None = None) -> None:
    """Run the checks (default: all); raise :class:`ConformanceError` listing every one that failed.

    Check a world's executor as the factory makes it (``gencoord.worlds.choice.make_executor``):
    the call-order guard is the factory's, so a bare executor fails ``misuse_is_a_typed_error``.
    """
    found = violations(executor, prior, checks)
    if found:
        raise ConformanceError(Reason.EXECUTOR, f"{len(found)} check(s) failed:\n" + "\n".join(found))
