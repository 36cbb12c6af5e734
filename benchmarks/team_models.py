"""Team models in every role (issue 36): success, time to commitment, tokens and parse failures, per role.

Runs, side by side in one process on the same tasks, the planner with rule peers (the reference,
zero model calls) and the shipped tiny team model in every role, decoded freely (``model:``) and
under each message's grammar (``constrained:``), plus each role alone (the model leading with rule
peers; the planner leading with model peers). Tasks: generated MINDcraft-format crafting tasks of
item families held out of the model's training (``gencoord.train.team_data``), and MINDcraft's own
crafting train file, which the model never saw. Per setting it reports success by agent count,
and per role (lead; peers' HAVE and decision lines) the mean time to write a message, output tokens
per message, and how many runs ended in a parse failure. Results: benchmarks/results/team_models.json.
Not a test; timings are this machine's, compare them as ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.backends.registry import team_players
from gencoord.prior.load import team_prior
from gencoord.run.team import TeamResult, run_team_task
from gencoord.tasks.team import TeamTask
from gencoord.tasks.team_files import read_task_file
from gencoord.train.team_data import HELD_OUT, draw_task

ROOT = Path(__file__).parents[1]
CHECKPOINT = ROOT / "src" / "gencoord" / "experiments" / "checkpoints" / "tiny-team"
MINDCRAFT = ROOT.parent / "shared" / "data" / "mindcraft" / "crafting" / "filtered_train_tasks.json"
ROLES = {"team_lead": "lead", "team_have": "peer HAVE", "team_response": "peer decision"}


def settings(checkpoint: Path) -> dict[str, str]:
    model, constrained = f"model:{checkpoint}", f"constrained:{checkpoint}"
    return {
        "planner + rule peers": "planner",
        "model, every role": f"lead={model},peers={model}",
        "constrained model, every role": f"lead={constrained},peers={constrained}",
        "constrained model leads, rule peers": f"lead={constrained},peers=rule",
        "planner leads, constrained model peers": f"lead=planner,peers={constrained}",
    }


def measure(name: str, roles: str, suites: dict[str, list[TeamTask]]) -> dict[str, Any]:
    prior = team_prior()
    players = team_players(roles, prior)
    results: dict[str, list[TeamResult]] = {
        suite: [run_team_task(task, prior, lead_backend=players.lead, peer_backend=players.peers) for task in tasks]
        for suite, tasks in suites.items()
    }
    row: dict[str, Any] = {"setting": name, "roles": roles, "suites": {}}
    for suite, done in results.items():
        by_agents: dict[int, list[bool]] = defaultdict(list)
        for result in done:
            by_agents[len(result.task.agents)].append(result.success)
        per_role: dict[str, dict[str, float | int]] = {}
        for stage, role in ROLES.items():
            said = [g.reply for result in done for g in result.generations if g.stage == stage]
            if not said:
                continue
            per_role[role] = {
                "messages": len(said),
                "model_calls": sum(reply.model_calls for reply in said),
                "mean_ms": 1000 * statistics.fmean(reply.latency_s for reply in said),
                "output_tokens": statistics.fmean(reply.output_tokens or 0 for reply in said),
            }
        row["suites"][suite] = {
            "tasks": len(done),
            "success": sum(r.success for r in done) / len(done),
            "by_agents": {n: f"{sum(w)}/{len(w)}" for n, w in sorted(by_agents.items())},
            "parse_failures": sum(r.failure == "PARSE_FAILURE" for r in done),
            "codes": dict(sorted(_codes(done).items())),
            "time_to_commitment_s": statistics.fmean(r.seconds.get("protocol", 0.0) for r in done),
            "roles": per_role,
        }
    return row


def _codes(results: list[TeamResult]) -> dict[str, int]:
    codes: dict[str, int] = defaultdict(int)
    for result in results:
        if not result.success:
            codes[str(result.code)] += 1
    return codes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    parser.add_argument("--tasks", type=int, default=60, help="held-out generated tasks")
    parser.add_argument("--mindcraft", type=Path, default=MINDCRAFT)
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "team_models.json")
    args = parser.parse_args()
    torch.set_num_threads(2)
    prior, rng = team_prior(), random.Random(args.seed)
    suites = {"held-out generated": [draw_task(prior, rng, HELD_OUT) for _ in range(args.tasks)]}
    if args.mindcraft.exists():
        suites["MINDcraft crafting train"] = list(read_task_file(args.mindcraft, prior=prior).tasks)
    started = time.perf_counter()
    rows = [measure(name, roles, suites) for name, roles in settings(args.checkpoint).items()]
    console = Console()
    for suite, tasks in suites.items():
        table = Table(title=f"{suite}: {len(tasks)} tasks")
        for column in ("setting", "success", "by agents", "parse failures", "lead ms", "HAVE ms", "decision ms"):
            table.add_column(column)
        for row in rows:
            cell = row["suites"][suite]
            roles = cell["roles"]
            table.add_row(
                row["setting"],
                f"{100 * cell['success']:.1f}%",
                " ".join(f"{n}:{w}" for n, w in cell["by_agents"].items()),
                str(cell["parse_failures"]),
                *(f"{roles[r]['mean_ms']:.0f}" if r in roles else "–" for r in ("lead", "peer HAVE", "peer decision")),
            )
        console.print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "checkpoint": str(
                    args.checkpoint.relative_to(ROOT) if args.checkpoint.is_relative_to(ROOT) else args.checkpoint
                ),
                "seed": args.seed,
                "seconds": time.perf_counter() - started,
                "machine": {
                    "python": platform.python_version(),
                    "torch": torch.__version__,
                    "cpus": torch.get_num_threads(),
                },
                "gencoord": __version__,
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )
    console.print(f"results: {args.out}")


if __name__ == "__main__":
    main()
