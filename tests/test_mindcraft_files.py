"""MINDcraft's crafting files as they ship: every command, every field, one bad task refused alone, hostile files."""

from __future__ import annotations

import json
import random
import tempfile
import tomllib
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gencoord.cli import app
from gencoord.errors import ConfigError
from gencoord.planning.feasibility import diagnose
from gencoord.prior.load import team_prior
from gencoord.run.team import HANDOVER_FLOOR_S, lead_of, run_team_task
from gencoord.tasks.generate import mindcraft_entry, random_mindcraft_task, random_task
from gencoord.tasks.mindcraft_data import mindcraft_world
from gencoord.tasks.team import INVENTORY_SLOTS, MAX_AGENTS, TeamWorld
from gencoord.tasks.team_files import load_team_tasks, read_task_file
from gencoord.tasks.world import team_world

FIXTURES = Path(__file__).parent / "fixtures" / "team"
SHIPPED = FIXTURES / "mindcraft_as_shipped.json"
PRIOR = team_prior()
TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "mindcraft" / "crafting" / "filtered_train_tasks.json"

# MINDcraft's command names (src/agent/commands/actions.js and queries.js, across its releases)
MINDCRAFT_COMMANDS = [
    "!newAction", "!stop", "!stfu", "!restart", "!clearChat", "!goToPlayer", "!followPlayer", "!goToCoordinates",
    "!searchForBlock", "!searchForEntity", "!moveAway", "!rememberHere", "!goToRememberedPlace", "!givePlayer",
    "!consume", "!equip", "!putInChest", "!takeFromChest", "!viewChest", "!discard", "!collectBlocks",
    "!craftRecipe", "!smeltItem", "!clearFurnace", "!placeHere", "!attack", "!attackPlayer", "!goToBed",
    "!activate", "!stay", "!setMode", "!goal", "!endGoal", "!showVillagerTrades", "!tradeWithVillager",
    "!startConversation", "!endConversation", "!lookAtPlayer", "!lookAtPosition", "!digDown", "!useOn",
    "!goToBlock", "!goToPlace", "!showVillagers", "!showTrades", "!trade", "!collectAllBlocks",
    "!stats", "!inventory", "!nearbyBlocks", "!craftable", "!entities", "!modes", "!savedPlaces",
    "!getCraftingPlan", "!searchWiki", "!help", "!checkBlueprint", "!checkBlueprintLevel", "!getBlueprint",
    "!getBlueprintLevel",
]  # fmt: skip


