"""The gate's dynamic world on real Minecraft: walls, a taken station, mid-run changes.

A gate episode runs on Mineflayer bots with the simulator alongside (``MirroredExecutor``):
the route the instance blocks is a real wall the bots must walk round, the oracle's
rollouts run on the simulator's copy, and every action on which the two worlds disagree
is in the record.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gencoord.gate.policy import GateCondition
from gencoord.gate.pool import gate_pool, team_pool
from gencoord.gate.rounds import run_gate_episode
from gencoord.prior import Prior
from gencoord.prior.load import team_prior
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask
from gencoord.worlds.changes import BlockRoute, DepleteSource, OccupyStation, RemoveItems
from gencoord.worlds.mineflayer import MinecraftExecutor
from gencoord.worlds.mirror import MirroredExecutor
from gencoord.worlds.sim import SimExecutor

pytestmark = pytest.mark.minecraft


@pytest.fixture(scope="module")
def minecraft(prior: Prior) -> Iterator[MinecraftExecutor]:
    executor = MinecraftExecutor(game=prior.game)
    yield executor
    executor.close()


def test_a_walled_route_is_walked_round_and_the_worlds_agree(prior: Prior, minecraft: MinecraftExecutor) -> None:
    instance = next(i for i in gate_pool(8, prior=prior) if i.world.blocked)  # a resource area walled off
    simulated = run_gate_episode(instance, GateCondition.FULL, prior=prior)
    mirrored = MirroredExecutor(minecraft, SimExecutor(prior.game))
    real = run_gate_episode(instance, GateCondition.FULL, executor=mirrored, prior=prior)
    record, expected = real.record(), simulated.record()
    assert real.success == simulated.success or mirrored.disagreements, mirrored.disagreements
    assert real.success, mirrored.disagreements
    kinds = {issue["kind"] for issue in record["issues"]}
    assert "path_blocked" in kinds  # the wall turned the direct walk away; the agent walked round
    assert kinds == {issue["kind"] for issue in expected["issues"]} or mirrored.disagreements
    assert all(issue["oracle"] is not None for issue in record["issues"])  # rollouts ran on the simulator copy


def test_mid_run_changes_strike_a_team_in_minecraft(minecraft: MinecraftExecutor) -> None:
    prior = team_prior()
    task = TeamTask(
        id="gate_pickaxe",
        agents=[
            TeamAgent(name="smith", inventory={"stick": 2}),
            TeamAgent(name="miner", inventory={"iron_ingot": 3}),
            TeamAgent(name="carpenter", inventory={"oak_planks": 4}),
        ],
        goal=TeamGoal(item="iron_pickaxe", count=1, holder="smith"),
    )
    instances, skipped = team_pool((task,), 40, prior=prior)
    assert not skipped
    changing = (DepleteSource, BlockRoute, OccupyStation, RemoveItems)
    struck = [i for i in instances if any(isinstance(d.event, changing) for d in i.disruptions)]
    # the shortest such episode the simulator sees the team finish after coordinating (real time is dear)
    runs = [(run_gate_episode(i, GateCondition.FULL, prior=prior), i) for i in struck]
    finished = [(run, i) for run, i in runs if run.success and run.record()["rounds"] > 0]
    simulated, instance = min(finished, key=lambda pair: pair[0].record()["duration_s"])
    mirrored = MirroredExecutor(minecraft, SimExecutor(prior.game))
    real = run_gate_episode(instance, GateCondition.FULL, executor=mirrored, prior=prior)
    assert real.success == simulated.success or mirrored.disagreements, mirrored.disagreements
    assert real.record()["rounds"] > 0
