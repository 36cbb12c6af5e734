"""Pools of gate instances, with round budgets calibrated on clean runs.

The budget is resource-constrained by definition, not by tuning: by default twice the
rounds the same job takes when nothing goes wrong (measured once per job by running
it), plus ten; experiments may set the factor and margin to study tighter or looser budgets.
Training and evaluation pools draw from disjoint seed ranges.
"""

from __future__ import annotations

import math
from functools import cache

from gencoord.errors import ConfigError
from gencoord.gate.episode import run_gate_episode
from gencoord.gate.jobs import default_jobs
from gencoord.gate.policy import GateCondition
from gencoord.gate.suite import GateInstance, make_instance
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior

BUDGET_FACTOR = 2
BUDGET_MARGIN = 10
SPLIT_OFFSETS = {"eval": 0, "train": 1_000_000}


@cache
def clean_rounds(job_name: str, prior: Prior) -> int:
    """Rounds the job takes with no anomaly (never escalating: nothing calls for it)."""
    job = default_jobs(prior)[job_name]
    clean = make_instance(job, 0, prior, budget=10_000, kinds=())
    result = run_gate_episode(clean, GateCondition.NEVER, prior=prior)
    if not result.success:
        raise ConfigError("BAD_JOB", f"job {job_name} does not succeed even without anomalies")
    return result.rounds


def budget_for(job_name: str, prior: Prior, factor: float = BUDGET_FACTOR, margin: int = BUDGET_MARGIN) -> int:
    return math.ceil(factor * clean_rounds(job_name, prior)) + margin


def gate_instance(
    job_name: str, seed: int, prior: Prior | None = None, factor: float = BUDGET_FACTOR, margin: int = BUDGET_MARGIN
) -> GateInstance:
    prior = prior or default_prior()
    jobs = default_jobs(prior)
    if job_name not in jobs:
        raise ConfigError("UNKNOWN_JOB", f"unknown gate job {job_name!r}; known: {', '.join(sorted(jobs))}")
    return make_instance(jobs[job_name], seed, prior, budget_for(job_name, prior, factor, margin))


def gate_pool(
    size: int,
    seed: int = 0,
    prior: Prior | None = None,
    split: str = "eval",
    factor: float = BUDGET_FACTOR,
    margin: int = BUDGET_MARGIN,
) -> tuple[GateInstance, ...]:
    """``size`` instances cycling over the jobs; ``split`` picks a disjoint seed range.

    ``factor`` and ``margin`` set how tight the round budget is: factor × clean rounds + margin.
    """
    if split not in SPLIT_OFFSETS:
        raise ConfigError("UNKNOWN_SPLIT", f"gate split must be one of {sorted(SPLIT_OFFSETS)}, got {split!r}")
    prior = prior or default_prior()
    names = sorted(default_jobs(prior))
    base = SPLIT_OFFSETS[split] + seed * 10_000
    return tuple(gate_instance(names[index % len(names)], base + index, prior, factor, margin) for index in range(size))