def _file(tmp_path: Path, document: object, name: str = "tasks.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_bad_task_is_refused_alone_and_the_rest_of_its_file_loads() -> None:
    loaded = read_task_file(SHIPPED, prior=PRIOR)
    refused = {refusal.task: refusal.code for refusal in loaded.refused}
    assert refused == {"a_negative_count": "BAD_COUNT", "a_command_nobody_has": "UNKNOWN_COMMAND"}
    assert all(str(SHIPPED) in refusal.message for refusal in loaded.refused)
    assert len(loaded.tasks) == 4
    with pytest.raises(ConfigError) as strict:  # an experiment's files are all-or-nothing
        load_team_tasks(SHIPPED, prior=PRIOR)
    assert strict.value.reason == "BAD_COUNT"


def test_every_field_is_read_or_reported_in_the_notes() -> None:
    tasks = {task.id: task for task in read_task_file(SHIPPED, prior=PRIOR).tasks}
    chest = tasks["three_with_missing_logs"]
    notes = " | ".join(chest.notes)
    for words in ("needing a crafting table", "missing (to be gathered or made): oak_log", "goal and conversation"):
        assert words in notes
    assert "fields gencoord does not read" not in notes  # restrict_to_inventory and usernames are MINDcraft's own
    assert "!inventory" in notes and "!stats" in notes  # bars with no analogue are kept, not dropped
    bow = tasks["multiagent_crafting_bow_requires_ctable_partial_plan__depth_0"]
    assert any("recipe depth 0 of 2" in note for note in bow.notes)
    extra = read_task_file(SHIPPED, prior=PRIOR)  # unchanged file, unchanged verdicts
    assert [t.id for t in extra.tasks] == list(tasks)


def test_an_old_item_name_is_read_as_todays_and_noted() -> None:
    old = next(task for task in read_task_file(SHIPPED, prior=PRIOR).tasks if task.id == "old_name_rose_red")
    assert old.agents[0].inventory == {"red_dye": 1, "white_wool": 1}
    assert "pre-1.13 item name 'rose_red' read as 'red_dye'" in old.notes
    assert diagnose(old, PRIOR).feasible


def test_every_mindcraft_command_is_known_and_an_unknown_one_is_named(tmp_path: Path) -> None:
    raw = {"agent_count": 1, "target": "stick", "initial_inventory": {"0": {"oak_planks": 2}}}
    document = {f"t{i}": {**raw, "blocked_actions": {"0": [command]}} for i, command in enumerate(MINDCRAFT_COMMANDS)}
    loaded = read_task_file(_file(tmp_path, document), prior=PRIOR)
    assert loaded.refused == () and len(loaded.tasks) == len(MINDCRAFT_COMMANDS)
    table = tomllib.loads((resources.files("gencoord.tasks") / "data" / "mindcraft.toml").read_text())
    mapped = {*table["blocked_commands"], *table["knowledge_commands"]}
    mapped |= {command for group in table["unmodelled"].values() for command in group}
    assert set(MINDCRAFT_COMMANDS) <= mapped
    crafter = next(task for task in loaded.tasks if task.agents[0].blocked == ["craft.item"])
    assert not diagnose(crafter, PRIOR).feasible  # barring !craftRecipe bars the only crafter
    assert any("!craftRecipe → craft.item" in note for note in crafter.notes)  # the mapping stays with the task


def test_a_barred_crafting_plan_moves_the_lead_to_a_teammate_that_can_look_it_up() -> None:
    tasks = {task.id: task for task in read_task_file(SHIPPED, prior=PRIOR).tasks}
    partial = tasks["multiagent_crafting_bow_requires_ctable_partial_plan__depth_0"]
    assert [agent.can_plan for agent in partial.agents] == [False, True] and lead_of(partial) == "agent_1"
    nobody = tasks["multiagent_crafting_cyan_carpet_requires_ctable_no_plan__depth_2"]
    assert lead_of(nobody) == "agent_0" and any("shared recipe prior" in note for note in nobody.notes)
    result = run_team_task(partial, PRIOR)
    assert result.success and result.lead == "agent_1" and result.wire.messages[0].sender == "agent_1"


def test_the_world_offers_only_what_breaks_by_hand_and_stocks_nothing() -> None:
    task = next(t for t in read_task_file(SHIPPED, prior=PRIOR).tasks if t.id == "three_with_missing_logs")
    _, world = team_world(task, PRIOR)
    assert world.contents == {} and all(ref.kind != "container" for ref in world.refs.values())
    blocks = {ref.block for ref in world.refs.values() if ref.kind == "resource"}
    assert blocks == set(mindcraft_world())  # each resource area is its own block, broken by hand
    for block in blocks:
        assert PRIOR.game.blocks[block].harvest_tools is None
    result = run_team_task(task, PRIOR)  # the missing logs are dug, then the chest is made
    assert result.success and any(a.action.name == "obtain_block" for a in result.execution.records)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        ({"agent_count": 10**9, "target": "stick"}, "TOO_MANY_AGENTS"),
        ({"agent_count": MAX_AGENTS + 1, "target": "stick"}, "TOO_MANY_AGENTS"),
        ({"agent_count": 1, "target": "stick", "number_of_target": 10**11}, "UNHOLDABLE_GOAL"),
        ({"agent_count": 1, "target": "bow", "number_of_target": INVENTORY_SLOTS + 1}, "UNHOLDABLE_GOAL"),
        ({"agent_count": 1, "target": "stick", "initial_inventory": {"0": {"dirt": 64 * 37}}}, "INVENTORY_OVERFLOW"),
        ({"agent_count": 1, "target": "stick", "number_of_target": -3}, "BAD_COUNT"),
        ({"agent_count": 1, "target": "stick", "number_of_target": 1.5}, "BAD_COUNT"),
        ({"agent_count": 1, "target": "x" * 10_000}, "UNKNOWN_ITEM"),
        ({"agent_count": 1, "target": ["stick", "bow"]}, "UNSUPPORTED_TARGET"),
        ({"agent_count": 1, "target": 7}, "BAD_TASK"),
        ({"agent_count": 1, "target": "stick", "blocked_actions": {"0": "!craftRecipe"}}, "BAD_TASK"),
        ({"agent_count": 1, "target": "stick", "timeout": -1}, "BAD_TASK"),
        ({"agent_count": True, "target": "stick"}, "BAD_TASK"),
    ],
)
def test_a_hostile_task_gets_its_own_code_and_its_neighbour_still_loads(
    tmp_path: Path, entry: dict[str, object], code: str
) -> None:
    good = {"agent_count": 1, "target": "stick", "initial_inventory": {"0": {"oak_planks": 2}}}
    loaded = read_task_file(_file(tmp_path, {"bad": entry, "good": good}), prior=PRIOR)
    assert [(r.task, r.code) for r in loaded.refused] == [("bad", code)]
    assert [task.id for task in loaded.tasks] == ["good"]


