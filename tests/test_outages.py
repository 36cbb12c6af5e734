"""Outages are not outcomes: a world or model endpoint that dies mid-run is retried, then stops the run
resumably; no task is recorded as failed for it, none is lost, none is recorded twice.

The world here is the simulator behind a switch that makes chosen ``run`` calls die as a dead
server or bridge does (the Minecraft tests kill the real server's processes the same way).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import pytest
from typer.testing import CliRunner

import gencoord
from gencoord.backends.base import Backend
from gencoord.backends.families import BackendFamily
from gencoord.backends.planner import PlannerBackend
from gencoord.cli import app
from gencoord.errors import OUTAGES, WORLD_OUTAGES, BackendError, WorldError
from gencoord.eval.runner import RECORDS
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply
from gencoord.tasks.context import LocalContext
from gencoord.worlds.actions import Program
from gencoord.worlds.choice import WorldChoice
from gencoord.worlds.executor import ActionFailure, ActionRecord, Executor, HandoffHook
from gencoord.worlds.registry import World
from gencoord.worlds.sim import SimExecutor

TASKS = Path(__file__).parent / "fixtures" / "team" / "own_format.toml"
runner = CliRunner()


class _Dying(SimExecutor):
    """The simulator, except that the calls ``deaths`` lists (counted from 1 across the test) die."""

    deaths: ClassVar[set[int]] = set()
    calls: ClassVar[int] = 0
    reason: ClassVar[str] = "SERVER_DIED"

    def run(self, program: Program, start: int, stop: int, on_handoff: HandoffHook | None = None) -> list[ActionRecord]:
        _Dying.calls += 1
        if _Dying.calls not in _Dying.deaths:
            return super().run(program, start, stop, on_handoff)
        if _Dying.calls % 2:  # the bridge's answer never comes: the call raises
            raise WorldError(_Dying.reason, "the Minecraft server exited (killed by the test)")
        records = super().run(program, start, stop, on_handoff)  # or an action ends failed with the outage's code
        dead = ActionFailure(_Dying.reason, "the Minecraft server exited while the bots acted (killed by the test)")
        return [*records[:-1], replace(records[-1], failure=dead)]


class _DyingWorld(World):
    name = "dying-sim"
    in_process = False  # as Minecraft: one task a chunk, each recorded as it ends

    def make(self, choice: WorldChoice) -> Executor:
        return _Dying()


DYING = _DyingWorld()


@pytest.fixture(autouse=True)
def _dying_world() -> None:
    gencoord.register_world(DYING)  # registering the same world again is allowed
    _Dying.calls, _Dying.deaths, _Dying.reason = 0, set(), "SERVER_DIED"


def _records(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / RECORDS).read_text().splitlines()]


def _task_count() -> int:
    return len(gencoord.read_task_file(TASKS).tasks)


def test_one_outage_runs_the_task_again_from_its_start(tmp_path: Path) -> None:
    _Dying.deaths = {1}
    out = tmp_path / "run"
    result = runner.invoke(app, ["tasks", "run", str(TASKS), "--world", "dying-sim", "--out", str(out)])
    assert result.exit_code == 0, result.output
    records = _records(out)
    assert len(records) == _task_count()
    assert not any(record["code"] in OUTAGES for record in records)


@pytest.mark.parametrize("reason", sorted(WORLD_OUTAGES))
def test_an_outage_that_persists_stops_the_run_and_the_same_command_resumes_it(tmp_path: Path, reason: str) -> None:
    _Dying.reason = reason
    out = tmp_path / "run"
    command = ["tasks", "run", str(TASKS), "--world", "dying-sim", "--out", str(out)]
    _Dying.deaths = {2, 3}  # the second task's world dies, and dies again when that task starts over
    stopped = runner.invoke(app, command)
    assert stopped.exit_code == 3, stopped.output
    assert reason in stopped.stderr and "run the same command again" in stopped.stderr
    assert "Traceback" not in stopped.output
    first = _records(out)
    assert len(first) == 1 and first[0]["success"]  # the task before the outage is kept; the other is not run
    _Dying.deaths = {5, 7}  # two more outages on the way, each survived by one start-over
    resumed = runner.invoke(app, command)
    assert resumed.exit_code == 0, resumed.output
    records = _records(out)
    tasks = [str(record["task"]) for record in records]
    assert len(tasks) == len(set(tasks)) == _task_count()  # none lost, none recorded twice
    assert not any(record["code"] in OUTAGES for record in records)
    assert records[0] == first[0]


def test_run_task_retries_an_outage_and_then_raises_it() -> None:
    task = gencoord.read_task_file(TASKS).tasks[0]
    _Dying.deaths = {1}
    assert gencoord.run_task(task, world="dying-sim").success
    _Dying.deaths = {3, 4}  # this task's world dies, and again when it starts over
    with pytest.raises(WorldError, match="stayed down") as raised:
        gencoord.run_task(task, world="dying-sim")
    assert raised.value.outage


class _FlakyEndpoint(PlannerBackend):
    """The planner behind an endpoint whose calls ``downs`` lists (counted from 1) stop answering."""

    downs: ClassVar[set[int]] = set()
    calls: ClassVar[int] = 0

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        _FlakyEndpoint.calls += 1
        if _FlakyEndpoint.calls in _FlakyEndpoint.downs:
            raise BackendError("API_UNAVAILABLE", "flaky: APIConnectionError after 4 tries (stopped by the test)")
        return super().generate(context, request)


class _Flaky(BackendFamily):
    name = "flaky"
    leads_teams = True

    def team_lead(self, target: str | None, prior: Prior) -> Backend:
        return _FlakyEndpoint(prior)


FLAKY = _Flaky()


def test_a_model_endpoint_that_stops_answering_is_an_outage_too(tmp_path: Path) -> None:
    gencoord.register_backend(FLAKY)
    _FlakyEndpoint.calls, _FlakyEndpoint.downs = 0, {2, 3}  # the second task's lead, and again when it starts over
    # (the dying world, never dying here, records each task as it ends, as Minecraft does)
    out = tmp_path / "run"
    command = ["tasks", "run", str(TASKS), "--backend", "flaky", "--world", "dying-sim", "--out", str(out)]
    stopped = runner.invoke(app, command)
    assert stopped.exit_code == 3, stopped.output
    assert "API_UNAVAILABLE" in stopped.stderr and "the model endpoint stayed down" in stopped.stderr
    assert len(_records(out)) == 1  # the task before the outage is kept; the one it stopped is not run
    _FlakyEndpoint.downs = {_FlakyEndpoint.calls + 1}  # down once more: one start-over survives it
    resumed = runner.invoke(app, command)
    assert resumed.exit_code == 0, resumed.output
    records = _records(out)
    tasks = [str(record["task"]) for record in records]
    assert len(tasks) == len(set(tasks)) == _task_count()
    assert all(record["success"] for record in records)
