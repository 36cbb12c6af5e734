"""Team tasks that smelt: the planner loads a furnace with the whole fuel items a batch burns, no more.

Random tasks put a smeltable item and random fuel (coal, planks, sticks) in random bags;
a furnace burns whole items, so the team can reach the goal exactly when the fuel it holds
burns at least as long as the batch takes. The oracle is that sum, computed here from
vanilla's burn times; the plan is executed on the simulator, end to end.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from gencoord.planning.feasibility import diagnose
from gencoord.prior.load import team_prior
from gencoord.run.team import run_team_task
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask, TeamWorld
from gencoord.tasks.team_files import load_team_tasks
from gencoord.worlds.sim.physics import default_physics

EXPERIMENTS = Path(__file__).parents[1] / "experiments"
PRIOR = team_prior()
PHYSICS = default_physics()
FUELS = ("coal", "oak_planks", "stick")  # none crafts into a fuel that burns longer than itself (below 9 coal)
SOURCES = sorted(
    source
    for source, output in PHYSICS.smelting.items()
    if source not in PHYSICS.fuel_ticks and output not in PHYSICS.fuel_ticks
)


@st.composite
def smelting_tasks(draw: st.DrawFn) -> tuple[TeamTask, str, int]:
    source = draw(st.sampled_from(SOURCES))
    count = draw(st.integers(1, 10))
    agents = draw(st.integers(2, 4))
    bags: list[Counter[str]] = [Counter() for _ in range(agents)]
    bags[draw(st.integers(0, agents - 1))][source] += count
    for fuel in FUELS:
        for _ in range(draw(st.integers(0, 6))):
            bags[draw(st.integers(0, agents - 1))][fuel] += 1
    held = sum(bags, Counter())
    ticks = sum(PHYSICS.fuel_ticks[fuel] * held[fuel] for fuel in FUELS)
    task = TeamTask(
        id="smelt",
        agents=[TeamAgent(name=f"agent_{i}", inventory=dict(bag)) for i, bag in enumerate(bags)],
        goal=TeamGoal(item=PHYSICS.smelting[source], count=count),
        world=TeamWorld(furnace=True),
    )
    return task, source, ticks


@settings(max_examples=60, deadline=None)
@given(smelting_tasks())
def test_a_team_smelts_exactly_when_its_fuel_burns_long_enough(generated: tuple[TeamTask, str, int]) -> None:
    task, source, ticks = generated
    needed = task.goal.count * PHYSICS.smelt_ticks_per_item
    verdict = diagnose(task, PRIOR)
    event("enough fuel" if ticks >= needed else "too little fuel")
    assert verdict.feasible == (ticks >= needed), (verdict.reason, ticks, needed)
    if not verdict.feasible:
        assert verdict.code == "UNREACHABLE_GOAL"
        assert f"furnace fuel for {source}" in verdict.reason, verdict.reason
        return
    result = run_team_task(task, PRIOR)
    assert result.success, (result.code, result.message)
    assert result.commitment is not None
    loads = [
        (task_.get("item"), int(task_.get("q")))
        for path in result.commitment.paths
        for task_ in path.tasks
        if task_.skill == "transform.supply_fuel"
    ]
    burned = [PHYSICS.fuel_ticks[str(fuel)] for fuel, n in loads for _ in range(n)]
    assert sum(burned) >= needed, loads
    assert sum(burned) - min(burned) < needed, f"a whole fuel item is spare: {loads} for {needed} ticks"


def test_without_a_furnace_nothing_smelts() -> None:
    task = TeamTask(
        id="no_furnace",
        agents=[TeamAgent(name="a", inventory={"raw_iron": 1}), TeamAgent(name="b", inventory={"coal": 1})],
        goal=TeamGoal(item="iron_ingot"),
    )
    assert diagnose(task, PRIOR).feasible is False
    assert diagnose(task.model_copy(update={"world": TeamWorld(furnace=True)}), PRIOR).feasible is True


def test_two_kinds_to_smelt_go_through_one_furnace_one_after_the_other() -> None:
    task = TeamTask(
        id="two_kinds",
        agents=[
            TeamAgent(name="a", inventory={"raw_iron": 1, "coal": 1}),
            TeamAgent(name="b", inventory={"iron_ore": 1, "coal": 1}),
        ],
        goal=TeamGoal(item="iron_ingot", count=2),
        world=TeamWorld(furnace=True),
    )
    result = run_team_task(task, PRIOR)
    assert result.success is True, (result.code, result.message)
    assert result.execution is not None
    loaded = [r.action for r in result.execution.records if r.action.name == "furnace_load" and r.ok]
    assert len(loaded) >= 2
    collected = [r for r in result.execution.records if r.action.name == "furnace_collect" and r.ok]
    assert len(collected) == 2


def test_the_shipped_smelting_tasks_succeed_on_the_simulator() -> None:
    tasks = load_team_tasks(EXPERIMENTS / "team" / "smelting.json", prior=PRIOR)
    assert len(tasks) >= 3
    for task in tasks:
        result = run_team_task(task, PRIOR)
        assert result.success, (task.id, result.code, result.message)
        assert result.execution is not None
        assert any(r.action.name == "furnace_collect" and r.ok for r in result.execution.records), task.id


@pytest.mark.parametrize(
    ("goal", "bag", "said"),
    [
        ("iron_pickaxe", {"stick": 2}, "needs 3 iron_ingot, team has none (via iron_pickaxe → iron_ingot)"),
        ("golden_carrot", {"carrot": 1}, "needs 1 gold_ingot, team has none (via golden_carrot → gold_nugget →"),
        ("clock", {"redstone": 1}, "needs 4 gold_ingot, team has none"),
        ("oak_door", {}, "needs 2 oak_log, team has none (via oak_door → oak_planks → oak_log)"),
    ],
)
def test_what_is_missing_is_named_as_a_person_fetches_it(goal: str, bag: dict[str, int], said: str) -> None:
    """Ingots, not the ore or raw-gold block they could be smelted or unpacked from, and no fuel for ore nobody
    has; but logs, not the planks a recipe really makes from them."""
    task = TeamTask(
        id="short", agents=[TeamAgent(name="a", inventory=bag)], goal=TeamGoal(item=goal), world=TeamWorld(furnace=True)
    )
    verdict = diagnose(task, PRIOR)
    assert not verdict.feasible and verdict.code == "UNREACHABLE_GOAL"
    assert said in verdict.reason and "also short" not in verdict.reason, verdict.reason
