"""The escalation gate (the Gated Coordination paper): gate conditions over instances of the dynamic suite."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gencoord.backends.base import Backend
from gencoord.backends.families import BackendSpec
from gencoord.errors import ConfigError
from gencoord.eval.experiment import ExperimentKind, Record, ReportParts
from gencoord.eval.kinds.gate.config import GateExperimentConfig
from gencoord.gate.adjudicators import LOGISTIC, adjudicator_for
from gencoord.gate.config import gate_config_at, load_gate_config
from gencoord.gate.policy import GateCondition
from gencoord.gate.pool import gate_pool, team_pool
from gencoord.gate.rounds import run_gate_episode
from gencoord.gate.suite import GateInstance
from gencoord.prior.load import default_prior, team_prior
from gencoord.reasons import Reason
from gencoord.tasks.team import TeamTask
from gencoord.tasks.team_files import load_team_tasks
from gencoord.worlds.choice import executor_for
from gencoord.worlds.mirror import MirroredExecutor
from gencoord.worlds.sim import SimExecutor


@cache
def helper_of(name: BackendSpec, team: bool) -> Backend:
    """This process's helper backend: a checkpoint is loaded once per worker, not once per episode."""
    prior = team_prior() if team else default_prior()
    return name.family.team_peer(name.target, prior)


def gate_tasks_of(config: GateExperimentConfig) -> tuple[TeamTask, ...]:
    """The team tasks a gate experiment builds its instances from (none: the built-in task graphs)."""
    prior = team_prior()
    tasks = tuple(task for path in config.tasks for task in load_team_tasks(Path(path), config.format, prior))
    ids = [task.id for task in tasks]
    repeated = sorted({ident for ident in ids if ids.count(ident) > 1})
    if repeated:
        raise ConfigError(
            Reason.DUPLICATE_TASK, f"{config.name}: task ids must be unique across files; repeated: {repeated[0]}"
        )
    return tasks


@dataclass(frozen=True)
class GatePool:
    """A gate run's instances, and the team tasks its files held that the gate cannot run (task → why)."""

    instances: tuple[GateInstance, ...]
    left_out: dict[str, str]


def instances_of(config: GateExperimentConfig) -> GatePool:
    count = min(config.instances, config.clusters or config.instances)
    factor, margin = config.budget_factor, config.budget_margin
    if config.tasks:
        tasks = gate_tasks_of(config)
        instances, left_out = team_pool(tasks, count, config.seed, team_prior(), config.split, factor, margin)
        return GatePool(instances, left_out)
    return GatePool(gate_pool(count, config.seed, split=config.split, factor=factor, margin=margin), {})


@dataclass(frozen=True, slots=True)
class GateJob:
    key: str
    instance: int  # index into the config's gate pool
    condition: GateCondition


class GateKind(ExperimentKind[GateExperimentConfig, GatePool, GateJob]):
    name = "gate"
    config = GateExperimentConfig
    paths = ("tasks", "gate_config")
    backend_fields = ("adjudicator", "helpers")

    def check(self, config: GateExperimentConfig, origin: str) -> None:
        if config.gate_config is not None:
            load_gate_config(Path(config.gate_config))  # fail now, not in a worker
        gate_tasks_of(config)  # every task file loads and every item exists
        if config.reference is not None and config.reference not in config.conditions:
            raise ConfigError(
                Reason.REFERENCE, f"{origin}: reference {config.reference.value!r} is not among the conditions"
            )

    def prepare(self, config: GateExperimentConfig) -> GatePool:
        return instances_of(config)

    def report_facts(self, config: GateExperimentConfig, prepared: GatePool) -> dict[str, Any]:
        """The tasks left out of the team suite, and the score thresholds of the gate configuration used."""
        thresholds = gate_config_at(config.gate_config).thresholds
        return {"left_out": prepared.left_out, "thresholds": {"low": thresholds.low, "high": thresholds.high}}

    def expand(self, config: GateExperimentConfig, prepared: GatePool) -> list[GateJob]:
        thought = "" if config.thinking.none else f"|{config.thinking.describe()}"  # a record made otherwise differs
        return [
            GateJob(f"{instance.id}|{condition}{thought}", index, condition)
            for index, instance in enumerate(prepared.instances)
            for condition in config.conditions
        ]

    def run_job(self, config: GateExperimentConfig, prepared: GatePool, job: GateJob) -> dict[str, Any]:
        instance = prepared.instances[job.instance]
        adjudicator = adjudicator_for(config.adjudicator, config.gate_config)
        prior = team_prior() if config.tasks else default_prior()
        world: dict[str, object] = {"world": config.world.kind}
        mirrored = None
        if config.world.world.compared_with_simulator:
            mirrored = MirroredExecutor(executor_for(config.world), SimExecutor(prior.game))
        gated = run_gate_episode(
            instance,
            job.condition,
            config=gate_config_at(config.gate_config),
            adjudicator=adjudicator,
            executor=mirrored,
            prior=prior,
            thinking=config.thinking,
            helper=helper_of(config.helpers, bool(config.tasks)),
        )
        if mirrored is not None:
            world["simulator_disagrees"] = list(mirrored.disagreements)
        record = gated.record()
        return (
            record
            | {"cluster": instance.id, "outcome": {"G": record["success"]}, "adjudicator": adjudicator.name}
            | world
        )

    def report(
        self, config: GateExperimentConfig, records: Sequence[Record], out: Path, facts: Mapping[str, Any]
    ) -> ReportParts:
        from gencoord.eval.kinds.gate.diagnostics import gate_figure  # noqa: PLC0415 - matplotlib: reports only
        from gencoord.eval.kinds.gate.tables import gate_headline, gate_tables  # noqa: PLC0415

        tables, estimates = gate_tables(records, config, facts)
        (out / "figures").mkdir(parents=True, exist_ok=True)
        figures = {"ablation": gate_figure(estimates, out / "figures" / "ablation.png")}
        return ReportParts(tables, figures, headline=gate_headline(records, config, estimates))

    def backends(self, config: GateExperimentConfig) -> list[str]:
        """The helpers' backend, and the adjudicator when a model judges the gray zone (the logistic fallback is
        no backend)."""
        return [config.helpers] + ([] if config.adjudicator == LOGISTIC else [config.adjudicator])


GATE = GateKind()
