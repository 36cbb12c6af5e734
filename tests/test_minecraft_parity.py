"""Both worlds agree on other people's tasks: MINDcraft-format files run on the simulator and on real Minecraft.

A fixed sample written in MINDcraft's crafting format as its files ship (2–8 agents: dyes and
wool, a bed, a banner, a dyed carpet, sticks with other planks in the bag, tables held but not
placed, sub-assemblies, logs to dig, a task nobody can finish), and generated tasks in the same
format. Each must end the same way in both worlds, with H verdicts that add up.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from gencoord.prior.load import team_prior
from gencoord.run.team import run_team_task
from gencoord.run.team_run import TeamResult
from gencoord.tasks.generate import random_mindcraft_task
from gencoord.tasks.mindcraft_data import mindcraft_world
from gencoord.tasks.team import TeamTask
from gencoord.tasks.team_files import read_task_file
from gencoord.worlds.mineflayer import MinecraftExecutor
from gencoord.worlds.sim import SimExecutor

pytestmark = pytest.mark.minecraft

PRIOR = team_prior()
SAMPLE = Path(__file__).parent / "fixtures" / "team" / "mindcraft_parity.json"
GENERATED_SEEDS = ((11, 3), (12, 4), (13, 5), (14, 2))


def _generated(tmp: Path) -> list[TeamTask]:
    document = {}
    for seed, agents in GENERATED_SEEDS:
        rng = random.Random(seed)
        entry = None
        while entry is None:
            entry = random_mindcraft_task(PRIOR, rng, agents, mindcraft_world(), gathered=0.5)
        document[f"generated_{seed}_{agents}"] = entry
    path = tmp / "generated.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return list(read_task_file(path, prior=PRIOR).tasks)


@pytest.fixture(scope="module")
def minecraft() -> Iterator[MinecraftExecutor]:
    executor = MinecraftExecutor()
    yield executor
    executor.close()


def _tasks(tmp: Path) -> list[TeamTask]:
    sample = read_task_file(SAMPLE, prior=PRIOR)
    assert sample.refused == ()
    return [*sample.tasks, *_generated(tmp)]


def _credited(result: TeamResult) -> list[tuple[str, str, int, int]]:
    assert result.execution is not None
    return [(h.check.giver, h.check.item, h.check.quantity, h.received) for h in result.execution.handoffs]


def test_mindcraft_format_tasks_end_the_same_in_both_worlds(minecraft: MinecraftExecutor, tmp_path: Path) -> None:
    disagreements = []
    for task in _tasks(tmp_path):
        sim = run_team_task(task, PRIOR, executor=SimExecutor(PRIOR.game))
        real = run_team_task(task, PRIOR, executor=minecraft)
        if (sim.success, sim.code) != (real.success, real.code):
            disagreements.append(f"{task.id}: sim {sim.code or 'success'}, minecraft {real.code}: {real.message}")
            continue
        assert (real.outcome is None) == (sim.outcome is None), task.id
        if real.outcome is not None and sim.outcome is not None:  # C/H/T/F/G the same in both worlds
            assert real.outcome.stages == sim.outcome.stages, task.id
        if real.execution is not None:  # each hand-over credited with exactly its own items, in both worlds
            assert _credited(real) == _credited(sim), task.id
            assert all(received == quantity for _, _, quantity, received in _credited(real)), task.id
    assert disagreements == []
    unreachable = next(t for t in _tasks(tmp_path) if t.id == "string_nobody_holds_two")
    refused = run_team_task(unreachable, PRIOR, executor=minecraft)
    assert refused.code == "UNREACHABLE_GOAL" and refused.execution is None  # refused before any action
