"""What a paid endpoint costs is kept in hand: a run stops at its token or charge budget, resumably, and a
rate-limited endpoint is waited for as long as it asks, not hammered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import gencoord
from gencoord.backends import api
from gencoord.backends.api import ApiBackend
from gencoord.cli import app
from gencoord.errors import BackendError
from gencoord.eval.budget import Budget, Spent, spent_by
from gencoord.prior.load import team_prior
from gencoord.worlds.choice import WorldChoice
from gencoord.worlds.executor import Executor
from gencoord.worlds.registry import World
from gencoord.worlds.sim import SimExecutor
from tests.chat_stub import ChatHandler, TeamApi, completion, serving

TASKS = Path(__file__).parent / "fixtures" / "team" / "own_format.toml"
runner = CliRunner()


class _OneByOne(World):
    """The simulator, recorded task by task as Minecraft is (so a budget can stop a run between tasks)."""

    name = "sim-one-by-one"
    in_process = False

    def make(self, choice: WorldChoice) -> Executor:
        return SimExecutor()


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]


def test_spending_sums_every_model_message_of_any_record_shape() -> None:
    pair = {"protocol": {"generations": [{"input_tokens": 10, "output_tokens": 5, "charge": 0.25}]}}
    team = {"generations": [{"input_tokens": 7, "output_tokens": 3, "charge": None}, {"input_tokens": None}]}
    rules = {"generations": [{"input_tokens": None, "output_tokens": None, "charge": None}]}
    assert spent_by([pair, team, rules]) == Spent(25, 0.25)
    Budget(tokens=26).check(Spent(25, 0.25), "here")  # under: nothing happens
    with pytest.raises(BackendError, match="25 tokens of a 25-token budget") as spent:
        Budget(tokens=25).check(Spent(25, 0.25), "here")
    assert spent.value.reason == "API_BUDGET_SPENT" and "--api-budget-tokens" in spent.value.message
    with pytest.raises(BackendError, match="--api-budget-charge"):
        Budget(charge=0.25).check(Spent(1, 0.25), "here")


def test_a_run_stops_at_its_token_budget_and_goes_on_with_a_larger_one(tmp_path: Path) -> None:
    gencoord.register_world(_OneByOne())
    out = tmp_path / "run"
    with serving(TeamApi) as url:
        command = ["tasks", "run", str(TASKS), "--backend", f"lead=api:{url}#stub,peers=rule"]
        command += ["--world", "sim-one-by-one", "--repeats", "3", "--out", str(out)]
        stopped = runner.invoke(app, [*command, "--api-budget-tokens", "1"])
        assert stopped.exit_code == 3, stopped.output
        assert "API_BUDGET_SPENT" in stopped.stderr and "Traceback" not in stopped.output
        first = _records(out)
        assert len(first) == 1 and spent_by(first).tokens > 1  # the task that crossed the line is kept
        again = runner.invoke(app, [*command, "--api-budget-tokens", "1"])
        assert again.exit_code == 3 and _records(out) == first  # spent already: nothing runs
        whole = runner.invoke(app, [*command, "--api-budget-tokens", "1000000"])
    assert whole.exit_code == 0, whole.output
    records = _records(out)
    tasks = [record["task"] for record in records]
    assert len(tasks) == len(set(tasks)) == 6 and records[0] == first[0]
    assert all(record["verdict"] == "succeeded" for record in records)


class _RateLimited(ChatHandler):
    """Answers 429 with ``Retry-After: 0.25`` to its first call, then as an answer."""

    limited = 1

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if _RateLimited.limited:
            _RateLimited.limited -= 1
            return 429, {"error": {"message": "rate limited", "type": "requests"}}
        return 200, completion(body["model"], "YES", 5, 1)

    def extra_headers(self, status: int) -> dict[str, str]:
        return {"Retry-After": "0.25"} if status == 429 else {}


def test_a_rate_limited_endpoint_is_waited_for_as_long_as_it_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(api.time, "sleep", waits.append)
    with serving(_RateLimited) as url:
        backend = ApiBackend(url, "stub", team_prior(), backoff_s=30.0)  # its own backoff would wait 30 s
        assert backend.ask("Coordinate?") == "YES"
    assert waits == [0.25] and backend.usage.calls == 1
