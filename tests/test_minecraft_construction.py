"""Construction in real Minecraft: the same blueprints as on the simulator, checked cell by cell on the server.

Bots place blocks through the ordinary client protocol on the embedded server; the server's
own blocks are what the check reads. Both worlds must give the same verdict and score.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gencoord.prior.load import team_prior
from gencoord.run.build import run_build_task
from gencoord.tasks.build import BuildTask
from gencoord.tasks.generate_builds import random_build_task
from gencoord.tasks.team_files import read_task_file
from gencoord.worlds.mineflayer import MinecraftExecutor

pytestmark = pytest.mark.minecraft
PRIOR = team_prior()
FIXTURES = Path(__file__).parent / "fixtures" / "construction"


@pytest.fixture(scope="module")
def minecraft() -> Iterator[MinecraftExecutor]:
    executor = MinecraftExecutor()
    yield executor
    executor.close()


def _generated(tmp_path: Path, seed: int, agents: int) -> BuildTask:
    path = tmp_path / "generated.json"
    path.write_text(json.dumps({f"generated_{seed}": random_build_task(seed, agents, levels=3)}), encoding="utf-8")
    (task,) = read_task_file(path, prior=PRIOR).tasks
    assert isinstance(task, BuildTask)
    return task


def _fixture(name: str) -> BuildTask:
    (task,) = read_task_file(FIXTURES / f"{name}.json", prior=PRIOR).tasks
    assert isinstance(task, BuildTask)
    return task


@pytest.mark.parametrize("which", ["cabin", "lookout", "generated_3_agents"])
def test_a_blueprint_stands_alike_in_both_worlds(minecraft: MinecraftExecutor, tmp_path: Path, which: str) -> None:
    """The lookout needs a tower to reach its top and scaffolding under its ledge, both gone at the end."""
    task = _generated(tmp_path, 5, 3) if which.startswith("generated") else _fixture(which)
    simulated = run_build_task(task, PRIOR)
    real = run_build_task(task, PRIOR, executor=minecraft)
    assert simulated.success, simulated.message
    assert real.success, (real.code, real.message)
    assert real.built is not None and simulated.built is not None
    assert (real.built.matches, real.built.mismatches) == (simulated.built.matches, simulated.built.mismatches)
    assert real.execution is not None and simulated.execution is not None
    assert real.execution.final.blocks == simulated.execution.final.blocks  # every cell, block for block
