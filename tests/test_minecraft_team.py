"""Team tasks in real Minecraft: n bots, several hand-overs, a held crafting table placed and used.

The same pipeline as on the simulator (supply exchange, n-party commitment, compile), run
by Mineflayer bots on the embedded flying-squid server and verified against the server's
ground truth; the verdicts must match the simulator's on the same task.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gencoord.prior.load import team_prior
from gencoord.run.team import run_team_task
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask, TeamWorld
from gencoord.worlds.mineflayer import MinecraftExecutor

pytestmark = pytest.mark.minecraft
PRIOR = team_prior()


@pytest.fixture(scope="module")
def minecraft() -> Iterator[MinecraftExecutor]:
    executor = MinecraftExecutor()
    yield executor
    executor.close()


TASKS = [
    TeamTask(
        id="bookshelf_three_placed_table",
        agents=[
            TeamAgent(name="agent_0", inventory={"dirt": 2}),
            TeamAgent(name="agent_1", inventory={"oak_planks": 6, "crafting_table": 1}),
            TeamAgent(name="agent_2", inventory={"book": 3}),
        ],
        goal=TeamGoal(item="bookshelf", count=1, holder="agent_0"),
        world=TeamWorld(crafting_table=False),
    ),
    TeamTask(
        id="pickaxe_from_two_peers",
        agents=[
            TeamAgent(name="smith", inventory={"iron_ingot": 1}),
            TeamAgent(name="miner", inventory={"iron_ingot": 2}),
            TeamAgent(name="carpenter", inventory={"stick": 2}),
        ],
        goal=TeamGoal(item="iron_pickaxe", count=1, holder="smith"),
    ),
]


@pytest.mark.parametrize("task", TASKS, ids=[task.id for task in TASKS])
def test_a_team_task_gets_the_simulators_verdicts_in_minecraft(task: TeamTask, minecraft: MinecraftExecutor) -> None:
    simulated = run_team_task(task, PRIOR)
    real = run_team_task(task, PRIOR, executor=minecraft)
    assert simulated.success, simulated.message
    assert real.success, (real.code, real.message)
    assert real.outcome is not None and simulated.outcome is not None
    assert real.outcome.stages == simulated.outcome.stages
    assert real.execution is not None and len(real.execution.handoffs) >= 2
    assert all(seen.verified for seen in real.execution.handoffs)
    if not task.world.crafting_table:
        assert any(r.action.name == "place_station" and r.ok for r in real.execution.records)


def test_agents_whose_names_cannot_log_in_play_under_player_names(minecraft: MinecraftExecutor) -> None:
    task = TeamTask(
        id="short_names",
        agents=[TeamAgent(name="a", inventory={"stick": 2}), TeamAgent(name="b", inventory={"iron_ingot": 3})],
        goal=TeamGoal(item="iron_pickaxe", count=1, holder="a"),
    )
    result = run_team_task(task, PRIOR, executor=minecraft)
    assert result.success, (result.code, result.message)
    assert result.execution is not None and set(result.execution.final.inventories) == {"a", "b"}
