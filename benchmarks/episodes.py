"""Episode throughput of the embedded world, and where the time goes, in one run.

Rule backends (zero model calls) on the simulator, one process:
  * the 160-cluster request-intervention pool × 2 role permutations (320 episodes),
    timed over several passes: episodes per second, and the share of time spent in
    the protocol (generation through materialization), the world (compile + execute)
    and verification, from the per-episode monotonic timings;
  * the Goal×Capability pool (40 clusters × 2 roles) with correct feedback;
  * a 2,304-episode sweep (384 clusters × 2 roles × 3 seeds, the size of the paper's
    full pool) end to end, including building every episode spec.
Results are printed and written to benchmarks/results/episodes.json. Not a test:
nothing here asserts a time.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.prior import default_prior
from gencoord.run.episode import run_episode
from gencoord.tasks import Split, build_episode, default_suites, draw_pool, paper_pool
from gencoord.tasks.instances import EpisodeSpec

OUT = Path(__file__).parent / "results" / "episodes.json"
PASSES = 7


def _throughput(specs: list[EpisodeSpec]) -> dict[str, float]:
    prior, suites = default_prior(), default_suites()
    for spec in specs:  # warm caches (composer, recipe index) once
        run_episode(spec, prior=prior, suites=suites)
    rates, stages = [], {"protocol": 0.0, "world": 0.0, "verify": 0.0}
    total = 0.0
    successes = 0
    for _ in range(PASSES):
        start = time.perf_counter()
        for spec in specs:  # a runner writes each record and lets it go; so does this loop
            result = run_episode(spec, prior=prior, suites=suites)
            successes += result.outcome.success
            for stage, seconds in result.seconds.items():
                stages[stage] += seconds
        elapsed = time.perf_counter() - start
        rates.append(len(specs) / elapsed)
        total += elapsed
    measured = sum(stages.values())
    return {
        "episodes": len(specs),
        "passes": PASSES,
        "episodes_per_s_median": statistics.median(rates),
        "episodes_per_s_min": min(rates),
        "success_rate": successes / (len(specs) * PASSES),
        **{f"share_{stage}": seconds / total for stage, seconds in stages.items()},
        "share_orchestration": (total - measured) / total,
        "us_per_episode": 1e6 * total / (len(specs) * PASSES),
    }


def _sweep() -> dict[str, float]:
    prior, suites = default_prior(), default_suites()
    start = time.perf_counter()
    clusters = draw_pool(Split.IN_DISTRIBUTION, 384, seed=11)
    specs = [build_episode(c, role, seed, prior, suites) for c in clusters for role in (0, 1) for seed in (0, 1, 2)]
    built = time.perf_counter()
    successes = sum(run_episode(spec, prior=prior, suites=suites).outcome.success for spec in specs)
    done = time.perf_counter()
    return {
        "episodes": len(specs),
        "build_s": built - start,
        "run_s": done - built,
        "total_s": done - start,
        "episodes_per_s": len(specs) / (done - start),
        "success_rate": successes / len(specs),
    }


def main() -> None:
    prior, suites = default_prior(), default_suites()
    forward = [build_episode(c, role, 0, prior, suites) for c in paper_pool("request_intervention") for role in (0, 1)]
    feedback = [build_episode(c, role, 0, prior, suites) for c in paper_pool("goal_capability") for role in (0, 1)]
    results = {"forward_request_160x2": _throughput(forward), "goal_capability_feedback_40x2": _throughput(feedback)}
    results["sweep_2304"] = _sweep()
    table = Table(title="Episodes on the embedded world, rule backends, one process")
    for column in ("workload", "episodes", "eps/s (median)", "µs/episode", "protocol", "world", "verify", "other"):
        table.add_column(column)
    for name in ("forward_request_160x2", "goal_capability_feedback_40x2"):
        row = results[name]
        table.add_row(
            name,
            str(row["episodes"]),
            f"{row['episodes_per_s_median']:.0f}",
            f"{row['us_per_episode']:.0f}",
            *(f"{100 * row[f'share_{s}']:.1f}%" for s in ("protocol", "world", "verify", "orchestration")),
        )
    console = Console(width=120)
    console.print(table)
    sweep = results["sweep_2304"]
    console.print(
        f"2,304-episode sweep: {sweep['total_s']:.2f} s end to end ({sweep['build_s']:.2f} s building specs, "
        f"{sweep['run_s']:.2f} s running), {sweep['episodes_per_s']:.0f} episodes/s, "
        f"success {sweep['success_rate']:.3f}"
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gencoord": __version__, "python": platform.python_version(), "machine": platform.machine()}
    OUT.write_text(json.dumps({"meta": meta, **results}, indent=2) + "\n")
    console.print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
