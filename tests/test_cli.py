"""The command line: exit codes and machine-readable output for shell pipelines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from gencoord.cli import app
from tests.conftest import ACTIVE_SENDER

runner = CliRunner()


def test_parse_prints_the_canonical_form() -> None:
    noisy = ACTIVE_SENDER.replace("q=8,item", "item=oak_planks,count=8,ignored").replace(",ignored=oak_planks", "")
    result = runner.invoke(app, ["parse", "-"], input=noisy + "\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == ACTIVE_SENDER


def test_parse_json_reports_code_stage_location() -> None:
    result = runner.invoke(
        app, ["parse", "--json", "-"], input="SELF -\nREQ agent_a resource.deliver(q=1,item=stick,dest=order_chest)"
    )
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["ok"] is False and payload["code"] == "CONTRACT_REJECT" and payload["stage"] == "contract"
    assert payload["location"] == {"section": "REQ", "task_index": 1, "skill": "resource.deliver", "key": "dest"}
    assert "did you mean 'dst'" in payload["message"]


def test_parse_failure_exit_one_and_ok_json(tmp_path: Path) -> None:
    bad = runner.invoke(app, ["parse", "--json", "-"], input="SELF -\nREQ -\nREQ -")
    assert bad.exit_code == 1 and json.loads(bad.stdout)["code"] == "PARSE_FAILURE"
    message = tmp_path / "m.json"
    message.write_text(
        '{"self_plan":[],"peer_requests":[{"target":"agent_b","requested_plan":[{"skill":"control.wait","args":{"quantity":3}}]}]}'
    )
    good = runner.invoke(app, ["parse", "--surface", "json", "--json", str(message)])
    assert good.exit_code == 0 and json.loads(good.stdout) == {
        "ok": True,
        "canonical": json.loads(good.stdout)["canonical"],
    }
    assert '"quantity":3' in json.loads(good.stdout)["canonical"]


def test_usage_errors_exit_two(tmp_path: Path) -> None:
    assert runner.invoke(app, ["parse", str(tmp_path / "absent")]).exit_code == 2
    assert runner.invoke(app, ["parse", "--surface", "yaml", "-"], input="").exit_code == 2
    broken = tmp_path / "prior.toml"
    broken.write_text("[")
    assert runner.invoke(app, ["parse", "--prior", str(broken), "-"], input="SELF -\nREQ -").exit_code == 2
    assert runner.invoke(app, ["parse", "--template", "NOPE", "-"], input="SELF -\nREQ -").exit_code == 2


def test_agent_option_names_the_sender() -> None:
    result = runner.invoke(app, ["parse", "--agent", "agent_b", "-"], input=ACTIVE_SENDER)
    assert result.exit_code == 0
    self_request = runner.invoke(app, ["parse", "--agent", "agent_a", "--json", "-"], input=ACTIVE_SENDER)
    assert self_request.exit_code == 1 and json.loads(self_request.stdout)["reason"] == "SELF_HANDOFF"


def test_demo_shows_both_examples() -> None:
    result = runner.invoke(app, ["demo"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "binding=WORK_BRANCH" in result.stdout
    assert "ACCEPT reason=LOCAL_WORKCELL_CAN_PROCESS" in result.stdout
    assert "CRAFT_AT_REQUESTER_HANDOFF_FINISHED" in result.stdout
    assert "container_contains(order_chest, 4 stick)" in result.stdout


def test_episode_json_record_of_the_papers_episode() -> None:
    args = ["episode", "--template", "ACTIVE_ORDER_BRANCH", "--binding", "WORK_BRANCH", "--seed", "7", "--role", "1"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert len(record["actions"]) == 13 and record["outcome"]["G"] is True
    assert record["handoffs"][0]["giver"] == {"agent": "agent_b", "before": 8, "after": 0}


def test_episode_trace_shows_messages_actions_and_verdict() -> None:
    result = runner.invoke(app, ["episode", "--template", "GC_STICK_ORDER", "--mode", "FINISHED_RECEIVER"])
    assert result.exit_code == 0, result.output
    assert "COUNTER" in result.stdout and "craft_item" in result.stdout and "G ✓" in result.stdout


def test_episode_exit_codes_for_failure_and_bad_usage() -> None:
    failing = runner.invoke(app, ["episode", "--template", "CHEST_A_OR_B", "--fault", "insufficient_handoff", "--json"])
    assert failing.exit_code == 1
    assert json.loads(failing.stdout)["outcome"]["failure"] == "HANDOFF_FAILURE"
    unknown = runner.invoke(app, ["episode", "--template", "NOPE"])
    assert unknown.exit_code == 2 and "unknown template" in unknown.output
    wrong = runner.invoke(app, ["episode", "--template", "CHEST_A_OR_B", "--condition", "feedback"])
    assert wrong.exit_code == 2 and "does not apply" in wrong.output


def test_episode_surfaces_backends_and_horizons() -> None:
    talk = runner.invoke(app, ["episode", "--template", "CHEST_OR_CRAFTING_TABLE", "--surface", "freeform", "--json"])
    assert talk.exit_code == 0, talk.output
    record = json.loads(talk.stdout)
    assert [m["kind"] for m in record["protocol"]["messages"]] == ["SAY"] * 4
    single = runner.invoke(app, ["episode", "--template", "CHEST_A_OR_B", "--condition", "single_step", "--json"])
    assert single.exit_code == 0 and len(json.loads(single.stdout)["protocol"]["generations"]) == 3
    model = runner.invoke(
        app, ["episode", "--template", "CHEST_A_OR_B", "--backend", "model:experiments/checkpoints/tiny-dsl"]
    )
    assert model.exit_code == 0, model.output
    assert "2 model calls" not in model.stdout and "1 model call" in model.stdout
    refused = runner.invoke(
        app, ["episode", "--template", "CHEST_A_OR_B", "--surface", "freeform", "--fault", "malformed_proposal"]
    )
    assert refused.exit_code == 2 and "rewrites a record" in refused.output


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command's words, walked from the built application (a command added later is checked too)."""
    found = [path]
    for name, sub in getattr(group, "commands", {}).items():
        found += _commands(sub, (*path, name))
    return found


