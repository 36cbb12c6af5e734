"""Team tasks at scale, measured side by side in one run on generated tasks (2–8 agents).

For 20 random tasks per team size (``gencoord.tasks.generate``, fixed seed):
  * median planning + commitment time, in-process: plan (feasibility + who crafts) and
    resolve the n-party commitment, with every bag known (the centralized view);
  * success rate end to end on the simulator, private information, DSL surface;
  * messages and wire bytes per task: private DSL, private free-form, centralized DSL,
    so the DSL/free-form ratio and the cost of privacy are measured on identical tasks;
  * episodes per second on the simulator, and the wall time of a 150-task file through
    ``gencoord tasks run`` (records and report included).
Results are printed and written to benchmarks/results/team_tasks.json. Not a test: no
assertion on time or rate.
"""

from __future__ import annotations

import json
import platform
import random
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from gencoord import __version__
from gencoord.cli import app
from gencoord.dsl.surface import SurfaceName
from gencoord.planning.planner import plan_team
from gencoord.prior.load import team_prior
from gencoord.protocol.resolve import resolve_team
from gencoord.run.team import lead_of, run_team_task
from gencoord.run.team_choices import TeamMode
from gencoord.tasks.generate import random_task
from gencoord.tasks.team import TeamTask
from gencoord.tasks.world import team_world

PER_SIZE = 20
SIZES = range(2, 9)
FILE_TASKS = 150
OUT = Path(__file__).parent / "results" / "team_tasks.json"


def _tasks(seed: int) -> dict[int, list[TeamTask]]:
    prior, rng = team_prior(), random.Random(seed)
    drawn: dict[int, list[TeamTask]] = {}
    for size in SIZES:
        drawn[size] = []
        while len(drawn[size]) < PER_SIZE:
            generated = random_task(
                prior, rng, size, task_id=f"g{size}-{len(drawn[size])}", distractors=rng.randint(0, 4)
            )
            if generated is not None:
                drawn[size].append(generated.task)
    return drawn


def _commit_ms(task: TeamTask) -> float:
    prior = team_prior()
    started = time.perf_counter()
    lead = lead_of(task)
    plan = plan_team(task, lead, prior)
    assert plan.proposal is not None, plan.feasibility.reason
    episode, _ = team_world(task, prior)
    resolve_team(plan.proposal, lead, {a.name: dict(a.inventory) for a in task.agents}, prior, episode)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    prior = team_prior()
    drawn = _tasks(2026)
    for task in drawn[2][:3]:  # warm the caches (recipe index, solver import) before timing
        _commit_ms(task)
    rows: dict[int, dict[str, float]] = {}
    totals: dict[str, int] = defaultdict(int)
    episodes, episode_s = 0, 0.0
    for size, tasks in drawn.items():
        commit = [_commit_ms(task) for task in tasks]
        private = [run_team_task(task, prior) for task in tasks]
        free = [run_team_task(task, prior, surface=SurfaceName.FREEFORM) for task in tasks]
        central = [run_team_task(task, prior, mode=TeamMode.CENTRALIZED) for task in tasks]
        episodes += len(private)
        episode_s += sum(r.seconds.get("protocol", 0) + r.seconds.get("world", 0) for r in private)
        for name, results in (("private_dsl", private), ("private_freeform", free), ("centralized_dsl", central)):
            totals[f"{name}_bytes"] += sum(r.wire.total_bytes for r in results)
            totals[f"{name}_messages"] += sum(len(r.wire.messages) for r in results)
        rows[size] = {
            "median_commit_ms": statistics.median(commit),
            "success": sum(r.success for r in private) / len(private),
            "success_freeform": sum(r.success for r in free) / len(free),
            "success_centralized": sum(r.success for r in central) / len(central),
            "median_bytes_dsl": statistics.median(r.wire.total_bytes for r in private),
            "median_bytes_freeform": statistics.median(r.wire.total_bytes for r in free),
            "median_bytes_centralized": statistics.median(r.wire.total_bytes for r in central),
            "median_messages_private": statistics.median(len(r.wire.messages) for r in private),
            "median_messages_centralized": statistics.median(len(r.wire.messages) for r in central),
        }
    file_s = _file_run([task for tasks in drawn.values() for task in tasks][:FILE_TASKS], drawn)
    table = Table(
        "agents", "commit ms (median)", "success", "DSL B", "free-form B", "centralized B", "msgs priv/central"
    )
    for size, row in rows.items():
        table.add_row(
            str(size),
            f"{row['median_commit_ms']:.2f}",
            f"{row['success']:.0%}",
            f"{row['median_bytes_dsl']:.0f}",
            f"{row['median_bytes_freeform']:.0f}",
            f"{row['median_bytes_centralized']:.0f}",
            f"{row['median_messages_private']:.0f}/{row['median_messages_centralized']:.0f}",
        )
    console = Console()
    console.print(table)
    ratio = totals["private_dsl_bytes"] / max(totals["private_freeform_bytes"], 1)
    privacy = totals["private_dsl_bytes"] / max(totals["centralized_dsl_bytes"], 1)
    console.print(
        f"DSL/free-form bytes {ratio:.2f} · private/centralized bytes {privacy:.2f} · "
        f"{episodes / episode_s:.0f} episodes/s on the simulator · {FILE_TASKS}-task file via the CLI {file_s:.1f} s"
    )
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "version": __version__,
                "python": platform.python_version(),
                "machine": platform.machine(),
                "per_size": PER_SIZE,
                "by_agents": rows,
                "totals": totals,
                "dsl_to_freeform_bytes": ratio,
                "private_to_centralized_bytes": privacy,
                "episodes_per_s": episodes / episode_s,
                "file_tasks": FILE_TASKS,
                "file_run_s": file_s,
            },
            indent=2,
        )
    )


def _file_run(tasks: list[TeamTask], drawn: dict[int, list[TeamTask]]) -> float:
    """Wall seconds for ``gencoord tasks run`` on one file of ``tasks`` (records and report included)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tasks.json"
        path.write_text(json.dumps({"tasks": [task.model_dump() for task in tasks]}))
        started = time.perf_counter()
        result = CliRunner().invoke(app, ["tasks", "run", str(path), "--out", str(Path(folder) / "run"), "--jsonl"])
        elapsed = time.perf_counter() - started
        assert result.exit_code == 0, result.output
        assert len(result.stdout.splitlines()) == len(tasks), len(drawn)
    return elapsed


if __name__ == "__main__":
    main()