@pytest.mark.parametrize(
    ("target", "count", "expected"),
    [("Stick", None, ("stick", 1)), (["stick"], 3, ("stick", 3)), ({"stick": 5}, None, ("stick", 5)),
     ("stick", {"stick": 2}, ("stick", 2))],
)  # fmt: skip
def test_targets_are_normalized_as_mindcraft_does(
    tmp_path: Path, target: object, count: object, expected: tuple[str, int]
) -> None:
    entry: dict[str, object] = {"agent_count": 1, "target": target, "initial_inventory": {"0": {"Oak_Planks": 9}}}
    if count is not None:
        entry["number_of_target"] = count
    (task,) = read_task_file(_file(tmp_path, {"t": entry}), prior=PRIOR).tasks
    assert (task.goal.item, task.goal.count) == expected and task.agents[0].inventory == {"oak_planks": 9}


def test_a_file_that_is_not_the_format_fails_whole_with_a_code(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ConfigError) as nested:
        read_task_file(deep, prior=PRIOR)
    assert nested.value.reason == "INVALID_JSON" and "nested too deeply" in nested.value.message
    result = CliRunner().invoke(app, ["tasks", "check", str(deep)])
    assert result.exit_code == 2 and "Traceback" not in result.output and "nested too deeply" in result.stderr


