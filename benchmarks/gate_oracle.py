"""What the gate's counterfactual oracle costs, measured side by side in one run.

  * each gate suite (the job suite of gate_ablation, the team suite of gate_teams) at 500
    instances × its 6 conditions (3,000 episodes), oracle included, through the experiment
    runner (process pool, one worker per core): wall time, episodes/s, rollouts per episode,
    and how many issue labels the independent oracle changes against the old shared-planner one;
  * in one process on the same 60 instances × 6 conditions: episodes with the oracle
    against the same episodes without it (``rollout`` set, so nothing is copied or
    replayed), and the ratio.
Results are printed and written to benchmarks/results/gate_oracle.json. Not a test.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.eval.config import find_experiment, load_experiment
from gencoord.eval.kinds.gate.config import GateExperimentConfig
from gencoord.eval.runner import create_run, read_records, run_experiment
from gencoord.gate.config import default_gate_config
from gencoord.gate.policy import GateCondition, LogisticAdjudicator
from gencoord.gate.pool import gate_pool
from gencoord.gate.rounds import GateEpisode
from gencoord.prior.load import default_prior
from gencoord.worlds.sim import SimExecutor

INSTANCES = 500
SUITES = ("gate_ablation", "gate_teams")
SAMPLE = 60
OUT = Path(__file__).parent / "results" / "gate_oracle.json"


def _full_run(name: str) -> dict[str, float]:
    config = load_experiment(find_experiment(name))
    assert isinstance(config, GateExperimentConfig)
    config = config.model_copy(update={"instances": INSTANCES})
    with tempfile.TemporaryDirectory() as folder:
        run_dir = create_run(config, Path(folder))
        started = time.perf_counter()
        summary = run_experiment(config, run_dir)
        seconds = time.perf_counter() - started
        records = read_records(run_dir)
    rollouts = sum(len(issue["oracle"] or {}) for record in records for issue in record["issues"])
    issues = [issue for record in records for issue in record["issues"]]
    return {
        "issues": len(issues),
        "relabelled": sum(record["relabelled_issues"] for record in records),
        "needed_old": sum(not issue["shared_planner_recoverable"] for issue in issues),
        "needed_oracle": sum(bool(issue["needed_escalation"]) for issue in issues),
        "episodes": summary.ran,
        "seconds": seconds,
        "episodes_per_s": summary.ran / seconds,
        "rollouts_per_episode": rollouts / len(records),
        "workers": os.cpu_count() or 1,
    }


def _one_process(with_oracle: bool) -> float:
    prior, config = default_prior(), default_gate_config()
    instances = gate_pool(SAMPLE, 0)
    started = time.perf_counter()
    for condition in GateCondition:
        for instance in instances:
            adjudicator = LogisticAdjudicator(config)
            episode = GateEpisode(instance, condition, config, adjudicator, SimExecutor(prior.game), prior)
            episode.rollout = not with_oracle
            episode.run()
    return time.perf_counter() - started


def main() -> None:
    full = {name: _full_run(name) for name in SUITES}
    without, with_oracle = _one_process(False), _one_process(True)
    episodes = SAMPLE * len(GateCondition)
    console = Console(width=140)
    table = Table("measure", "value")
    for name, run in full.items():
        table.add_row(
            f"{name}: {run['episodes']:.0f} episodes (500 × 6), oracle included, {run['workers']} workers", ""
        )
        table.add_row("  wall time", f"{run['seconds']:.1f} s (target: under 120 s)")
        table.add_row("  episodes/s", f"{run['episodes_per_s']:.1f}")
        table.add_row("  rollouts per episode", f"{run['rollouts_per_episode']:.2f}")
        table.add_row(
            "  issues: needed escalation, old label → oracle",
            f"{run['needed_old']:.0f} → {run['needed_oracle']:.0f} of {run['issues']:.0f} "
            f"({run['relabelled']:.0f} labels changed)",
        )
    for label, seconds in (("without", without), ("with", with_oracle)):
        table.add_row(f"one process, {episodes} episodes {label} the oracle", f"{1000 * seconds / episodes:.1f} ms/ep")
    table.add_row("  oracle / no oracle", f"{with_oracle / without:.2f}×")
    console.print(table)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "version": __version__,
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "full_runs": full,
                "one_process": {
                    "episodes": episodes,
                    "without_oracle_ms_per_episode": 1000 * without / episodes,
                    "with_oracle_ms_per_episode": 1000 * with_oracle / episodes,
                    "ratio": with_oracle / without,
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
