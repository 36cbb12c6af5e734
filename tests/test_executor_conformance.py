"""Conformance: the shipped executor checks (gencoord.worlds.conformance) on every executor we ship.

An executor joins by adding a factory to EXECUTORS. One executor serves a whole module (a
Minecraft server and its bots stay warm across checks); each check begins with ``reset``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from gencoord.errors import CallOrderError, ConformanceError
from gencoord.prior import Prior
from gencoord.worlds.changes import DepleteSource
from gencoord.worlds.choice import WorldChoice, make_executor
from gencoord.worlds.conformance import CHECKS, check_executor, violations
from gencoord.worlds.conformance_fixtures import conformance_world
from gencoord.worlds.executor import ActionRecord, Executor
from gencoord.worlds.sim import SimExecutor
from gencoord.worlds.spec import WorldSpec

EXECUTORS: dict[str, Callable[[], Executor]] = {
    kind: lambda kind=kind: make_executor(WorldChoice(kind=kind)) for kind in ("sim", "minecraft")
}
"""Each world as the factory makes it: its executor behind the one order-enforcing guard."""


@pytest.fixture(scope="module", params=[pytest.param("sim"), pytest.param("minecraft", marks=pytest.mark.minecraft)])
def executor(request: pytest.FixtureRequest) -> Iterator[Executor]:
    made = EXECUTORS[request.param]()
    yield made
    made.close()


@pytest.mark.parametrize("check", list(CHECKS))
def test_executor_passes(check: str, executor: Executor, prior: Prior) -> None:
    assert violations(executor, prior, [check]) == []


def test_snapshot_before_any_reset_is_a_call_order_error() -> None:
    with pytest.raises(CallOrderError) as caught:
        make_executor(WorldChoice()).snapshot()
    assert caught.value.reason == "NOT_RESET" and "reset(world)" in caught.value.message


def test_the_order_is_the_factorys_to_keep_not_each_worlds(prior: Prior) -> None:
    """A world's own executor need not guard the call order: what the factory makes does, changes included."""
    assert violations(SimExecutor(), prior, ["misuse_is_a_typed_error"])  # bare: the check sees no guard
    guarded = make_executor(WorldChoice())
    assert violations(guarded, prior, ["misuse_is_a_typed_error"]) == []
    with pytest.raises(CallOrderError, match=r"change\(\) before reset"):
        guarded.change(DepleteSource("lumber_yard"))  # type: ignore[attr-defined]


class _LeakyExecutor(SimExecutor):
    """A broken executor: the hand-over loses one item. The shipped checks must notice."""

    def run(self, program, start, stop, on_handoff=None):  # type: ignore[no-untyped-def]
        records: list[ActionRecord] = super().run(program, start, stop, on_handoff)
        for record in records:
            if record.ok and record.action.name == "give_item":
                held = self.inventories[record.action.to]  # type: ignore[attr-defined]
                if held.get(record.action.item):  # type: ignore[attr-defined]
                    held[record.action.item] -= 1  # type: ignore[attr-defined]
        return records


def test_a_broken_executor_is_caught_and_named(prior: Prior) -> None:
    with pytest.raises(ConformanceError) as caught:
        check_executor(_LeakyExecutor(), prior)
    assert "recorded_episode_moves_the_items_it_should" in caught.value.message
    assert "running_in_spans_equals_running_at_once" in caught.value.message
    assert "reset_reports_the_initial_world" not in caught.value.message


class _OneAtATime(SimExecutor):
    """A broken executor: one action at a time in program order, the others idle meanwhile."""

    def run(self, program, start, stop, on_handoff=None):  # type: ignore[no-untyped-def]
        records: list[ActionRecord] = []
        for index in range(start, stop):
            records += super().run(program, index, index + 1, on_handoff)
            self.clocks = dict.fromkeys(self.clocks, max(self.clocks.values()))
            if not records[-1].ok:
                break
        return records


def test_an_executor_that_serialises_agents_is_caught(prior: Prior) -> None:
    found = violations(_OneAtATime(), prior)
    assert any(v.startswith("agents_work_at_once:") for v in found), found
    assert any(v.startswith("a_failed_action_stops_what_waits_on_it:") for v in found), found
    assert not any(v.startswith("recorded_episode_moves_the_items_it_should:") for v in found), found


def test_the_shipped_world_is_the_default_grounding(prior: Prior) -> None:
    spec: WorldSpec = conformance_world(prior, {"agent_a": {"stick": 1}})
    assert [agent.name for agent in spec.agents] == list(prior.default_episode.agents)
    assert replace(spec).refs == dict(prior.default_episode.refs)
