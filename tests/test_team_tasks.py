"""Team tasks from files: gencoord's format and MINDcraft's, item checks, and feasibility said before any action."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.errors import ConfigError
from gencoord.planning.feasibility import diagnose
from gencoord.prior import default_prior
from gencoord.tasks.generate import random_task
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask, legacy_names
from gencoord.tasks.team_files import load_team_tasks

FIXTURES = Path(__file__).parent / "fixtures" / "team"
PRIOR = default_prior()


def _by_id(name: str) -> dict[str, TeamTask]:
    return {task.id: task for task in load_team_tasks(FIXTURES / name)}


def test_mindcraft_tasks_read_as_their_documentation_defines_them() -> None:
    tasks = _by_id("mindcraft_mixed.json")
    shelf = tasks["bookshelf_table_held"]
    assert [agent.name for agent in shelf.agents] == ["agent_0", "agent_1"] and shelf.source == "mindcraft"
    assert shelf.agents[1].blocked == ["resource.obtain", "craft.item"] and shelf.goal.holder == "any"
    assert not shelf.world.crafting_table and shelf.time_limit_s == 300
    assert any("crafting table" in note for note in shelf.notes)
    three = tasks["blue_wool_three"]
    assert len(three.agents) == 3 and three.agents[1].inventory == {}  # an agent with nothing is still an agent
    assert any("!goToPlayer" in note for note in three.notes)  # unmodelled commands are kept, not dropped
    assert tasks["sticks_any_wood_four"].goal.count == 4  # a {item: count} target
    assert len(tasks["cake_five"].agents) == 5


@pytest.mark.parametrize(
    ("task", "feasible", "words"),
    [
        ("bookshelf_table_held", True, ""),  # a crafting table held but not placed is enough
        ("bookshelf_no_table", False, "needs 1 oak_log, team has none"),  # 4 of the 6 planks go to a table
        ("blue_wool_three", True, ""),  # any wool takes any dye (a tag the raw recipe data collapsed)
        ("sticks_any_wood_four", True, ""),  # planks of any wood
        ("cake_five", False, "no recipe path to 1 cake from the pooled inventories: needs 3 milk_bucket, team has 2"),
        ("gather_logs_alone", True, ""),  # an agent that may collect gathers the world's logs
    ],
)
def test_feasibility_is_said_before_any_action(task: str, feasible: bool, words: str) -> None:
    verdict = diagnose(_by_id("mindcraft_mixed.json")[task], PRIOR)
    assert verdict.feasible is feasible and words in verdict.reason
    if task == "bookshelf_no_table":
        assert "crafting table a 3×3 recipe needs, which must be made" in verdict.reason


def test_own_format_loads_into_the_same_object() -> None:
    tasks = _by_id("own_format.toml")
    chest = tasks["chest_for_the_depot"]
    assert chest.goal == TeamGoal(item="chest", count=1, holder="bob") and chest.source == "gencoord"
    assert diagnose(chest, PRIOR).feasible  # 2 logs → 8 planks → a chest
    pickaxe = tasks["iron_pickaxe_three"]
    assert pickaxe.holdings() == {"iron_ingot": 3, "stick": 2} and diagnose(pickaxe, PRIOR).feasible


def test_old_names_are_read_as_todays_and_unknown_ones_refused_with_the_fix() -> None:
    (legacy,) = load_team_tasks(FIXTURES / "mindcraft_legacy_item.json")
    assert legacy.agents[0].inventory == {"red_dye": 1}
    assert "pre-1.13 item name 'rose_red' read as 'red_dye'" in legacy.notes
    with pytest.raises(ConfigError) as unknown:
        load_team_tasks(FIXTURES / "mindcraft_unknown_item.json")
    assert unknown.value.reason == "UNKNOWN_ITEM" and "did you mean 'oak_planks'" in unknown.value.message


def test_every_legacy_name_maps_to_a_real_item_and_is_not_one() -> None:
    for old, new in legacy_names().items():
        assert PRIOR.game.is_item(new), new
        assert not PRIOR.game.is_item(old), old


def test_the_dyeing_tag_is_restored_and_nothing_else_changes() -> None:
    blue = [recipe.ingredients for recipe in PRIOR.game.recipes["blue_wool"]]
    assert {"white_wool": 1, "blue_dye": 1} in blue and {"blue_wool": 1, "blue_dye": 1} not in blue
    assert all(
        set(recipe.ingredients) != {"black_wool", "blue_dye"} or recipe.ingredients["black_wool"] == 1
        for recipe in PRIOR.game.recipes["blue_wool"]
    )
    bed = PRIOR.game.recipes["black_bed"]
    assert any(recipe.ingredients.get("black_wool") == 3 for recipe in bed)  # a bed made of black wool keeps it


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"x": {"agent_count": 2, "target": "stick", "blocked_actions": {"0": ["!fly"]}}}', "UNKNOWN_COMMAND"),
        ('{"x": {"agent_count": 1, "target": "stick", "initial_inventory": {"3": {"stick": 1}}}}', "BAD_TASK"),
        ('{"x": {"agent_count": 1, "target": {"stick": 1, "chest": 1}}}', "UNSUPPORTED_TARGET"),
        ('{"x": {"agent_count": 1, "target": "stick", "number_of_target": 0}}', "BAD_COUNT"),
        ('{"hello": "world"}', "UNKNOWN_TASK_FORMAT"),
        ("not json", "INVALID_JSON"),
        ('{"tasks": [{"id": "a", "agents": [{"name": "x"}, {"name": "x"}], "goal": {"item": "stick"}}]}', "BAD_TASK"),
        (
            '{"tasks": [{"id": "a", "agents": [{"name": "x", "blocked": ["fly"]}], "goal": {"item": "stick"}}]}',
            "UNKNOWN_SKILL",
        ),
    ],
)
def test_broken_task_files_fail_with_a_stable_code(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_team_tasks(path)
    assert caught.value.reason == reason and str(path) in caught.value.message


def test_tasks_check_prints_one_json_object_per_task() -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["tasks", "check", str(FIXTURES / "mindcraft_mixed.json"), str(FIXTURES / "own_format.toml"), "--jsonl"]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 8 and {"task", "agents", "feasible", "code", "message", "notes"} <= set(lines[0])
    cake = next(line for line in lines if line["task"] == "cake_five")
    assert cake["feasible"] is False and cake["code"] == "UNREACHABLE_GOAL" and cake["agents"] == 5
    broken = runner.invoke(app, ["tasks", "check", str(FIXTURES / "mindcraft_unknown_item.json"), "--jsonl"])
    assert broken.exit_code == 1  # its one task refused on its own line (the file is read: not 2), so none can run
    (refused,) = [json.loads(line) for line in broken.stdout.splitlines()]
    assert refused["code"] == "UNKNOWN_ITEM" and "did you mean 'oak_planks'" in refused["message"]
    forced = runner.invoke(app, ["tasks", "check", str(FIXTURES / "own_format.toml"), "--format", "mindcraft"])
    assert forced.exit_code == 2


# ---------------------------------------------------------------- generated tasks


@st.composite
def team_tasks(draw: st.DrawFn) -> tuple[TeamTask, Counter[str], set[str]]:
    """Random tasks from the recipe graph (``tasks/generate.py``): 2–8 agents, leaves split at random, distractors."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    generated = random_task(PRIOR, rng, draw(st.integers(2, 8)), distractors=draw(st.integers(0, 4)))
    assume(generated is not None)
    assert generated is not None
    return generated.task, generated.leaves, set(generated.essential)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(team_tasks(), st.data())
