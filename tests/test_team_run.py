"""Team tasks end to end: planner, supply exchange, n-party commitment, execution, verification."""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gencoord.backends.registry import team_players
from gencoord.cli import app
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ParseError, ResolutionError
from gencoord.eval.config import find_experiment, load_experiment
from gencoord.eval.experiment import plan_run
from gencoord.eval.kinds.team.config import TeamExperimentConfig
from gencoord.eval.kinds.team.kind import team_tasks_of
from gencoord.planning.planner import dry_run, plan_team
from gencoord.prior import Prior
from gencoord.prior.load import team_prior
from gencoord.protocol.resolve import resolve_team
from gencoord.protocol.supply import SupplyQuery, parse_answer, parse_query
from gencoord.run.team import run_team_task
from gencoord.run.team_choices import TeamMode
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask, TeamWorld
from gencoord.tasks.team_files import load_team_tasks
from gencoord.tasks.world import team_world
from tests.chat_stub import ChatHandler, completion, serving
from tests.test_team_tasks import team_tasks

FIXTURES = Path(__file__).parent / "fixtures" / "team"
PRIOR: Prior = team_prior()
runner = CliRunner()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(team_tasks(), st.data())
def test_generated_tasks_succeed_end_to_end_and_a_missing_leaf_is_refused_before_acting(
    generated: tuple[TeamTask, Counter[str], set[str]], data: st.DataObject
) -> None:
    task, leaves, essential = generated
    result = run_team_task(task, PRIOR)
    assert result.feasible and result.success, (result.code, result.message)
    assert result.outcome is not None and result.outcome.stages["C"] and result.outcome.stages["G"]
    assert result.execution is not None
    assert all(seen.verified for seen in result.execution.handoffs)
    assert len(result.execution.handoffs) == len(result.commitment.handoffs if result.commitment else ())
    assume(essential)
    leaf = data.draw(st.sampled_from(sorted(essential)))
    holder = next(agent for agent in task.agents if agent.inventory.get(leaf))
    fewer = {item: n - (item == leaf) for item, n in holder.inventory.items()}
    short = TeamAgent(name=holder.name, inventory={item: n for item, n in fewer.items() if n})
    starved = task.model_copy(update={"agents": [short if a.name == holder.name else a for a in task.agents]})
    refused = run_team_task(starved, PRIOR)
    assert not refused.feasible and not refused.success and refused.execution is None
    assert refused.code == "UNREACHABLE_GOAL" and refused.message is not None
    assert f"needs {leaves[leaf]} {leaf}" in refused.message


def _task(agents: dict[str, dict[str, int]], item: str, count: int = 1, table: bool = True, **goal: str) -> TeamTask:
    return TeamTask(
        id="t",
        agents=[TeamAgent(name=name, inventory=inventory) for name, inventory in agents.items()],
        goal=TeamGoal(item=item, count=count, **goal),
        world=TeamWorld(crafting_table=table),
    )


def test_a_receiver_ledger_starts_from_what_it_holds() -> None:
    """The old refusal: 'needs 3 iron_ingot, but the handoff delivers only 1' when the receiver holds 2."""
    task = _task({"smith": {"iron_ingot": 2, "stick": 2}, "miner": {"iron_ingot": 1}}, "iron_pickaxe")
    plan = plan_team(task, "smith", PRIOR)
    assert plan.proposal is not None and plan.crafter == "smith" and plan.handoffs == 1
    episode, _ = team_world(task, PRIOR)
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    commitment = resolve_team(plan.proposal, "smith", holdings, PRIOR, episode)
    assert [(h.giver, h.receiver, h.item, h.quantity) for h in commitment.handoffs] == [
        ("miner", "smith", "iron_ingot", 1)
    ]
    with pytest.raises(ResolutionError) as raised:
        resolve_team(plan.proposal, "smith", {}, PRIOR, episode)  # counted from zero it does not add up
    assert raised.value.reason == "HANDOFF_QUANTITY"


