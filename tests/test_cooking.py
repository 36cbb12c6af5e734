"""Cooking tasks: both formats into one object, refusals, the world's mechanics, recipes taught, end to end."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.planning.feasibility import diagnose
from gencoord.prior import Prior
from gencoord.prior.load import team_prior
from gencoord.prior.loot import default_loot, roll
from gencoord.run.cooking import cooking_lead, run_cooking_task
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.generate_cooking import BROUGHT, FOODS, random_cooking_task
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask
from gencoord.tasks.team_files import read_task_file
from gencoord.tasks.world import FURNACE, SMOKER, source_ref, team_world
from gencoord.worlds.actions import FurnaceCollect, FurnaceLoad, GoTo, Hunt, ObtainBlock, Program
from gencoord.worlds.sim.executor import SimExecutor

FIXTURES = Path(__file__).parent / "fixtures" / "cooking"
PRIOR: Prior = team_prior()


def _tasks(path: Path) -> dict[str, CookingTask]:
    loaded = read_task_file(path, prior=PRIOR)
    assert loaded.refused == ()
    tasks = {task.id: task for task in loaded.tasks}
    assert all(isinstance(task, CookingTask) for task in tasks.values())
    return tasks  # type: ignore[return-value]


def _write(tmp_path: Path, document: dict[str, object]) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


# ---------------------------------------------------------------- formats


def test_both_formats_give_the_same_task() -> None:
    shipped, ours = _tasks(FIXTURES / "kitchen.json"), _tasks(FIXTURES / "kitchen.toml")
    for ident, task in ours.items():
        theirs = shipped[ident]
        assert (task.goals, task.agents, task.recipes, task.own_work, task.world) == (
            theirs.goals,
            theirs.agents,
            theirs.recipes,
            theirs.own_work,
            theirs.world,
        )


def test_mindcraft_targets_and_recipe_bars_are_read_as_mindcraft_reads_them() -> None:
    tasks = _tasks(FIXTURES / "kitchen.json")
    pair = tasks["pair_chicken_and_golden_carrot"]
    assert [(dict(g.items), g.holder) for g in pair.goals] == [({"cooked_chicken": 1, "golden_carrot": 1}, "any")]
    trio = tasks["trio_blocked_stew_and_pie"]
    assert all(trio.recipes[item] == ["agent_1"] for item in trio.goal_items())
    assert cooking_lead(trio) == "agent_1"
    hells = tasks["mushroom_stew_cooked_beef_hells_kitchen"]
    assert hells.own_work and [g.holder for g in hells.goals] == ["agent_0", "agent_1"]
    assert hells.recipes == {"mushroom_stew": ["agent_1"], "cooked_beef": ["agent_0"]}


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ({"agent_count": 2, "type": "cooking", "target": {"cooked_chicken": 0}}, "BAD_COUNT"),
        ({"agent_count": 2, "type": "cooking", "target": {"cooked_chiken": 1}}, "UNKNOWN_ITEM"),
        ({"agent_count": 2, "type": "cooking", "target": 7}, "BAD_TASK"),
        ({"agent_count": 2, "type": "cooking", "target": "bread", "blocked_access_to_recipe": ["5"]}, "BAD_TASK"),
        (
            {"agent_count": 2, "type": "cooking", "target": "bread", "initial_inventory": {"0": {"egg": "x"}}},
            "BAD_COUNT",
        ),
    ],
)
def test_a_bad_cooking_task_is_refused_alone(tmp_path: Path, raw: dict[str, object], code: str) -> None:
    good = {"agent_count": 2, "type": "cooking", "target": {"bread": 1}}
    loaded = read_task_file(_write(tmp_path, {"bad": raw, "good": good}), prior=PRIOR)
    assert [task.id for task in loaded.tasks] == ["good"]
    assert [(r.task, r.code) for r in loaded.refused] == [("bad", code)]


# ---------------------------------------------------------------- the world


def test_ripe_crops_and_animals_drop_vanilla_amounts_from_the_episodes_seed() -> None:
    loot = default_loot()
    for name, crop in loot.blocks.items():
        rolls = [roll(crop.drops, random.Random(seed)) for seed in range(200)]
        for drop in crop.drops:
            counts = [r.get(drop.item, 0) for r in rolls]
            assert min(counts) >= (drop.min if drop.chance == 1.0 else 0) and max(counts) <= drop.max, name
    assert roll(loot.mobs["rabbit"].drops, random.Random(3)) == roll(loot.mobs["rabbit"].drops, random.Random(3))


def _program(*actions: object) -> Program:
    return Program(tuple(actions), tuple(() for _ in actions), ())  # type: ignore[arg-type]


def _world(task: CookingTask) -> tuple[SimExecutor, object]:
    _, world = team_world(task, PRIOR)
    executor = SimExecutor(PRIOR.game)
    executor.reset(world)
    return executor, world


def _kitchen() -> CookingTask:
    return _tasks(FIXTURES / "kitchen.json")["pair_chicken_and_golden_carrot"]


def test_a_hunt_takes_animals_until_the_count_is_held_and_a_herd_runs_out() -> None:
    task = _kitchen()
    executor, _ = _world(task)
    herd = source_ref("chicken")
    program = _program(GoTo("agent_0", "t", herd, "ref"), Hunt("agent_0", "t", herd, "chicken", "chicken", 3))
    records = executor.run(program, 0, 2)
    assert all(r.ok for r in records) and executor.snapshot().inventories["agent_0"]["chicken"] >= 3
    more = executor.run(_program(Hunt("agent_0", "u", herd, "chicken", "chicken", 9)), 0, 1)
    assert more[0].failure is not None and more[0].failure.code == "SOURCE_EXHAUSTED"


def test_the_smoker_cooks_food_twice_as_fast_and_refuses_ore() -> None:
    task = _kitchen()
    times = {}
    for station in (FURNACE, SMOKER):
        executor, world = _world(task)
        beef = source_ref("beef")
        program = _program(
            GoTo("agent_0", "t", beef, "ref"),
            Hunt("agent_0", "t", beef, str(world.refs[beef].entity), "beef", 1),  # type: ignore[attr-defined]
            GoTo("agent_0", "t", station, "ref"),
            FurnaceLoad("agent_0", "t", station, "input", "beef", 1),
            FurnaceCollect("agent_0", "t", station, "cooked_beef", 1),
        )
        records = executor.run(program, 0, 5)
        assert all(r.ok for r in records), [r.failure for r in records]
        times[station] = records[-1].end_s - records[-2].end_s
    assert times[SMOKER] < times[FURNACE]
    executor, _ = _world(task)
    executor.inventories["agent_0"]["raw_iron"] = 1
    refused = executor.run(
        _program(GoTo("agent_0", "t", SMOKER, "ref"), FurnaceLoad("agent_0", "t", SMOKER, "input", "raw_iron", 1)),
        0,
        2,
    )
    assert refused[-1].failure is not None and refused[-1].failure.code == "NOT_SMELTABLE"


def test_a_crop_field_is_broken_until_its_certain_yield_covers_the_task() -> None:
    task = _kitchen()
    executor, _ = _world(task)
    field = source_ref("carrot")
    program = _program(
        GoTo("agent_0", "t", field, "ref"), *(ObtainBlock("agent_0", "t", field, "carrots") for _ in range(2))
    )
    assert all(r.ok for r in executor.run(program, 0, 3))
    assert executor.snapshot().inventories["agent_0"]["carrot"] >= 4  # a ripe carrot crop drops 2 to 5


# ---------------------------------------------------------------- end to end


@pytest.mark.parametrize("ident", sorted(_tasks(FIXTURES / "kitchen.json")))
def test_every_fixture_succeeds_or_is_refused_naming_what_is_missing(ident: str) -> None:
    task = _tasks(FIXTURES / "kitchen.json")[ident]
    result = run_cooking_task(task, PRIOR)
    if ident == "golden_carrot_cooked_chicken_hells_kitchen":  # nobody brings gold, and the field grows none
        assert not result.feasible and result.code == "UNREACHABLE_GOAL" and "gold" in (result.message or "")
        assert result.execution is None
        return
    assert result.success, (result.code, result.message)
    assert task.goal_met(result.execution.final.inventories, result.execution.final.containers)  # type: ignore[union-attr]


def test_hells_kitchen_teaches_each_recipe_as_a_path_and_counts_its_bytes() -> None:
    task = _tasks(FIXTURES / "kitchen.json")["mushroom_stew_cooked_beef_hells_kitchen"]
    result = run_cooking_task(task, PRIOR)
    taught = [m for m in result.wire.messages if m.kind == "PATH"]
    # agent_0 leads (each knows one recipe: the first on a tie) and is taught its own dish
    assert result.lead == "agent_0" and result.success and len(taught) == 1
    assert "item=mushroom_stew" in taught[0].payload and taught[0].sender == "agent_1"
    acks = [m for m in result.wire.messages if m.kind == "ACK"]
    assert result.recipe_bytes == taught[0].nbytes + acks[0].nbytes
    assert result.commitment is not None
    paths = {path.agent: path.tasks for path in result.commitment.paths}
    # own work: nobody fetches or cooks for the other
    assert all(task.get("to") is None for tasks in paths.values() for task in tasks)


def test_a_plan_uses_the_team_where_one_cook_would_be_slower() -> None:
    task = _tasks(FIXTURES / "kitchen.json")["five_cooks_everything"]
    result = run_cooking_task(task, PRIOR)
    assert result.success and result.commitment is not None
    busy = [path.agent for path in result.commitment.paths if path.tasks]
    assert len(busy) >= 3
    assert result.single_crafter_s is not None and result.duration_s is not None
    assert result.duration_s < result.single_crafter_s


def _obtainable(task: CookingTask, item: str) -> bool:
    probe = TeamTask(id="probe", agents=[TeamAgent(name="a")], goal=TeamGoal(item=item), world=task.world)
    return diagnose(probe, PRIOR).feasible


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    agents=st.integers(1, 5),
    dishes=st.integers(1, 4),
    hells=st.booleans(),
)
def test_generated_cooking_tasks_succeed_and_one_missing_ingredient_is_refused(
    tmp_path_factory: pytest.TempPathFactory, seed: int, agents: int, dishes: int, hells: bool
) -> None:
    document = random_cooking_task(seed, agents, dishes, hells_kitchen=hells and agents >= 2)
    path = tmp_path_factory.mktemp("cook") / "tasks.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    [task] = read_task_file(path, prior=PRIOR).tasks
    assert isinstance(task, CookingTask)
    result = run_cooking_task(task, PRIOR)
    assert result.success, (task.id, result.code, result.message)
    # what no block, crop, animal or recipe of this world yields (gold, eggs, cocoa; not bowls: trees grow)
    brought = [(agent, item) for agent in task.agents for item in agent.inventory if not _obtainable(task, item)]
    if not brought:
        return
    holder, item = brought[0]
    shorter = [
        a.model_copy(update={"inventory": {k: v for k, v in a.inventory.items() if k != item}}) if a == holder else a
        for a in task.agents
    ]
    spare = sum(a.inventory.get(item, 0) for a in shorter)
    needed = sum(BROUGHT[food].get(item, 0) for food in FOODS if any(food in g.items for g in task.goals))
    if spare >= needed:  # gold comes in spare ingots: one agent's share may not be missed
        return
    short = run_cooking_task(task.model_copy(update={"agents": shorter}), PRIOR)
    assert not short.success and short.execution is None and short.code == "UNREACHABLE_GOAL"
    assert item.split("_")[0] in (short.message or "")


def test_tasks_run_takes_cooking_files_and_reports_recipe_bytes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["tasks", "run", str(FIXTURES / "kitchen.json"), "--out", str(out)])
    assert result.exit_code == 0, result.output  # a task that fails is a record, not an error
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 6 and sum(r["success"] for r in records) == 5
    hells = next(r for r in records if r["task"].endswith("beef_hells_kitchen"))
    assert hells["recipe_bytes"] > 0 and "goals" in hells["goal"]
    report = (out / "report.md").read_text()
    assert "recipe bytes" in report and "all at once" in report