def test_every_help_reads_as_a_person_expects() -> None:
    """No ``<bool>`` after a flag, no ``{files}`` or ``<list[Path]>`` type names, and usage in capitals."""
    for words in _commands(typer.main.get_command(app)):
        result = runner.invoke(app, [*words, "--help"], terminal_width=200)
        assert result.exit_code == 0, words
        assert "<bool>" not in result.output and "<list[" not in result.output and "<str>" not in result.output
        usage = result.output.strip().splitlines()[0]
        assert "{" not in usage and "<" not in usage, usage
    assert "tasks run [OPTIONS] FILES..." in runner.invoke(app, ["tasks", "run", "--help"], terminal_width=200).output


def _flat(output: str) -> str:
    """Output as one line of words: Rich wraps an error inside a box at the console's width."""
    return " ".join(output.replace("│", " ").split())


def test_an_enumerated_option_names_its_near_miss_without_library_prefixes(tmp_path: Path) -> None:
    result = runner.invoke(app, ["tasks", "run", str(tmp_path / "x.json"), "--mode", "privat"], terminal_width=200)
    assert result.exit_code == 2
    assert "did you mean 'private'?" in _flat(result.output) and "Value error" not in result.output
    surfaces = runner.invoke(app, ["tasks", "run", str(tmp_path / "x.json"), "--surface", "json"], terminal_width=200)
    assert surfaces.exit_code == 2 and "'json' is not one of dsl, freeform" in _flat(surfaces.output)


def test_an_episode_without_a_template_lists_them() -> None:
    result = runner.invoke(app, ["episode"])
    assert result.exit_code == 2 and "CHEST_A_OR_B" in _flat(result.output) and "GC_STICK_ORDER" in _flat(result.output)


@pytest.mark.parametrize("words", [["demo"], ["--help"], ["run", "--help"]])
def test_a_reader_closing_the_pipe_ends_the_command_quietly(words: list[str]) -> None:
    """``gencoord demo | head -1``: status 0 and nothing on stderr once the reader has its line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "gencoord.cli", *words], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()
    assert process.wait(timeout=120) == 0
    assert process.stderr.read() == b""
