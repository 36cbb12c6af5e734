"""Cooking in real Minecraft: hunted animals, ripe crops, the smoker and taught recipes, as on the simulator.

Bots hunt, harvest, cook and craft through the ordinary client protocol on the embedded
server, whose plugin spawns the herds and rolls their loot; the goal test reads the server's
inventories. Both worlds must give the same verdict.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gencoord.errors import WorldError
from gencoord.prior.load import team_prior
from gencoord.run.cooking import run_cooking_task
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.team_files import read_task_file
from gencoord.tasks.world import team_world
from gencoord.worlds.mineflayer import MinecraftExecutor, ServerOptions

pytestmark = pytest.mark.minecraft
PRIOR = team_prior()
FIXTURES = Path(__file__).parent / "fixtures" / "cooking"
TASKS = {task.id: task for task in read_task_file(FIXTURES / "kitchen.json", prior=PRIOR).tasks}


@pytest.fixture(scope="module")
def minecraft() -> Iterator[MinecraftExecutor]:
    executor = MinecraftExecutor()
    yield executor
    executor.close()


@pytest.mark.parametrize(
    "ident",
    ["pair_chicken_and_golden_carrot", "trio_blocked_stew_and_pie", "mushroom_stew_cooked_beef_hells_kitchen"],
)
def test_a_cooking_task_ends_on_minecraft_as_on_the_simulator(minecraft: MinecraftExecutor, ident: str) -> None:
    task = TASKS[ident]
    assert isinstance(task, CookingTask)
    simulated = run_cooking_task(task, PRIOR)
    real = run_cooking_task(task, PRIOR, executor=minecraft)
    assert simulated.success and real.success, (real.code, real.message)
    assert real.execution is not None
    final = real.execution.final
    assert task.goal_met(final.inventories, final.containers)  # the server's own inventories
    hunted = [r for r in real.execution.records if r.action.name == "hunt"]
    assert all(r.ok for r in hunted)
    assert real.recipe_bytes == simulated.recipe_bytes  # the same exchange in either world


def test_a_server_of_ones_own_cannot_be_given_herds() -> None:
    task = TASKS["pair_chicken_and_golden_carrot"]
    _, world = team_world(task, PRIOR)
    executor = MinecraftExecutor(ServerOptions(host="127.0.0.1", port=1), game=PRIOR.game)
    with pytest.raises(WorldError) as caught:
        executor.reset(world)
    assert caught.value.reason == "UNSUPPORTED_WORLD" and "embedded" in caught.value.message
    executor.close()