names = st.one_of(
    st.sampled_from(["stick", "oak_planks", "bow", "rose_red", "!craftRecipe", "0"]), st.text(max_size=30)
)
counts = st.one_of(st.integers(-(10**12), 10**12), st.floats(allow_nan=True), st.booleans(), st.none(), names)
hostile_entry = st.fixed_dictionaries(
    {},
    optional={
        "agent_count": counts,
        "target": st.one_of(names, st.lists(names, max_size=3), st.dictionaries(names, counts, max_size=3)),
        "number_of_target": st.one_of(counts, st.dictionaries(names, counts, max_size=2)),
        "initial_inventory": st.dictionaries(
            st.one_of(st.sampled_from(["0", "1", "2", "15", "16"]), names),
            st.one_of(st.dictionaries(names, counts, max_size=4), counts),
            max_size=4,
        ),
        "blocked_actions": st.dictionaries(
            st.sampled_from(["0", "1", "3"]), st.one_of(st.lists(names, max_size=3), counts), max_size=3
        ),
        "timeout": counts,
        "missing_items": st.one_of(st.lists(names, max_size=3), counts),
        "goal": st.one_of(names, st.dictionaries(names, names, max_size=2)),
    },
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.text(min_size=1, max_size=12), hostile_entry, min_size=1, max_size=5))
@example(  # a digit to str.isdigit() that int() refuses: the agent index must be written in ASCII digits
    {"0": {"agent_count": None, "goal": "oak_planks", "initial_inventory": {"²": 0}, "blocked_actions": {}}}
)
def test_any_mindcraft_file_loads_task_by_task_or_refuses_each_with_a_code(
    tmp_path: Path, document: dict[str, object]
) -> None:
    path = _file(tmp_path, document)
    try:
        loaded = read_task_file(path, prior=PRIOR)
    except ConfigError as error:  # only the file as a whole: here, not recognizable as MINDcraft's format
        assert error.reason == "UNKNOWN_TASK_FORMAT"
        return
    assert len(loaded.tasks) + len(loaded.refused) == len(document)
    assert all(refusal.code and str(path) in refusal.message for refusal in loaded.refused)
    for task in loaded.tasks:
        assert 1 <= len(task.agents) <= MAX_AGENTS and task.goal.count >= 1
        diagnose(task, PRIOR)  # judged without raising


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.integers(2, 8))
def test_generated_mindcraft_tasks_load_and_succeed_on_the_simulator(seed: int, agents: int) -> None:
    """MINDcraft's crafting task shape (target, depth, plan availability, blocked commands, items split over the
    team, logs to dig) at 2-8 agents: every draw is feasible by construction and must succeed."""
    entry = random_mindcraft_task(PRIOR, random.Random(seed), agents, mindcraft_world(), gathered=0.5)
    if entry is None:
        return
    with tempfile.TemporaryDirectory() as folder:
        (task,) = read_task_file(_file(Path(folder), {"generated": entry}), prior=PRIOR).tasks
    result = run_team_task(task, PRIOR)
    assert result.success, (result.code, result.message)
    if result.planned_makespan_s is not None and result.single_crafter_s is not None:
        slack = 0.0 if result.wire.messages else HANDOVER_FLOOR_S  # a lead that need not ask is within a hand-over
        assert result.planned_makespan_s <= result.single_crafter_s + slack + 1e-6  # the choice ranges over them
    if not result.wire.messages:  # nobody asked: the lead's own bag made the goal, nothing gathered
        records = result.execution.records if result.execution is not None else []  # none: the goal already held
        assert not [r for r in records if r.action.name == "give_item"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.integers(0, 2**32), st.integers(2, 8), st.data())
def test_a_generated_mindcraft_task_one_unit_short_is_refused_before_acting_naming_it(
    seed: int, agents: int, data: st.DataObject
) -> None:
    """The infeasible half: one unit of a leaf nothing stands in for (every recipe on its way has one variant)
    and the survival world does not grow, taken from the bag that holds it, makes the task unreachable; it
    must be refused before any action, naming that leaf and the count the tree needs."""
    rng = random.Random(seed)
    generated = random_task(PRIOR, rng, agents, distractors=rng.randint(0, 2))
    assume(generated is not None)
    assert generated is not None
    world = mindcraft_world()
    entry = mindcraft_entry(generated, rng, world, gathered=0.5)
    bags: dict[str, dict[str, int]] = entry["initial_inventory"]
    scarce = sorted(leaf for leaf in generated.essential if leaf not in world and leaf != "crafting_table")
    assume(scarce)
    leaf = data.draw(st.sampled_from(scarce))
    holder = next(name for name, bag in sorted(bags.items()) if bag.get(leaf))
    bags[holder][leaf] -= 1
    with tempfile.TemporaryDirectory() as folder:
        (task,) = read_task_file(_file(Path(folder), {"starved": entry}), prior=PRIOR).tasks
    result = run_team_task(task, PRIOR)
    assert not result.success and not result.feasible and result.execution is None, (result.code, result.message)
    assert result.code == "UNREACHABLE_GOAL" and result.message is not None
    needed = generated.leaves[leaf]
    has = f"team has {needed - 1}" if needed > 1 else "team has none"
    assert f"needs {needed} {leaf}, {has}" in result.message, result.message


