"""Every team role is a backend: roles as written, peers that answer through backends, and hostile peers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gencoord.backends.families import parse_team_roles, recorded_label
from gencoord.backends.peer import RulePeer
from gencoord.backends.registry import team_players
from gencoord.cli import app
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import find_experiment
from gencoord.prior.load import team_prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.run.team import run_team_task
from gencoord.tasks.context import LocalContext
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask, TeamWorld
from gencoord.tasks.team_files import load_team_tasks
from tests.chat_stub import TeamApi, serving

PRIOR = team_prior()
MINDCRAFT = Path(__file__).parent / "fixtures" / "team" / "mindcraft_parity.json"
runner = CliRunner()


def _pickaxe() -> TeamTask:
    return TeamTask(
        id="pickaxe",
        agents=[
            TeamAgent(name="a", inventory={"stick": 2}),
            TeamAgent(name="b", inventory={"iron_ingot": 3, "dirt": 4}),
        ],
        goal=TeamGoal(item="iron_pickaxe", count=1, holder="a"),
        world=TeamWorld(crafting_table=True),
    )


def test_roles_are_read_as_written_with_rule_peers_by_default() -> None:
    bare = parse_team_roles("planner")
    assert (bare.lead.base, bare.peers.base, bare.label) == ("planner", "rule", "planner")
    both = parse_team_roles("lead=planner,peers=api:http://h:1/v1?a=1,b=2#m")
    assert both.lead.base == "planner" and both.peers.base == "api:http://h:1/v1?a=1,b=2#m"
    assert both.label == "planner · m via API at h:1 peers"
    assert recorded_label(str(both)) == both.label
    url = parse_team_roles("api:http://h:1/v1?x=1,y=2#m")  # a comma in a URL separates no roles
    assert url.lead.base == "api:http://h:1/v1?x=1,y=2#m" and url.peers.base == "rule"
    assert parse_team_roles("peers=rule").lead.base == "planner"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("lead=planner,captain=rule", "team roles are lead and peers"),
        ("captain=rule", "names no role"),
        ("lead=planner,lead=planner", "given twice"),
        ("lead=planner,peers=planner", "cannot answer as a team peer"),
        ("lead=rule", "cannot lead a team task"),
        ("lead=oracle", "unknown backend"),
    ],
)
def test_a_role_a_backend_cannot_play_is_refused_by_name(name: str, words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_team_roles(name)
    assert words in refused.value.message


def test_an_explicit_rule_peer_is_the_default_peer() -> None:
    task = _pickaxe()
    default = run_team_task(task, PRIOR)
    explicit = run_team_task(task, PRIOR, peer_backend=RulePeer(PRIOR))
    assert default.success and explicit.success
    assert [m.payload for m in default.wire.messages] == [m.payload for m in explicit.wire.messages]
    peer_lines = [g for g in explicit.generations if g.stage in (Stage.TEAM_HAVE, Stage.TEAM_RESPONSE)]
    assert [g.stage for g in peer_lines] == ["team_have", "team_response"] and explicit.model_calls == 0


class Scripted:
    """A peer backend that says whatever it is given: the shape of a broken or hostile model."""

    name = "scripted"

    def __init__(self, have: str, decision: str) -> None:
        self.lines = {Stage.TEAM_HAVE: have, Stage.TEAM_RESPONSE: decision}

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        return Reply(self.lines[request.stage], model_calls=1)


@pytest.mark.parametrize(
    ("have", "decision", "code"),
    [
        ("HAVE iron_ingot=3", "MAYBE reason=CAN_DO", "UNKNOWN_DECISION"),
        ("HAVE iron_ingot=3", "COUNTER reason=SHORT", "MALFORMED_RESPONSE"),
        ("HAVE iron_ingot=3", "REJECT reason=BLOCKED_SKILL", "MALFORMED_RESPONSE"),
        ("HAVE iron_ingot=3", "ACCEPT reason=CAN_DO\nSELF -", "MALFORMED_RESPONSE"),
        ("HAVE diamond=64", "ACCEPT reason=CAN_DO", "UNASKED_ITEM"),
        ("I have three ingots", "ACCEPT reason=CAN_DO", "MALFORMED_SUPPLY"),
        ("HAVE -", "ACCEPT reason=CAN_DO", "UNREACHABLE_GOAL"),
    ],
)
def test_a_peers_malformed_or_hostile_answer_is_a_typed_refusal(have: str, decision: str, code: str) -> None:
    result = run_team_task(_pickaxe(), PRIOR, peer_backend=Scripted(have, decision))
    assert not result.success and result.code == code and result.message
    assert result.execution is None  # nothing acted on what could not be read


def test_a_peer_that_lies_about_its_bag_is_caught_by_the_world() -> None:
    """A peer that accepts a hand-over it cannot make: the commitment forms, and H fails in the world."""
    liar = _pickaxe().model_copy(
        update={"agents": [TeamAgent(name="a", inventory={"stick": 2}), TeamAgent(name="b", inventory={"dirt": 4})]}
    )
    result = run_team_task(liar, PRIOR, peer_backend=Scripted("HAVE iron_ingot=3", "ACCEPT reason=CAN_DO"))
    assert not result.success and result.execution is not None and result.outcome is not None
    assert result.outcome.stages["G"] is False


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120), st.text(max_size=120))
def test_any_text_from_a_peer_ends_in_an_outcome_never_an_exception(have: str, decision: str) -> None:
    result = run_team_task(_pickaxe(), PRIOR, peer_backend=Scripted(have, decision))
    assert result.success or (result.code is not None and result.message)


def test_an_api_endpoint_plays_every_role_of_mindcraft_tasks() -> None:
    """Lead and peers through one OpenAI-compatible endpoint (the local stub answering as the rules would)."""
    tasks = load_team_tasks(MINDCRAFT, prior=PRIOR)
    with serving(TeamApi) as url:
        players = team_players(f"lead=api:{url}#stub,peers=api:{url}#stub", PRIOR)
        results = [run_team_task(task, PRIOR, lead_backend=players.lead, peer_backend=players.peers) for task in tasks]
    reference = [run_team_task(task, PRIOR) for task in tasks]
    assert [(r.success, r.code) for r in results] == [(r.success, r.code) for r in reference]
    assert any(r.success for r in results)
    for result, rules in zip(results, reference, strict=True):
        assert [m.payload for m in result.wire.messages] == [m.payload for m in rules.wire.messages]
        assert result.model_calls == len(result.generations)
        assert not result.generations or (result.tokens or 0) > 0


def test_tasks_run_takes_roles_and_records_who_played(tmp_path: Path) -> None:
    with serving(TeamApi) as url:
        roles = f"lead=planner,peers=api:{url}#stub"
        result = runner.invoke(app, ["tasks", "run", str(MINDCRAFT), "--backend", roles, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert records and all(r["backend"] == roles and r["lead_backend"] == "planner" for r in records)
    asked = [g for r in records for g in r["generations"] if g["stage"] == "team_have"]
    assert asked and all(g["model_calls"] == 1 and g["input_tokens"] for g in asked)
    refused = runner.invoke(app, ["tasks", "run", str(MINDCRAFT), "--backend", "lead=planner,peers=planner"])
    assert refused.exit_code == 2 and "cannot answer as a team peer" in refused.output


def test_the_shipped_bring_your_own_model_config_runs_an_endpoint_in_every_role(tmp_path: Path) -> None:
    shipped = find_experiment("team_api")
    text = shipped.read_text().replace('tasks = ["team/', f'tasks = ["{shipped.parent}/team/')
    config = tmp_path / "team_api.toml"
    with serving(TeamApi) as url:
        config.write_text(text.replace("http://localhost:8000/v1", url))
        result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "runs"), "--workers", "1"])
    assert result.exit_code == 0, result.output
    (run,) = (tmp_path / "runs").iterdir()
    records = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
    planner = {r["task"]: r for r in records if r["backend"] == "planner"}
    endpoint = {r["task"]: r for r in records if r["backend"] != "planner"}
    assert len(planner) == len(endpoint) == 12
    assert {t: r["success"] for t, r in endpoint.items()} == {t: r["success"] for t, r in planner.items()}
    for task, record in endpoint.items():
        assert record["model_calls"] == len(record["generations"]) and record["tokens"] > 0
        assert record["messages"] == planner[task]["messages"] and record["duration_s"] is not None


def test_speaking_agents_talk_in_words_that_the_extractor_reads_on_the_same_tasks() -> None:
    """An endpoint in every role on the free-form surface writes its own sentences; measured against the DSL."""
    tasks = load_team_tasks(MINDCRAFT, prior=PRIOR)
    with serving(TeamApi) as url:
        players = team_players(f"lead=api:{url}#stub,peers=api:{url}#stub", PRIOR)
        runs = {
            surface: [
                run_team_task(task, PRIOR, surface=surface, lead_backend=players.lead, peer_backend=players.peers)
                for task in tasks
            ]
            for surface in (SurfaceName.DSL, SurfaceName.FREEFORM)
        }
    typed, spoken = runs[SurfaceName.DSL], runs[SurfaceName.FREEFORM]
    assert [r.success for r in spoken] == [r.success for r in typed] and any(r.success for r in spoken)
    said = [m for r in spoken for m in r.wire.messages]
    assert said and all(" here." in m.payload or m.payload.startswith(("Okay ", "Sorry ")) for m in said)
    assert sum(r.wire.total_bytes for r in spoken) > sum(r.wire.total_bytes for r in typed)
    leads = [g.reply.text for r in spoken for g in r.generations if g.stage == Stage.TEAM_LEAD]
    assert leads and all(text.startswith("Hi team, ") for text in leads)  # the lead's own words went out
    assert all(r.failure is None for r in spoken if r.success)