def test_two_item_types_from_two_peers_make_one_commitment_with_two_handoffs() -> None:
    task = _task({"a": {"oak_planks": 6}, "b": {"book": 3}, "c": {"dirt": 4}}, "bookshelf")
    result = run_team_task(task, PRIOR)
    assert result.success, result.message
    assert result.commitment is not None and len(result.commitment.handoffs) == 1  # a crafts: only b's books move
    spread = _task({"a": {"dirt": 1}, "b": {"oak_planks": 6}, "c": {"book": 3}}, "bookshelf", holder="a")
    moved = run_team_task(spread, PRIOR)
    assert moved.success, moved.message
    assert moved.commitment is not None and len(moved.commitment.handoffs) >= 2
    assert moved.execution is not None and all(seen.verified for seen in moved.execution.handoffs)


def test_a_held_crafting_table_is_placed_as_a_skill_and_used() -> None:
    task = _task({"a": {"oak_planks": 6, "crafting_table": 1}, "b": {"book": 3}}, "bookshelf", table=False)
    result = run_team_task(task, PRIOR)
    assert result.success, result.message
    assert result.plan is not None and any(t.skill == "station.place" for t in result.plan.tasks)
    assert result.execution is not None
    assert any(record.action.name == "place_station" and record.ok for record in result.execution.records)


def test_one_agent_alone_commits_without_a_message_and_blocked_skills_are_respected() -> None:
    solo = _task({"a": {"oak_log": 1}, "b": {"oak_log": 5}}, "oak_planks", count=4)
    result = run_team_task(solo, PRIOR)
    assert result.success and result.wire.messages == [] and result.commitment is not None
    assert result.commitment.handoffs == ()
    blocked = TeamTask(
        id="blocked",
        agents=[
            TeamAgent(name="a", inventory={"oak_planks": 2}, blocked=["craft.item"]),
            TeamAgent(name="b", inventory={"dirt": 1}),
        ],
        goal=TeamGoal(item="stick", count=4),
    )
    crafted = run_team_task(blocked, PRIOR)
    assert crafted.success and crafted.commitment is not None
    assert {path.agent for path in crafted.commitment.paths if any(t.skill == "craft.item" for t in path.tasks)} == {
        "b"
    }


@pytest.mark.parametrize("surface", [SurfaceName.DSL, SurfaceName.FREEFORM])
def test_privacy_costs_messages_the_centralized_reference_does_not_send(surface: SurfaceName) -> None:
    task = _task({"a": {"oak_planks": 6}, "b": {"book": 3}, "c": {"dirt": 4}}, "bookshelf")
    private = run_team_task(task, PRIOR, surface=surface)
    central = run_team_task(task, PRIOR, mode=TeamMode.CENTRALIZED, surface=surface)
    assert private.success and central.success
    kinds = Counter(message.kind for message in private.wire.messages)
    assert kinds["ASK"] == kinds["HAVE"] == 2 and "ASK" not in {m.kind for m in central.wire.messages}
    assert private.wire.total_bytes > central.wire.total_bytes > 0


def test_answers_name_only_what_was_asked_and_hostile_answers_get_codes() -> None:
    asked = parse_query("ASK book oak_planks", lambda goal: ())
    assert parse_query("ASK FOR bookshelf", lambda goal: ("book", goal)) == SupplyQuery(
        ("book", "bookshelf"), "bookshelf"
    )
    assert parse_answer("HAVE book=3 CANNOT craft.item", asked).holds == (("book", 3),)
    for hostile, code in [
        ("HAVE diamond=64", "UNASKED_ITEM"),
        ("HAVE book=0", "MALFORMED_SUPPLY"),
        ("HAVE book=1 book=2", "DUPLICATE_ITEM"),
        ("HAVE book=99999999", "MALFORMED_SUPPLY"),
        ("HAVE\nbook=1", "MALFORMED_SUPPLY"),
        ("ASK book", "MALFORMED_SUPPLY"),
        (b"\xff", "INVALID_UTF8"),
    ]:
        with pytest.raises(ParseError) as raised:
            parse_answer(hostile, asked)
        assert raised.value.reason == code or raised.value.code.value in ("PARSE_FAILURE", "WIRE_FAILURE")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_any_answer_text_parses_or_fails_with_a_parse_error(text: str | bytes) -> None:
    try:
        parse_answer(text, SupplyQuery(("book", "stick")))
        parse_query(text, lambda goal: (goal,))
    except ParseError:
        pass


