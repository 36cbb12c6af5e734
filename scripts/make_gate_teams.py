"""Write experiments/team/gate_teams.json: random team tasks of 2-8 agents for the gate's team suite.

Drawn by gencoord.tasks.generate.random_task from a fixed seed, five per team size, so the
suite covers every size up to eight agents (the shipped generated.json stops at seven).
Run it again to reproduce the file byte for byte.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from gencoord.prior.load import team_prior
from gencoord.tasks.generate import random_task

SEED = 20261201
PER_SIZE = 5
SIZES = range(2, 9)
OUT = Path(__file__).parents[1] / "src" / "gencoord" / "experiments" / "team" / "gate_teams.json"


def main() -> None:
    prior, rng = team_prior(), random.Random(SEED)
    tasks = []
    for size in SIZES:
        made = 0
        while made < PER_SIZE:
            generated = random_task(prior, rng, size, task_id=f"gate{size}_{made}", distractors=rng.randint(0, 3))
            if generated is not None:
                tasks.append(generated.task.model_dump(exclude_defaults=True))
                made += 1
    description = (
        f"{len(tasks)} random team tasks for the gate's team suite (scripts/make_gate_teams.py, seed {SEED}): "
        f"{PER_SIZE} per team size from 2 to 8 agents, leaves split at random, distractors."
    )
    OUT.write_text(json.dumps({"description": description, "tasks": tasks}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(tasks)} tasks)")


if __name__ == "__main__":
    main()
