"""Team tasks in real Minecraft: n bots, several hand-overs, a held crafting table placed and used, a furnace.

The same pipeline as on the simulator (supply exchange, n-party commitment, compile), run
by Mineflayer bots on the embedded flying-squid server and verified against the server's
ground truth; the verdicts must match the simulator's on the same task.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gencoord.eval.config import find_experiment
from gencoord.prior.load import team_prior
from gencoord.run.team import run_team_task
from gencoord.runtime.thinking import THINKING_TASK, Thinking
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask, TeamWorld
from gencoord.tasks.team_files import load_team_tasks
from gencoord.worlds.mineflayer import MinecraftExecutor

pytestmark = pytest.mark.minecraft
PRIOR = team_prior()
EXPERIMENTS = Path(__file__).parents[1] / "experiments" / "team"


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
    TeamTask(  # eight bots on one server: seven hand over at once into a crowd round the baker
        id="cake_eight",
        agents=[
            TeamAgent(name="baker"),
            *(TeamAgent(name=f"dairy_{i}", inventory={"milk_bucket": 1}) for i in range(3)),
            TeamAgent(name="grocer", inventory={"sugar": 2}),
            TeamAgent(name="henhouse", inventory={"egg": 1}),
            TeamAgent(name="farmer_0", inventory={"wheat": 2}),
            TeamAgent(name="farmer_1", inventory={"wheat": 1}),
        ],
        goal=TeamGoal(item="cake", count=1, holder="baker"),
    ),
    # the shipped team task that smelts: two peers hand over the raw iron and the coal
    *(
        task
        for task in load_team_tasks(EXPERIMENTS / "smelting.json", prior=PRIOR)
        if task.id == "flint_and_steel_three"
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
    if task.world.furnace:
        assert any(r.action.name == "furnace_collect" and r.ok for r in real.execution.records)


def test_agents_whose_names_cannot_log_in_play_under_player_names(minecraft: MinecraftExecutor) -> None:
    task = TeamTask(
        id="short_names",
        agents=[TeamAgent(name="a", inventory={"stick": 2}), TeamAgent(name="b", inventory={"iron_ingot": 3})],
        goal=TeamGoal(item="iron_pickaxe", count=1, holder="a"),
    )
    result = run_team_task(task, PRIOR, executor=minecraft)
    assert result.success, (result.code, result.message)
    assert result.execution is not None and set(result.execution.final.inventories) == {"a", "b"}


def test_thinking_keeps_the_bots_standing_until_the_commitment_forms(minecraft: MinecraftExecutor) -> None:
    """The same wait on both worlds: the simulator advances each agent's clock, the bots stand still."""
    task = TeamTask(
        id="thinking_bots",
        agents=[TeamAgent(name="a", inventory={"stick": 2}), TeamAgent(name="b", inventory={"iron_ingot": 3})],
        goal=TeamGoal(item="iron_pickaxe", count=1, holder="a"),
    )
    thinking = Thinking(per_message_s=1.5)
    simulated = run_team_task(task, PRIOR, thinking=thinking)
    real = run_team_task(task, PRIOR, executor=minecraft, thinking=thinking)
    assert simulated.success and real.success, (real.code, real.message)
    assert real.thinking_s == simulated.thinking_s == pytest.approx(1.5 * len(real.generations))
    assert real.execution is not None and simulated.execution is not None
    waits = [r for r in real.execution.records if r.action.name == "wait" and r.action.task == THINKING_TASK]
    assert {r.action.agent for r in waits} == {"a", "b"} and all(r.ok for r in waits)
    assert real.outcome is not None and simulated.outcome is not None
    assert real.outcome.stages == simulated.outcome.stages
    assert real.execution.final.clock_s >= real.thinking_s


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, stack = set(), [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_terminated_parallel_team_run_stops_its_workers_and_worlds_and_keeps_its_records(tmp_path: Path) -> None:
    tasks = str(find_experiment("team_tasks").parent / "team" / "generated.json")
    command = [sys.executable, "-m", "gencoord.cli", "tasks", "run", tasks, "--world", "minecraft"]
    driver = subprocess.Popen([*command, "--workers", "2", "--out", str(tmp_path)], stderr=subprocess.PIPE, text=True)
    records = tmp_path / "episodes.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and driver.poll() is None and not (records.exists() and records.stat().st_size):
        time.sleep(0.2)
    family = _descendants(driver.pid)
    assert driver.poll() is None and family, "the run ended before it could be stopped"
    driver.send_signal(signal.SIGTERM)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130 and "Run the same command again to continue" in err
    time.sleep(3)
    assert not [pid for pid in family if _alive(pid)]  # no worker, bridge or server left behind
    kept = [json.loads(line) for line in records.read_text().splitlines()]  # every line a whole record
    assert kept and all(row["world"] == "minecraft" for row in kept)