def test_tasks_run_writes_one_json_object_per_task_and_a_report(tmp_path: Path) -> None:
    files = [str(FIXTURES / "mindcraft_mixed.json"), str(FIXTURES / "own_format.toml")]
    out = tmp_path / "run"
    result = runner.invoke(app, ["tasks", "run", *files, "--out", str(out), "--jsonl"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    tasks = [task for path in files for task in load_team_tasks(Path(path), prior=PRIOR)]
    assert [line["task"] for line in lines] == [task.id for task in tasks]
    assert list(lines[0]) == [
        "task",
        "agents",
        "success",
        "feasible",
        "code",
        "message",
        "messages",
        "wire_bytes",
        "model_calls",
        "duration_s",
        "verdict",
    ]
    for line in lines:
        assert (line["code"] is None) == line["success"]
        assert line["success"] is False or line["duration_s"] is not None
    refused = {line["task"]: line for line in lines}["cake_five"]
    assert not refused["feasible"] and "needs 3 milk_bucket, team has 2" in refused["message"]
    report = (out / "report.md").read_text()
    assert "## Traces" in report and "hand-over:" in report
    again = runner.invoke(app, ["tasks", "run", *files, "--out", str(out), "--jsonl"])
    assert again.exit_code == 0 and again.stdout == result.stdout  # resumed: nothing runs twice
    records = (out / "episodes.jsonl").read_text().splitlines()
    assert len(records) == len(tasks)


def test_tasks_run_usage_errors_exit_2(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["tasks", "run", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2
    backend = runner.invoke(app, ["tasks", "run", str(FIXTURES / "own_format.toml"), "--backend", "oracle"])
    assert backend.exit_code == 2 and "planner" in backend.output


def _scripted(text: str) -> type[ChatHandler]:
    class Scripted(ChatHandler):
        def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            assert "goal 1 iron_pickaxe for a" in body["messages"][-1]["content"]  # its private view
            return 200, completion(body["model"], text, 100, 40)

    return Scripted


def test_the_api_backend_leads_a_team_through_the_same_pipeline() -> None:
    task = _task({"a": {"stick": 2}, "b": {"iron_ingot": 3}}, "iron_pickaxe", holder="a")
    scripted = (
        "SELF craft.item(q=1,input=iron_ingot,item=iron_pickaxe,station=crafting_station)\n"
        "REQ b resource.deliver(q=3,item=iron_ingot,to=a)"
    )
    with serving(_scripted(scripted)) as url:
        result = run_team_task(task, PRIOR, lead_backend=team_players(f"api:{url}#stub", PRIOR).lead)
    assert result.success and result.model_calls == 1, result.message
    assert [m.kind for m in result.wire.messages] == ["ASK", "HAVE", "PROPOSAL", "RESPONSE"]
    wrong_text = "SELF craft.item(q=1,item=iron_pickaxe)\nREQ b resource.deliver(q=9,item=dirt,to=a)"
    with serving(_scripted(wrong_text)) as url:
        wrong = run_team_task(task, PRIOR, lead_backend=team_players(f"api:{url}#stub", PRIOR).lead)
    assert not wrong.success and wrong.code is not None and wrong.execution is None


@pytest.mark.parametrize("kind", ["model", "constrained"])
def test_a_tiny_trained_model_as_team_lead_gives_a_typed_outcome(kind: str) -> None:
    checkpoint = find_experiment("request_intervention").parent / "checkpoints" / "tiny-dsl"
    task = _task({"a": {"stick": 2}, "b": {"iron_ingot": 3}}, "iron_pickaxe", holder="a")
    result = run_team_task(task, PRIOR, lead_backend=team_players(f"{kind}:{checkpoint}", PRIOR).lead)
    assert result.success or (result.code is not None and result.message)
    assert result.model_calls >= 1 or result.code == "GRAMMAR_DEAD_END"  # a tiny vocabulary may not spell the task


def test_a_team_experiment_runs_through_the_runner_with_statistics_and_an_n_agent_viewer(tmp_path: Path) -> None:
    config = tmp_path / "team.toml"
    files = [str(FIXTURES / "mindcraft_mixed.json"), str(FIXTURES / "own_format.toml")]
    config.write_text(
        'name = "team_fixture"\nkind = "team"\n'
        f"tasks = {json.dumps(files)}\n"
        'modes = ["private", "centralized"]\nsurfaces = ["dsl", "freeform"]\n'
    )
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "runs"), "--workers", "1"])
    assert result.exit_code == 0, result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    tasks = [task for path in files for task in load_team_tasks(Path(path), prior=PRIOR)]
    records = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == len(tasks) * 4
    assert {(r["mode"], r["surface"]) for r in records} == {
        (mode, surface) for mode in ("private", "centralized") for surface in ("dsl", "freeform")
    }
    report = (run_dir / "report.md").read_text()
    assert "Team tasks: success and feasibility by team size" in report and "cost of privacy" in report
    html = (run_dir / "report.html").read_text()
    payload = re.search(r'<script id="episodes-data" type="application/octet-stream">([^<]+)</script>', html)
    assert payload is not None and "function showTeam" in html
    shown = json.loads(gzip.decompress(base64.b64decode(payload.group(1))))
    widest = max(shown, key=lambda e: len((e.get("commitment") or {"paths": {}})["paths"]))
    assert len(widest["commitment"]["paths"]) >= 3 and widest["wire"] and widest["plan"]["tasks"]


def test_a_team_experiment_with_a_missing_task_file_fails_before_running(tmp_path: Path) -> None:
    config = tmp_path / "team.toml"
    config.write_text('name = "broken"\nkind = "team"\ntasks = ["nowhere.json"]\n')
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2 and "nowhere.json" in result.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_the_shipped_team_experiment_names_real_tasks() -> None:
    config = load_experiment(find_experiment("team_tasks"))
    assert isinstance(config, TeamExperimentConfig)
    assert len(plan_run(config).jobs) == len(team_tasks_of(config)) * 4 >= 24 * 4


SKILLS = ["craft.item", "resource.deliver", "resource.obtain", "station.place"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(team_tasks(), st.data())
def test_with_blocked_skills_and_any_holder_a_task_succeeds_or_is_refused_before_acting(
    generated: tuple[TeamTask, Counter[str], set[str]], data: st.DataObject
) -> None:
    task, _, _ = generated
    agents = [
        agent.model_copy(update={"blocked": data.draw(st.lists(st.sampled_from(SKILLS), max_size=2, unique=True))})
        for agent in task.agents
    ]
    holder = data.draw(st.sampled_from(["any", "depot_chest", *(agent.name for agent in agents)]))
    goal = TeamGoal(item=task.goal.item, count=task.goal.count, holder=holder)
    blocked = task.model_copy(update={"agents": agents, "goal": goal})
    mode = data.draw(st.sampled_from(list(TeamMode)))
    result = run_team_task(blocked, PRIOR, mode=mode)
    if not result.success:
        assert result.execution is None and not result.feasible, (result.code, result.message)
        assert result.code in ("UNREACHABLE_GOAL", "NO_STATION", "NO_ASSIGNMENT") and result.message


def test_a_goal_already_held_by_its_holder_needs_no_coordination() -> None:
    held = _task({"a": {"stick": 1}, "b": {"stick": 4}}, "stick", count=4, holder="b")
    result = run_team_task(held, PRIOR)
    assert result.success and result.wire.messages == [] and result.execution is None
    elsewhere = _task({"a": {"stick": 4}, "b": {"dirt": 2}}, "stick", count=4, holder="b")
    moved = run_team_task(elsewhere, PRIOR)  # held, but by the wrong agent: it must be handed over
    assert moved.success and moved.commitment is not None and len(moved.commitment.handoffs) >= 1


def test_a_dry_run_that_falls_short_says_which_step_and_why() -> None:
    """What a planner reports when every draft fails on the simulator (a herd's drops rolled low, say)."""
    task = _task({"smith": {"iron_ingot": 2, "stick": 2}, "miner": {"iron_ingot": 1}}, "iron_pickaxe")
    plan = plan_team(task, "smith", PRIOR)
    assert plan.proposal is not None
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    episode, world = team_world(task, PRIOR)
    final, why = dry_run(plan.proposal, "smith", holdings, episode, world, PRIOR)
    assert final is not None and why == ""
    robbed = _task({"smith": {"iron_ingot": 2, "stick": 2}, "miner": {}}, "iron_pickaxe")
    _, empty_world = team_world(robbed, PRIOR)  # the miner's ingot, in the lead's view, is not in the world
    final, why = dry_run(plan.proposal, "smith", holdings, episode, empty_world, PRIOR)
    assert final is None and why.startswith("miner give_item: MISSING_ITEMS"), why