@pytest.mark.skipif(not TRAIN.exists(), reason="MINDcraft's train split lies in ../shared/data (not in a wheel)")
def test_the_shipped_train_split_runs_whole_on_the_simulator() -> None:
    loaded = read_task_file(TRAIN, prior=PRIOR)
    assert loaded.refused == () and len(loaded.tasks) == 65
    results = [run_team_task(task, PRIOR) for task in loaded.tasks]
    failed = [(r.task.id, r.code) for r in results if not r.success]
    assert failed == []
    for result in (r for r in results if not r.wire.messages):  # no message only where the lead's bag suffices
        lead = next(agent for agent in result.task.agents if agent.name == result.lead)
        alone = result.task.model_copy(update={"agents": [lead], "world": TeamWorld(crafting_table=False)})
        assert diagnose(alone, PRIOR).feasible, result.task.id


SINGLE_INGREDIENT = ["nether_bricks", "iron_block", "stone_bricks", "bookshelf", "hay_block"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SINGLE_INGREDIENT), st.integers(2, 8), st.integers(1, 3), st.integers(0, 2**32))
def test_overlapping_same_item_handovers_each_verify_their_own_items(
    goal: str, agents: int, count: int, seed: int
) -> None:
    """Many givers of one item to one crafter, at once: every H counts its own hand-over, and they add up."""
    recipe = PRIOR.game.recipes[goal][0]
    needs = {item: n * recipe.crafts_for(count) for item, n in recipe.ingredients.items()}
    rng = random.Random(seed)
    bags: list[dict[str, int]] = [{} for _ in range(agents)]
    for item, n in needs.items():
        for _ in range(n):
            bag = bags[rng.randrange(agents)]
            bag[item] = bag.get(item, 0) + 1
    bags[0]["crafting_table"] = 1
    entry = {"agent_count": agents, "target": goal, "number_of_target": count,
             "initial_inventory": {str(i): bag for i, bag in enumerate(bags)}}  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        (task,) = read_task_file(_file(Path(folder), {"t": entry}), prior=PRIOR).tasks
    result = run_team_task(task, PRIOR)
    assert result.success, (result.code, result.message)
    assert result.execution is not None and result.outcome is not None and result.commitment is not None
    assert result.outcome.handoff in (True, None)
    assert len(result.execution.handoffs) == len(result.commitment.handoffs)
    for seen in result.execution.handoffs:
        assert seen.delivered == seen.check.quantity and seen.verified
    for handoff in result.commitment.handoffs:  # what was credited into each bag is what was committed
        credited = sum(
            seen.delivered or 0
            for seen in result.execution.handoffs
            if (seen.check.receiver, seen.check.item) == (handoff.receiver, handoff.item)
        )
        committed = sum(
            h.quantity for h in result.commitment.handoffs if (h.receiver, h.item) == (handoff.receiver, handoff.item)
        )
        assert credited == committed


def test_a_peer_gathers_and_makes_a_sub_assembly_while_the_crafter_works(tmp_path: Path) -> None:
    """A lectern from nothing but a table and leather: one crafter alone fills a path to the cap of 8.
    The peer gathers sugar cane and makes the paper meanwhile, so the team finishes first."""
    entry = {
        "goal": "Collaborate with other agents to craft a lectern",
        "agent_count": 2,
        "initial_inventory": {"0": {"crafting_table": 1}, "1": {"leather": 3}},
        "target": "lectern",
        "number_of_target": 1,
        "blocked_actions": {"0": [], "1": []},
        "missing_items": [],
        "requires_crafting_table": True,
    }
    (task,) = read_task_file(_file(tmp_path, {"lectern": entry}), prior=PRIOR).tasks
    result = run_team_task(task, PRIOR)
    assert result.success, (result.code, result.message)
    assert result.commitment is not None
    paths = {path.agent: [t.skill for t in path.tasks] for path in result.commitment.paths}
    assert all(len(skills) <= PRIOR.vocab.max_path_tasks for skills in paths.values())
    assert all("craft.item" in skills for skills in paths.values())  # both agents craft
    assert result.planned_makespan_s is not None and result.single_crafter_s is not None
    assert result.planned_makespan_s < result.single_crafter_s
