"""Construction tasks on the simulator: blueprints read, refused, planned, built and checked cell by cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.dsl.ast import Task
from gencoord.dsl.cells import Placement, format_cells, parse_cells, parse_share
from gencoord.errors import ConfigError, ParseError
from gencoord.planning.build import judge_build, plan_build
from gencoord.prior.load import team_prior
from gencoord.run.build import run_build_task
from gencoord.run.team_choices import TeamMode
from gencoord.tasks.blueprint import AIR, score_build
from gencoord.tasks.build import BuildTask
from gencoord.tasks.generate_builds import random_build_task
from gencoord.tasks.team_files import load_team_tasks, read_task_file
from gencoord.worlds.placing import build_order, plan_scaffold, share_placements

PRIOR = team_prior()
FIXTURES = Path(__file__).parent / "fixtures" / "construction"


def _load(path: Path) -> dict[str, BuildTask]:
    loaded = read_task_file(path, prior=PRIOR)
    return {task.id: task for task in loaded.tasks if isinstance(task, BuildTask)}


def _written(tmp: Path, raw: dict[str, object], name: str = "t") -> BuildTask:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({name: raw}), encoding="utf-8")
    (task,) = _load(path).values()
    return task


# ------------------------------------------------------------------ the cell codec

placements = st.lists(
    st.tuples(
        st.sampled_from(["stone", "oak_planks", "glass", "gold_block", "blue_carpet"]),
        st.tuples(st.integers(0, 40), st.integers(0, 12), st.integers(0, 40)),
    ),
    max_size=120,
    unique_by=lambda placement: placement[1],
).filter(bool)


@given(placements)
def test_a_cell_list_reads_back_as_written_order_and_all(written: list[tuple[str, tuple[int, int, int]]]) -> None:
    assert parse_cells(format_cells(written)) == tuple(written)


@given(st.text(max_size=200))
def test_any_cell_string_parses_or_fails_with_a_parse_error(text: str) -> None:
    try:
        parsed = parse_cells(text)
    except ParseError as error:
        assert error.reason in {"MALFORMED_CELLS", "TOO_MANY_CELLS", "TOO_MANY_BLOCKS", "DUPLICATE_CELL"}
    else:
        assert len({cell for _, cell in parsed}) == len(parsed)


def test_a_cell_named_twice_is_refused() -> None:
    with pytest.raises(ParseError) as caught:
        parse_cells("stone|0:a0-2.0 a1.0")
    assert caught.value.reason == "DUPLICATE_CELL"


# ------------------------------------------------------------------ reading blueprints


def test_gencoords_layers_and_mindcrafts_levels_load_into_one_blueprint() -> None:
    from_toml = _load(FIXTURES / "cabin.toml")["cabin"]
    from_json = _load(FIXTURES / "cabin.json")["cabin"]
    assert from_toml.blueprint.relative() == from_json.blueprint.relative()
    assert from_toml.blueprint.corner() == from_json.blueprint.corner() == (100, -60, -20)
    assert any("ladder[facing=north]" in note for note in from_json.notes)  # the state is dropped, and said


def test_what_no_team_can_build_is_refused_with_its_own_code() -> None:
    loaded = read_task_file(FIXTURES / "hard_cases.json", prior=PRIOR)
    refused = {refusal.task: refusal.code for refusal in loaded.refused}
    assert refused == {
        "water_cell": "UNPLACEABLE_BLOCK",
        "wall_torch": "UNPLACEABLE_BLOCK",
        "two_in_one_cell": "CELL_CONFLICT",
    }
    verdicts = {task.id: judge_build(task) for task in loaded.tasks if isinstance(task, BuildTask)}
    assert verdicts["floating"].code == "MISSING_MATERIALS" and "2 scaffolding blocks" in verdicts["floating"].reason
    assert verdicts["floating_with_dirt"].feasible
    hanging = verdicts["hanging_carpet"]
    assert hanging.feasible and hanging.code == "UNSUPPORTED_CELL" and "blue_carpet" in hanging.reason
    assert [u.block for u in hanging.unbuildable] == ["blue_carpet"]
    assert verdicts["short_of_gold"].code == "MISSING_MATERIALS" and "gold_block" in verdicts["short_of_gold"].reason
    assert verdicts["hollow_room"].feasible


def test_an_unbuildable_task_is_refused_before_any_action() -> None:
    tasks = _load(FIXTURES / "hard_cases.json")
    for name in ("floating", "short_of_gold"):
        result = run_build_task(tasks[name], PRIOR)
        assert not result.feasible and not result.success
        assert result.execution is None and result.commitment is None


def test_a_cell_vanilla_cannot_hold_is_left_out_and_the_rest_built_to_the_best_score() -> None:
    task = _load(FIXTURES / "hard_cases.json")["hanging_carpet"]
    result = run_build_task(task, PRIOR)
    assert result.feasible and not result.success and result.code == "UNSUPPORTED_CELL"
    assert result.built is not None and result.execution is not None
    (miss,) = result.built.mismatched  # the carpet alone: every other cell as the blueprint asks
    assert miss.expected == "blue_carpet" and miss.actual == AIR
    assert result.built.score == pytest.approx(1 - 1 / len(task.blueprint.blocks()))
    assert "vanilla cannot hold" in (result.message or "")


def test_an_experiment_load_refuses_a_construction_task_by_name() -> None:
    with pytest.raises(ConfigError) as caught:
        load_team_tasks(FIXTURES / "cabin.json", prior=PRIOR)
    assert caught.value.reason == "UNSUPPORTED_TASK_KIND"


# ------------------------------------------------------------------ checking as the benchmark checks


def test_the_score_skips_air_kept_clear_and_counts_air_filled_as_a_mismatch() -> None:
    expected = {(0, 0, 0): "stone", (1, 0, 0): AIR, (2, 0, 0): AIR, (0, 1, 0): "glass"}
    built = score_build(expected, {(0, 0, 0): "stone", (2, 0, 0): "dirt"})
    assert (built.matches, built.mismatches) == (1, 2)  # the glass is missing, the dirt stands in air
    assert built.score == pytest.approx(1 / 3) and not built.success
    assert [(level.level, level.matches, level.mismatches) for level in built.levels] == [(0, 1, 1), (1, 0, 1)]


def test_a_hollow_room_is_built_with_its_inside_left_clear() -> None:
    result = run_build_task(_load(FIXTURES / "hard_cases.json")["hollow_room"], PRIOR)
    assert result.success and result.built is not None
    assert result.built.score == 1.0 and result.built.matches == 26
    assert result.execution is not None
    assert (1, 1, 1) not in result.execution.final.blocks["build_site"]


def test_the_cabin_with_door_stairs_ladder_and_carpet_is_built_in_both_our_formats() -> None:
    for path in (FIXTURES / "cabin.json", FIXTURES / "cabin.toml"):
        result = run_build_task(_load(path)["cabin"], PRIOR)
        assert result.success, result.message
        assert result.execution is not None
        standing = result.execution.final.blocks["build_site"]
        assert standing[(2, 1, 0)] == standing[(2, 2, 0)] == "dark_oak_door"  # one item, two halves


# ------------------------------------------------------------------ generated blueprints


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), agents=st.integers(1, 5))
def test_every_generated_blueprint_is_built_exactly(tmp_path: Path, seed: int, agents: int) -> None:
    task = _written(tmp_path, random_build_task(seed, agents))
    result = run_build_task(task, PRIOR)
    assert result.success, (result.code, result.message)
    assert result.built is not None and result.built.score == 1.0
    assert result.model_calls == 0  # the build planner is a rule, and the record says so


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), agents=st.integers(1, 5), pick=st.integers(0, 10**6))
def test_one_block_short_is_refused_naming_it(tmp_path: Path, seed: int, agents: int, pick: int) -> None:
    raw = random_build_task(seed, agents)
    bags = raw["initial_inventory"]
    holders = [(index, block) for index, bag in sorted(bags.items()) for block in sorted(bag)]
    index, block = holders[pick % len(holders)]
    bags[index][block] -= 1
    if not bags[index][block]:
        del bags[index][block]
    result = run_build_task(_written(tmp_path, raw), PRIOR)
    assert not result.feasible and result.code == "MISSING_MATERIALS"
    assert block in (result.message or "") and result.execution is None


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), agents=st.integers(2, 5))
def test_each_builder_places_in_support_order_and_the_team_uses_its_materials(seed: int, agents: int) -> None:
    raw = random_build_task(seed, agents)
    task = BuildTask.model_validate(
        {
            "id": "g",
            "agents": [{"name": f"a{i}", "inventory": bag} for i, bag in sorted(raw["initial_inventory"].items())],
            "blueprint": raw["blueprint"],
        }
    )
    blocks = task.blueprint.blocks()
    order = {
        cell: index
        for index, cell in enumerate(build_order(blocks, plan_scaffold(blocks, task.blueprint.size()).cells))
    }
    by_form: dict[str, list[list[tuple[int, int, int]]]] = {}
    for form in ("share", "cells"):
        plan = plan_build(task, "a0", PRIOR, form=form)
        for path in (plan.proposal.self_plan, *(request.plan for request in plan.proposal.peer_requests)):
            for step in path:
                if step.skill == "build.place":
                    cells = [cell for _, cell in _placements(step, task)]
                    positions = [order[cell] for cell in cells]
                    assert positions == sorted(positions)  # each builder follows the one build order both sides derive
                    by_form.setdefault(form, []).append(cells)
    assert by_form["share"] == by_form["cells"]  # a share names exactly the cells the per-cell form spells out
    placed = [cell for cells in by_form["share"] for cell in cells]
    assert len(placed) == len(set(placed))
    wanted = {
        c
        for c, b in task.blueprint.blocks().items()
        if not (b.endswith("_door") and c[1] and task.blueprint.blocks().get((c[0], c[1] - 1, c[2])) == b)
    }
    assert set(placed) == wanted


def _placements(step: Task, task: BuildTask) -> list[Placement]:
    """What a build step places, from its cells or from its share of the task's blueprint."""
    if step.has("cells"):
        return list(parse_cells(str(step.get("cells"))))
    blocks = task.blueprint.blocks()
    return share_placements(blocks, task.blueprint.size(), parse_share(str(step.get("share"))))


