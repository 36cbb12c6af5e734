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
from gencoord.gate.config import default_gate_config
from gencoord.gate.policy import GateCondition, LogisticAdjudicator
from gencoord.gate.rounds import GateEpisode, run_gate_episode
from gencoord.gate.suite import GateInstance, make_instance
from gencoord.gate.task_graphs import default_task_graphs
from gencoord.gate.teams import TeamGraph, team_graphs, team_instance
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.tasks.team import TeamTask
from gencoord.worlds.sim.executor import SimExecutor

BUDGET_FACTOR = 2
BUDGET_MARGIN = 10
SPLIT_OFFSETS = {"eval": 0, "train": 1_000_000}


@cache
def clean_rounds(job_name: str, prior: Prior) -> int:
    """Rounds the job takes with no anomaly (never escalating: nothing calls for it)."""
    job = default_task_graphs(prior)[job_name]
    clean = make_instance(job, 0, prior, budget=10_000, kinds=())
    result = run_gate_episode(clean, GateCondition.NEVER, prior=prior)
    if not result.success:
        raise ConfigError(Reason.BAD_JOB, f"job {job_name} does not succeed even without anomalies")
    return result.rounds


def budget_for(job_name: str, prior: Prior, factor: float = BUDGET_FACTOR, margin: int = BUDGET_MARGIN) -> int:
    return math.ceil(factor * clean_rounds(job_name, prior)) + margin


def gate_instance(
    job_name: str, seed: int, prior: Prior | None = None, factor: float = BUDGET_FACTOR, margin: int = BUDGET_MARGIN
) -> GateInstance:
    prior = prior or default_prior()
    jobs = default_task_graphs(prior)
    if job_name not in jobs:
        raise ConfigError(Reason.UNKNOWN_JOB, f"unknown gate job {job_name!r}; known: {', '.join(sorted(jobs))}")
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
        raise ConfigError(Reason.UNKNOWN_SPLIT, f"gate split must be one of {sorted(SPLIT_OFFSETS)}, got {split!r}")
    prior = prior or default_prior()
    names = sorted(default_task_graphs(prior))
    base = SPLIT_OFFSETS[split] + seed * 10_000
    return tuple(gate_instance(names[index % len(names)], base + index, prior, factor, margin) for index in range(size))


def clean_team_run(team: TeamGraph, prior: Prior) -> tuple[int, dict[str, int]] | None:
    """Rounds a clean run of the team task takes, and the round each node completed; None when it fails."""
    config = default_gate_config()
    clean = team_instance(team, 0, prior, 10_000, {}, kinds=())
    episode = GateEpisode(
        clean, GateCondition.NEVER, config, LogisticAdjudicator(config), SimExecutor(prior.game), prior
    )
    episode.rollout = True  # nothing to label: no anomaly, and only the rounds are wanted
    result = episode.run()
    return (result.rounds, dict(episode.completed_at)) if result.success else None


def runnable_teams(
    tasks: tuple[TeamTask, ...], prior: Prior
) -> tuple[list[tuple[TeamGraph, int, dict[str, int]]], dict[str, str]]:
    """(graph, clean rounds, node → clean completion round) for each task the gate can run, and why
    each other task is left out (the planner cannot plan it, or it fails even without anomalies)."""
    graphs, skipped = team_graphs(tasks, prior)
    usable = []
    for team in graphs:
        clean = clean_team_run(team, prior)
        if clean is None:
            skipped[team.task.id] = "CLEAN_RUN_FAILED: the plan does not complete even without anomalies"
        else:
            usable.append((team, *clean))
    return usable, skipped


def team_pool(
    tasks: tuple[TeamTask, ...],
    size: int,
    seed: int = 0,
    prior: Prior | None = None,
    split: str = "eval",
    factor: float = BUDGET_FACTOR,
    margin: int = BUDGET_MARGIN,
) -> tuple[tuple[GateInstance, ...], dict[str, str]]:
    """``size`` instances of the dynamic team suite cycling over ``tasks``, and the tasks left out (with why).

    Budgets are factor × the task's clean rounds + margin, as for the jobs.
    """
    if split not in SPLIT_OFFSETS:
        raise ConfigError(Reason.UNKNOWN_SPLIT, f"gate split must be one of {sorted(SPLIT_OFFSETS)}, got {split!r}")
    prior = prior or default_prior()
    usable, skipped = runnable_teams(tasks, prior)
    if not usable:
        why = "; ".join(f"{task}: {reason}" for task, reason in skipped.items())
        raise ConfigError(Reason.NO_GATE_TASKS, f"no task can run under the gate: {why}")
    base = SPLIT_OFFSETS[split] + seed * 10_000
    instances = []
    for index in range(size):
        team, rounds, done_at = usable[index % len(usable)]
        budget = math.ceil(factor * rounds) + margin
        instances.append(team_instance(team, base + index, prior, budget, done_at))
    return tuple(instances), skipped
