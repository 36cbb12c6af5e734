"""Compile(D, ω): dispatch plans become executor actions that respect the plan's DAG."""

from __future__ import annotations

import dataclasses

import pytest

from gencoord.errors import CompileError
from gencoord.prior import Prior
from gencoord.protocol.plan import DispatchPlan, HandoffCheck, Place, PlannedTask
from gencoord.protocol.result import Success
from gencoord.run.episode import coordinate
from gencoord.runtime.compile import compile_plan
from gencoord.tasks import SuiteDocument, build_episode, make_cluster
from gencoord.tasks.instances import EpisodeSpec
from gencoord.worlds.actions import FurnaceCollect, FurnaceLoad, GiveItem
from gencoord.worlds.conformance_fixtures import conformance_world as world
from gencoord.worlds.sim import SimExecutor


def _plan(spec: EpisodeSpec, prior: Prior, suites: SuiteDocument) -> DispatchPlan:
    result = coordinate(spec, prior=prior, suites=suites)
    assert isinstance(result, Success)
    return result.plan


def _recorded(prior: Prior, suites: SuiteDocument) -> EpisodeSpec:
    return build_episode(make_cluster("ACTIVE_ORDER_BRANCH", "WORK_BRANCH", 7), 1, 7, prior, suites)


def test_recorded_episode_compiles_to_the_papers_13_actions(prior: Prior, suites: SuiteDocument) -> None:
    spec = _recorded(prior, suites)
    program = compile_plan(_plan(spec, prior, suites), spec.world, prior.game)
    names = [action.name for action in program.actions]
    assert names == ["go_to", *["obtain_block"] * 8, "go_to", "give_item", "go_to", "craft_item"]
    assert [a.agent for a in program.actions] == ["agent_b"] * 11 + ["agent_a"] * 2
    assert program.handoffs == (10,) and isinstance(program.actions[10], GiveItem)
    assert program.deps[11] == (10,)  # the receiver's consuming task waits for the handoff


def test_every_dependency_points_backwards(prior: Prior, suites: SuiteDocument) -> None:
    for template in ("DEPOSIT_OR_BUILD", "DUAL_BUILD_ALLOCATION", "PLANKS_OR_STICKS", "CHEST_A_OR_B"):
        for binding in sorted(suites.forward.templates[template].goals):
            spec = build_episode(make_cluster(template, binding, 1), 0, 1, prior, suites)
            program = compile_plan(_plan(spec, prior, suites), spec.world, prior.game)
            assert all(d < i for i, deps in enumerate(program.deps) for d in deps)


def test_no_source_for_an_item_is_an_execution_failure(prior: Prior, suites: SuiteDocument) -> None:
    spec = _recorded(prior, suites)
    plan = _plan(spec, prior, suites)
    bare = dataclasses.replace(spec.world, refs={k: v for k, v in spec.world.refs.items() if k != "lumber_yard"})
    with pytest.raises(CompileError) as caught:
        compile_plan(plan, bare, prior.game)
    assert caught.value.code == "EXECUTION_FAILURE" and caught.value.reason == "NO_SOURCE"
    assert "oak_planks" in caught.value.message


def test_furnace_skills_compile_and_smelt(prior: Prior) -> None:
    a, b = "agent_a", "agent_b"
    station = Place("ref", "furnace_station")

    def task(ident: str, actor: str, skill: str, args: dict[str, object], preds: tuple[str, ...]) -> PlannedTask:
        return PlannedTask(ident, actor, skill, tuple(args.items()), station if "station" in args else None, preds)

    tasks = (
        task(
            "agent_b#1", b, "transform.supply_input", {"q": 4, "item": "cobblestone", "station": "furnace_station"}, ()
        ),
        task(
            "agent_b#2",
            b,
            "transform.supply_fuel",
            {"q": 1, "item": "coal", "station": "furnace_station"},
            ("agent_b#1",),
        ),
        task(
            "agent_a#1",
            a,
            "transform.collect_output",
            {"q": 4, "item": "stone", "station": "furnace_station"},
            ("agent_b#2",),
        ),
        task("agent_a#2", a, "resource.deliver", {"q": 4, "item": "stone", "to": b}, ("agent_a#1",)),
    )
    plan = DispatchPlan(None, tasks, (HandoffCheck("agent_a#2", "agent_a#2", a, b, "stone", 4),), ())
    spec = world(prior, {b: {"cobblestone": 4, "coal": 1}})
    program = compile_plan(plan, spec, prior.game)
    assert [type(action) for action in program.actions if isinstance(action, (FurnaceLoad, FurnaceCollect))] == [
        FurnaceLoad,
        FurnaceLoad,
        FurnaceCollect,
    ]
    sim = SimExecutor(prior.game)
    sim.reset(spec)
    records = sim.run(program, 0, len(program.actions))
    assert all(r.ok for r in records), [r.failure for r in records]
    assert sim.snapshot().inventories[b] == {"stone": 4}
