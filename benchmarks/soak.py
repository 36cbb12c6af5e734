"""Soak: many consecutive real-Minecraft episodes on one warm server, against the simulator.

Runs ``--episodes`` (default 200) team tasks back to back on one MinecraftExecutor (one
bridge, one embedded server, the same bots throughout), cycling over tasks of 2, 3 and 5
agents, and the same tasks on the simulator. With ``--mindcraft``, the tasks are instead
generated in MINDcraft's shape at 4 and 5 agents (issue 50): crafting tasks from
``random_mindcraft_task`` (half with logs to dig) alternating with cooking tasks from
``tasks/generate_cooking.py`` (every variant and way of dealing bags), each run as
``gencoord tasks run`` runs it, by its kind's runner. Reports failures by reason on each world,
failures Minecraft shows that the simulator does not, and the memory of the bridge and the
server at the start and every ``--every`` episodes: the V8 heap after a full collection
(Node runs with --expose-gc here), which is what a leak grows, and the resident memory (RSS),
which also holds garbage not yet collected and the allocator's reserve. Growth is the last
reading minus the first, and minus the first after warm-up (the reading ``--every``
episodes in, once every team size has joined). Results: benchmarks/results/soak.json. Not a
test: nothing here asserts a figure. Targets (issue 15): no failure the simulator does not
also show, and memory growth under 50 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

from rich.console import Console

from gencoord import __version__
from gencoord.prior.load import team_prior
from gencoord.prior.prior import Prior
from gencoord.run.any_task import run_task
from gencoord.tasks.generate import random_mindcraft_task
from gencoord.tasks.generate_cooking import BAGS, VARIANTS, cooking_task
from gencoord.tasks.mindcraft_data import mindcraft_world
from gencoord.tasks.task_format import AnyTask
from gencoord.tasks.team_files import load_team_tasks, read_task_file
from gencoord.worlds.mineflayer import MinecraftExecutor, NodeBridge
from gencoord.worlds.sim import SimExecutor

OUT = Path(__file__).parent / "results" / "soak.json"
TASKS = tuple(load_team_tasks(Path(__file__).with_name("parallel_teams.json"), prior=team_prior()))


class _Watched(MinecraftExecutor):
    """A Minecraft world whose bridge and server can be asked for their memory."""

    def memory(self) -> dict[str, float]:
        assert isinstance(self._bridge, NodeBridge)
        answer = self._bridge.call("memory", {}, 60.0)
        return {
            f"{process}_{figure}": float(answer[process][figure])
            for process in ("bridge", "server")
            for figure in ("heap_mib", "rss_mib")
        }


def _mindcraft_tasks(count: int, prior: Prior, seed: int = 50) -> list[AnyTask]:
    """``count`` generated 4- and 5-agent tasks, crafting and cooking in turn, read as MINDcraft's files are."""
    rng = random.Random(seed)
    document: dict[str, object] = {}
    number = 0
    while len(document) < count:
        agents = 4 + (number // 2) % 2
        if number % 2 == 0:
            entry = None
            while entry is None:  # a draw the generator finds unusable is drawn again
                entry = random_mindcraft_task(prior, rng, agents, mindcraft_world(), gathered=0.5)
            document[f"soak_crafting_{number}_{agents}_agents"] = entry
        else:
            kind = number // 4
            variant = [variant for variant in VARIANTS if variant != "hells_kitchen"][kind % 2]
            document.update(cooking_task(seed * 1_000 + number, agents, 1 + kind % 3, variant, BAGS[kind % 3]))
        number += 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "soak.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        loaded = read_task_file(path, prior=prior)
    return list(loaded.tasks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--every", type=int, default=20, help="read memory every N episodes")
    parser.add_argument("--mindcraft", action="store_true", help="generated 4-5-agent crafting and cooking tasks")
    args = parser.parse_args()
    prior = team_prior()
    tasks: list[AnyTask] = _mindcraft_tasks(args.episodes, prior) if args.mindcraft else list(TASKS)
    out = OUT.with_name("soak_mindcraft.json") if args.mindcraft else OUT
    os.environ["NODE_OPTIONS"] = f"{os.environ.get('NODE_OPTIONS', '')} --expose-gc".strip()
    minecraft = _Watched(game=prior.game)
    real_codes: Counter[str] = Counter()
    sim_codes: Counter[str] = Counter()
    only_real: list[dict[str, object]] = []
    memory: list[dict[str, float]] = []
    restarts = 0
    began = time.perf_counter()
    try:
        for episode in range(args.episodes):
            task = tasks[episode % len(tasks)]
            pid_before = minecraft.server_pid
            real = run_task(task, prior=prior, executor=minecraft)
            simulated = run_task(task, prior=prior, executor=SimExecutor(prior.game))
            restarts += pid_before is not None and minecraft.server_pid != pid_before
            real_codes[real.code or "ok"] += 1
            sim_codes[simulated.code or "ok"] += 1
            if real.code is not None and real.code != simulated.code:
                only_real.append(
                    {
                        "episode": episode,
                        "task": task.id,
                        "agents": len(task.agents),
                        "code": real.code,
                        "message": real.message,
                    }
                )
            if episode % args.every == 0 or episode == args.episodes - 1:
                reading = {"episode": episode, **minecraft.memory()}
                memory.append(reading)
                Console().print(reading, real_codes)
    finally:
        minecraft.close()
    first, warm, last = memory[0], memory[min(1, len(memory) - 1)], memory[-1]
    figures = [key for key in first if key != "episode"]

    summary = {
        "tasks": "generated 4-5-agent crafting and cooking (MINDcraft's shape)" if args.mindcraft else "parallel_teams",
        "episodes": args.episodes,
        "wall_s": time.perf_counter() - began,
        "minecraft_outcomes": dict(real_codes),
        "simulator_outcomes": dict(sim_codes),
        "failures_only_in_minecraft": len(only_real),
        "world_restarts": restarts,
        "growth_mib": {key: last[key] - first[key] for key in figures},
        "growth_after_warm_up_mib": {key: last[key] - warm[key] for key in figures},
    }
    Console().print(summary)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    body = {"meta": meta, "summary": summary, "memory": memory, "failures_only_in_minecraft": only_real}
    out.write_text(json.dumps(body, indent=2) + "\n")


if __name__ == "__main__":
    main()
