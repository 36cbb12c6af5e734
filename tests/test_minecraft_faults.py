"""Faults in real Minecraft: a dead bridge, an unreachable server, an impossible path, no orphan processes."""

from __future__ import annotations

import dataclasses
import os
import signal
import time

import pytest

from gencoord.errors import WorldError
from gencoord.prior import Prior
from gencoord.worlds.actions import GoTo
from gencoord.worlds.conformance import conformance_program as program
from gencoord.worlds.conformance import conformance_world as world
from gencoord.worlds.mineflayer import MinecraftExecutor, NodeBridge, ServerOptions

pytestmark = pytest.mark.minecraft


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
