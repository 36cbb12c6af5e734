"""Soak: many consecutive real-Minecraft episodes on one warm server, against the simulator.

Runs ``--episodes`` (default 200) team tasks back to back on one MinecraftExecutor (one
bridge, one embedded server, the same bots throughout), cycling over tasks of 2, 3 and 5
agents, and the same tasks on the simulator. Reports failures by reason on each world,
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
import time
from collections import Counter
from pathlib import Path

from rich.console import Console

from gencoord import __version__
from gencoord.prior.load import team_prior
from gencoord.run.team import run_team_task
from gencoord.tasks.team_files import load_team_tasks
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--every", type=int, default=20, help="read memory every N episodes")
    args = parser.parse_args()
    prior = team_prior()
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
            task = TASKS[episode % len(TASKS)]
            pid_before = minecraft.server_pid
            real = run_team_task(task, prior, executor=minecraft)
            simulated = run_team_task(task, prior, executor=SimExecutor(prior.game))
            restarts += pid_before is not None and minecraft.server_pid != pid_before
            real_codes[real.code or "ok"] += 1
            sim_codes[simulated.code or "ok"] += 1
            if real.code is not None and real.code != simulated.code:
                only_real.append({"episode": episode, "task": task.id, "code": real.code, "message": real.message})
            if episode % args.every == 0 or episode == args.episodes - 1:
                reading = {"episode": episode, **minecraft.memory()}
                memory.append(reading)
                Console().print(reading, real_codes)
    finally:
        minecraft.close()
    first, warm, last = memory[0], memory[min(1, len(memory) - 1)], memory[-1]
    figures = [key for key in first if key != "episode"]

    summary = {
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
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    body = {"meta": meta, "summary": summary, "memory": memory, "failures_only_in_minecraft": only_real}
    OUT.write_text(json.dumps(body, indent=2) + "\n")


if __name__ == "__main__":
    main()
