"""Faults in real Minecraft: a dead bridge, an unreachable server, an impossible path, no orphan processes."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from collections.abc import Callable
from threading import Thread
from typing import Any

import pytest

from gencoord.errors import FailureCode, WorldError
from gencoord.prior import Prior
from gencoord.prior.load import team_prior
from gencoord.run.team import run_team_task
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask
from gencoord.worlds.actions import GoTo, Program
from gencoord.worlds.conformance_fixtures import conformance_program as program
from gencoord.worlds.conformance_fixtures import conformance_world as world
from gencoord.worlds.executor import ActionRecord, HandoffHook
from gencoord.worlds.mineflayer import MinecraftExecutor, NodeBridge, ServerOptions

pytestmark = pytest.mark.minecraft
TEAM_PRIOR = team_prior()


def _group_gone(pgid: int, within_s: float = 10.0) -> bool:
    until = time.monotonic() + within_s
    while time.monotonic() < until:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_killed_bridge_fails_the_action_then_the_world_restarts(prior: Prior) -> None:
    bridges: list[NodeBridge] = []

    def factory() -> NodeBridge:
        bridges.append(NodeBridge())
        return bridges[-1]

    executor = MinecraftExecutor(bridge_factory=factory, game=prior.game)
    try:
        executor.reset(world(prior))
        first = bridges[0].pid
        os.kill(first, signal.SIGKILL)  # the bridge dies; its server child must follow
        [record] = executor.run(program([GoTo("agent_a", "a#1", "order_chest", "ref")]), 0, 1)
        assert record.failure is not None and record.failure.code == "BRIDGE_DIED"
        assert _group_gone(first), "the embedded server outlived its bridge"
        executor.reset(world(prior))  # a fresh bridge and server
        [record] = executor.run(program([GoTo("agent_a", "a#1", "order_chest", "ref")]), 0, 1)
        assert record.ok and len(bridges) == 2
    finally:
        executor.close()
    assert _group_gone(bridges[-1].pid), "close() left processes behind"


def test_an_unreachable_server_is_a_clear_error(prior: Prior) -> None:
    executor = MinecraftExecutor(ServerOptions(host="127.0.0.1", port=1), game=prior.game)
    with pytest.raises(WorldError) as caught:
        executor.reset(world(prior))
    assert caught.value.reason == "CONNECT_FAILED" and "agent_a could not connect" in caught.value.message
    executor.close()


def test_an_impossible_path_fails_its_action_with_a_reason_and_the_episode_goes_on(prior: Prior) -> None:
    """A chest floating eight blocks up: no bot can walk there, and the next action still runs."""
    base = world(prior)
    chest = base.refs["order_chest"]
    x, y, z = chest.position
    floating = dataclasses.replace(
        base, refs={**base.refs, "order_chest": chest.model_copy(update={"position": (x, y + 8, z)})}
    )
    executor = MinecraftExecutor(game=prior.game)
    try:
        executor.reset(floating)
        [record] = executor.run(program([GoTo("agent_a", "a#1", "order_chest", "ref")]), 0, 1)
        assert record.failure is not None and record.failure.code in {"NO_PATH", "PATH_TIMEOUT", "PATH_FAILED"}
        assert "agent_a" in record.failure.message  # the reason names who could not get there
        station = next(name for name, ref in floating.refs.items() if ref.kind == "station")
        [after] = executor.run(program([GoTo("agent_b", "b#1", station, "ref")]), 0, 1)
        assert after.ok  # the world is still usable: the failure stayed with its action
        assert executor.snapshot().discrepancies == ()
    finally:
        executor.close()


_HANDOVER = TeamTask(
    id="pickaxe_handed_over",
    agents=[
        TeamAgent(name="smith", inventory={"stick": 2}),
        TeamAgent(name="miner", inventory={"iron_ingot": 3}),
    ],
    goal=TeamGoal(item="iron_pickaxe", count=1, holder="smith"),
)


def _watch(executor: MinecraftExecutor, until: Callable[[dict[str, Any]], bool], then: Callable[[], object]) -> Thread:
    """Call ``then`` once the server's ground truth satisfies ``until`` (polled while the episode runs)."""

    def loop() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            bridge = executor._bridge  # the world under test: the fault must hit it, not a new one
            try:
                seen = bridge.call("observe", {}, 5.0) if bridge is not None else None
            except WorldError:
                return
            if seen is not None and seen.get("server") and until(seen["server"]):
                then()
                return
            time.sleep(0.05)

    thread = Thread(target=loop, daemon=True)
    thread.start()
    return thread