def test_a_four_agent_team_builds_faster_than_one_agent_alone() -> None:
    raw = random_build_task(11, 4, levels=3)
    task = BuildTask.model_validate(
        {
            "id": "g",
            "agents": [{"name": f"a{i}", "inventory": bag} for i, bag in sorted(raw["initial_inventory"].items())],
            "blueprint": raw["blueprint"],
        }
    )
    result = run_build_task(task, PRIOR, mode=TeamMode.CENTRALIZED)
    assert result.success and result.planned_makespan_s is not None and result.single_crafter_s is not None
    assert result.planned_makespan_s < result.single_crafter_s


def test_tasks_run_writes_the_check_as_a_record_and_a_picture(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ran = CliRunner().invoke(app, ["tasks", "run", str(FIXTURES / "hard_cases.json"), "--out", str(out), "--jsonl"])
    assert ran.exit_code == 0, ran.output
    records = {r["task"]: r for r in map(json.loads, (out / "episodes.jsonl").read_text().splitlines())}
    room = records["hollow_room"]
    assert room["success"] and room["build"]["score"] == 1.0 and room["build"]["grids"][1][1] == "#.#"
    assert records["water_cell"]["refused"] and records["water_cell"]["code"] == "UNPLACEABLE_BLOCK"
    assert (out / "builds" / "hollow_room-sim.png").read_bytes().startswith(b"\x89PNG")
    assert "![hollow_room](builds/hollow_room-sim.png)" in (out / "report.md").read_text()