def test_generated_tasks_are_feasible_and_a_missing_needed_leaf_is_named(
    generated: tuple[TeamTask, Counter[str], set[str]], data: st.DataObject
) -> None:
    task, leaves, essential = generated
    verdict = diagnose(task, PRIOR)
    assert verdict.feasible, verdict.reason
    held = sum(agent.inventory.get(task.goal.item, 0) for agent in task.agents)
    assert held < task.goal.count  # the goal needs work: no bag meets it before any action (a station included)
    assume(essential)  # the rest can be stood in for by another recipe variant: not needed
    leaf = data.draw(st.sampled_from(sorted(essential)))
    holder = next(agent for agent in task.agents if agent.inventory.get(leaf))
    fewer = {item: n - (item == leaf) for item, n in holder.inventory.items()}
    short = TeamAgent(name=holder.name, inventory={item: n for item, n in fewer.items() if n})
    starved = task.model_copy(update={"agents": [short if a.name == holder.name else a for a in task.agents]})
    refused = diagnose(starved, PRIOR)
    assert refused.feasible is False and refused.shortfall is not None, refused
    assert refused.shortfall.item == leaf, refused.reason
    has = f"team has {leaves[leaf] - 1}" if leaves[leaf] > 1 else "team has none"
    assert f"needs {leaves[leaf]} {leaf}, {has}" in refused.reason
