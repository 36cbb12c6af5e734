"""Soak: many consecutive real-Minecraft episodes on one warm server, against the simulator.

Runs ``--episodes`` (default 200) team tasks back to back on one MinecraftExecutor (one
bridge, one embedded server, the same bots throughout), cycling over tasks of 2, 3 and 5
agents, and the same tasks on the simulator. Reports failures by reason on each world,
failures Minecraft shows that the simulator does not, and the resident memory (RSS) of the
bridge and the server at the start and every ``--every`` episodes: growth is the last
reading minus the first. Results: benchmarks/results/soak.json. Not a test: nothing here
asserts a figure. Targets (issue 15): no failure the simulator does not also show, and
memory growth under 50 MiB.
"""

from __future__ import annotations

import argparse
import json
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


def rss_mib(pid: int | None) -> float | None:
    """Resident memory of a process (Linux /proc), or None when it is not there to read."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class _Watched(MinecraftExecutor):
    """A Minecraft world whose bridge process can be read for memory."""

    @property
    def bridge_pid(self) -> int | None:
        return self._bridge.pid if isinstance(self._bridge, NodeBridge) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--every", type=int, default=20, help="read memory every N episodes")
    args = parser.parse_args()
    prior = team_prior()
    minecraft = _Watched(game=prior.game)
    real_codes: Counter[str] = Counter()
    sim_codes: Counter[str] = Counter()
    only_real: list[dict[str, object]] = []
    memory: list[dict[str, float | int | None]] = []
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
                reading = {
                    "episode": episode,
                    "bridge_mib": rss_mib(minecraft.bridge_pid),
                    "server_mib": rss_mib(minecraft.server_pid),
                }
                memory.append(reading)
                Console().print(reading, real_codes)
    finally:
        minecraft.close()
    first, last = memory[0], memory[-1]

    def growth(key: str) -> float | None:
        a, b = first[key], last[key]
        return None if a is None or b is None else float(b) - float(a)

    summary = {
        "episodes": args.episodes,
        "wall_s": time.perf_counter() - began,
        "minecraft_outcomes": dict(real_codes),
        "simulator_outcomes": dict(sim_codes),
        "failures_only_in_minecraft": len(only_real),
        "world_restarts": restarts,
        "bridge_growth_mib": growth("bridge_mib"),
        "server_growth_mib": growth("server_mib"),
    }
    Console().print(summary)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    body = {"meta": meta, "summary": summary, "memory": memory, "failures_only_in_minecraft": only_real}
    OUT.write_text(json.dumps(body, indent=2) + "\n")


if __name__ == "__main__":
    main()