def test_a_receiver_dropped_mid_hand_over_is_an_outage_or_a_lost_hand_over_and_the_next_one_runs() -> None:
    executor = MinecraftExecutor(game=TEAM_PRIOR.game)
    try:
        assert run_team_task(_HANDOVER, TEAM_PRIOR, executor=executor).success  # warm, and the task works
        first_bridge = executor._bridge
        assert isinstance(first_bridge, NodeBridge)
        tossed = _watch(  # the iron is in the air between the bots: drop the receiver now
            executor,
            lambda server: any(item["item"] == "iron_ingot" for item in server["items"]),
            lambda: first_bridge.call("kick", {"name": "smith"}, 5.0),
        )
        try:
            failed = run_team_task(_HANDOVER, TEAM_PRIOR, executor=executor)
        except WorldError as error:  # the dropped connection is an outage: the task did not run, it did not fail
            assert error.outage and error.reason == "BOT_DISCONNECTED", error
        else:  # the hand-over was judged before the drop was seen: the team's outcome
            assert not failed.success and failed.outcome is not None
            assert failed.outcome.failure is FailureCode.EXECUTION_FAILURE
            assert failed.code == "HANDOFF_NOT_RECEIVED", (failed.code, failed.message)
            assert failed.execution is not None and failed.execution.cancelled  # the craft never started
        tossed.join(timeout=5)
        again = run_team_task(_HANDOVER, TEAM_PRIOR, executor=executor)  # a fresh world, by itself
        assert again.success, (again.code, again.message)
        assert executor._bridge is not first_bridge and _group_gone(first_bridge.pid)
    finally:
        executor.close()


def _kill_later(pid: int, after_s: float) -> None:
    time.sleep(after_s)
    os.kill(pid, signal.SIGKILL)


class _KilledMidRun(MinecraftExecutor):
    """Kills its own embedded server half a second into the next run: the bots are mid-action."""

    armed = False

    def run(self, program: Program, start: int, stop: int, on_handoff: HandoffHook | None = None) -> list[ActionRecord]:
        if self.armed and self.server_pid is not None:
            self.armed = False
            Thread(target=_kill_later, args=(self.server_pid, 0.5), daemon=True).start()
        return super().run(program, start, stop, on_handoff)


def test_a_server_killed_mid_episode_is_an_outage_and_the_next_one_runs() -> None:
    executor = _KilledMidRun(game=TEAM_PRIOR.game)
    try:
        assert run_team_task(_HANDOVER, TEAM_PRIOR, executor=executor).success
        server = executor.server_pid
        executor.armed = True
        with pytest.raises(WorldError) as raised:  # an outage, never an outcome of the team's
            run_team_task(_HANDOVER, TEAM_PRIOR, executor=executor)
        assert raised.value.outage and raised.value.reason in {"BOT_DISCONNECTED", "SERVER_DIED"}, raised.value
        again = run_team_task(_HANDOVER, TEAM_PRIOR, executor=executor)
        assert again.success, (again.code, again.message)
        assert executor.server_pid != server
    finally:
        bridge = executor._bridge
        executor.close()
    assert isinstance(bridge, NodeBridge) and _group_gone(bridge.pid), "close() left processes behind"
