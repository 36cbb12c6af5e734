"""Expand a config into episode jobs, and run one job into its JSON record.

A job is a handful of indices and names, so it ships cheaply to any worker; the worker
rebuilds the pool from the config (pools are pure functions of their seed). Every job
has a stable key, which is how a resumed run knows what is already done.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache

from gencoord import __version__
from gencoord.backends.base import Backend
from gencoord.backends.registry import backend_fits, backend_set, for_seed, team_backend
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import (
    CompositionExperimentConfig,
    Experiment,
    ExperimentConfig,
    GateExperimentConfig,
    TeamExperimentConfig,
    gate_tasks_of,
    team_tasks_of,
)
from gencoord.gate.adjudicators import adjudicator_for
from gencoord.gate.config import gate_config_at
from gencoord.gate.episode import run_gate_episode
from gencoord.gate.policy import GateCondition
from gencoord.gate.pool import gate_pool, team_pool
from gencoord.gate.suite import GateInstance
from gencoord.planning.composition import CompositionMethod
from gencoord.prior.load import default_prior, team_prior
from gencoord.protocol.delivery import CacheSetting
from gencoord.run.composition import composition_record, run_composition
from gencoord.run.episode import CACHED_CONDITIONS, Condition, records_of, run_episode
from gencoord.run.faults import Fault
from gencoord.run.record import episode_record
from gencoord.run.team import TeamMode, run_team_task
from gencoord.run.team_record import team_record
from gencoord.tasks.cluster import Cluster, draw_pool, paper_pool
from gencoord.tasks.cross_products import composition_case
from gencoord.tasks.episode import build_episode
from gencoord.tasks.spec import default_suites
from gencoord.tasks.team import TeamTask
from gencoord.worlds.choice import executor_for
from gencoord.worlds.mirror import MirroredExecutor
from gencoord.worlds.sim import SimExecutor


@dataclass(frozen=True, slots=True)
class Job:
    key: str
    cluster: int  # index into the config's pool
    role: int
    seed: int
    condition: Condition
    fault: Fault
    backend: str
    surface: SurfaceName
    cache: CacheSetting = CacheSetting.OFF  # the delivery conditions only


def clusters_of(config: ExperimentConfig) -> tuple[Cluster, ...]:
    pool = (
        paper_pool(config.pool)
        if isinstance(config.pool, str)
        else draw_pool(config.pool.split, config.pool.size, config.pool.seed)
    )
    if config.clusters is None:
        return pool
    if config.clusters > len(pool):
        raise ConfigError("POOL_SIZE", f"clusters = {config.clusters} but the pool holds {len(pool)}")
    keep = {cluster.pair for cluster in pool[: config.clusters]}
    return tuple(cluster for cluster in pool if cluster.pair in keep)


@dataclass(frozen=True, slots=True)
class GateJob:
    key: str
    instance: int  # index into the config's gate pool
    condition: GateCondition


@dataclass(frozen=True, slots=True)
class TeamJob:
    key: str
    task: int  # index into the config's tasks
    mode: TeamMode
    surface: SurfaceName
    backend: str


@dataclass(frozen=True, slots=True)
class CompositionJob:
    key: str
    case: int
    role: int
    seed: int
    method: CompositionMethod
    backend: str | None  # Direct Short DSL's backend set, with this job's seed filled in


AnyJob = Job | GateJob | TeamJob | CompositionJob


def instances_of(config: GateExperimentConfig) -> tuple[GateInstance, ...]:
    count = min(config.instances, config.clusters or config.instances)
    factor, margin = config.budget_factor, config.budget_margin
    if config.tasks:
        tasks = gate_tasks_of(config)
        instances, _ = team_pool(tasks, count, config.seed, team_prior(), config.split, factor, margin)
        return instances
    return gate_pool(count, config.seed, split=config.split, factor=factor, margin=margin)


def expand(config: Experiment) -> list[AnyJob]:
    """Every episode of the experiment, in a fixed order."""
    if isinstance(config, GateExperimentConfig):
        return [
            GateJob(f"{instance.id}|{condition}", index, condition)
            for index, instance in enumerate(instances_of(config))
            for condition in config.conditions
        ]
    if isinstance(config, TeamExperimentConfig):
        return [
            TeamJob(f"{path}:{task.id}|{mode}|{surface}|{backend}", index, mode, surface, backend)
            for index, (path, task) in enumerate(team_tasks_of(config))
            for mode in config.modes
            for surface in config.surfaces
            for backend in config.backends
        ]
    if isinstance(config, CompositionExperimentConfig):
        count = min(config.cases, config.clusters or config.cases)
        return [
            CompositionJob(
                f"cross-product-{case:03d}|r{role}|s{seed}|{method}",
                case,
                role,
                seed,
                method,
                for_seed(config.direct, seed)
                if method is CompositionMethod.DIRECT_SHORT_DSL and config.direct is not None
                else None,
            )
            for case in range(count)
            for method in config.methods
            for seed in config.seeds
            for role in config.roles
        ]
    jobs: list[AnyJob] = []
    for index, cluster in enumerate(clusters_of(config)):
        for condition in config.conditions:
            for fault in config.faults:
                for backend in config.backends:
                    for surface in config.surfaces:
                        for seed in config.seeds:
                            name = for_seed(backend, seed)
                            if not backend_fits(
                                name, condition is Condition.SINGLE_STEP, surface, records_of(condition)
                            ):
                                continue
                            for role in config.roles:
                                key = "|".join((cluster.id, f"r{role}", f"s{seed}", condition, fault, backend, surface))
                                for setting in _caches(config, condition):
                                    # the cache joins the key only where it applies, so other keys never change
                                    keyed = f"{key}|cache={setting}" if condition in CACHED_CONDITIONS else key
                                    job = Job(keyed, index, role, seed, condition, fault, backend, surface, setting)
                                    jobs.append(job)
    used = {job.backend for job in jobs if isinstance(job, Job)}
    idle = [name for name in config.backends if name not in used]
    if idle:
        raise ConfigError(
            "BACKEND_FITS_NOTHING",
            f"{idle[0]} runs in none of this config's conditions and surfaces "
            "(a trained model writes only the surface and horizon it learned)",
        )
    return jobs


def _caches(config: ExperimentConfig, condition: Condition) -> list[CacheSetting]:
    return list(config.caches) if condition in CACHED_CONDITIONS else [CacheSetting.OFF]


@cache
def _clusters(config_json: str) -> tuple[Cluster, ...]:
    return clusters_of(ExperimentConfig.model_validate_json(config_json))


@cache
def _instances(config_json: str) -> tuple[GateInstance, ...]:
    return instances_of(GateExperimentConfig.model_validate_json(config_json))


_TEAM_TASKS: dict[str, list[tuple[str, TeamTask]]] = {}


def team_tasks_for(config_json: str, shipped: list[tuple[str, TeamTask]] | None = None) -> list[tuple[str, TeamTask]]:
    """A team config's tasks in this process: as the driver loaded and shipped them, else read from the files here.

    Shipping them lets a worker on another node run tasks whose files only the driver has.
    """
    tasks = _TEAM_TASKS.get(config_json)
    if tasks is None:
        tasks = shipped if shipped is not None else team_tasks_of(TeamExperimentConfig.model_validate_json(config_json))
        _TEAM_TASKS[config_json] = tasks
    return tasks


@cache
def team_lead(name: str) -> Backend:
    """This process's lead backend of that name: a checkpoint is loaded once per worker, not once per task."""
    return team_backend(name, team_prior())


@cache
def _digest(config_json: str) -> str:
    return hashlib.sha256(config_json.encode("utf-8")).hexdigest()


def config_digest(config: Experiment) -> str:
    """What identifies a config in every record it produced (the report checks the manifest against it).

    Where the jobs ran (the pool or Ray) and whether someone watched (a view's port) are not
    part of it: neither changes a record.
    """
    watched = {"world": {"view_port"}} if hasattr(config, "world") else {}
    return _digest(config.model_dump_json(exclude={"execution": True, **watched}))


def run_job(config: Experiment, config_json: str, job: AnyJob) -> dict[str, object]:
    """One episode's record, tagged with its job key, experiment and config digest."""
    tags: dict[str, object] = {
        "job": job.key,
        "experiment": config.name,
        "config_sha256": config_digest(config),
        "gencoord": __version__,
    }
    if isinstance(job, GateJob):
        instance = _instances(config_json)[job.instance]
        assert isinstance(config, GateExperimentConfig)
        adjudicator = adjudicator_for(config.adjudicator, config.gate_config)
        gate = gate_config_at(config.gate_config)
        prior = team_prior() if config.tasks else default_prior()
        world: dict[str, object] = {"world": config.world.kind}
        mirrored = None
        if config.world.kind != "sim":
            mirrored = MirroredExecutor(executor_for(config.world), SimExecutor(prior.game))
        gated = run_gate_episode(
            instance, job.condition, config=gate, adjudicator=adjudicator, executor=mirrored, prior=prior
        )
        if mirrored is not None:
            world["simulator_disagrees"] = list(mirrored.disagreements)
        record = gated.record()
        return (
            record
            | {"cluster": instance.id, "outcome": {"G": record["success"]}, "adjudicator": adjudicator.name}
            | world
            | tags
        )
    if isinstance(job, TeamJob):
        assert isinstance(config, TeamExperimentConfig)
        path, task = team_tasks_for(config_json)[job.task]
        lead, executor = team_lead(job.backend), executor_for(config.world)
        team = run_team_task(
            task, team_prior(), mode=job.mode, surface=job.surface, lead_backend=lead, executor=executor
        )
        record = team_record(team, path, config.world.kind)
        viewer = {"episode": task.id, "condition": job.mode.value, "backend_set": job.backend}
        return record | viewer | {"outcome": {**(record["stages"] or {}), "G": team.success}} | tags
    if isinstance(job, CompositionJob):
        prior, suites = default_prior(), default_suites()
        case = composition_case(job.case, job.role, job.seed, prior, suites)
        sender = None
        if job.backend is not None:
            sender = backend_set(job.backend)(case.spec, False, prior, suites)[case.spec.sender]
        composed = run_composition(case, job.method, executor_for(config.world), prior, suites, sender)
        return composition_record(composed) | {"world": config.world.kind, "backend_set": job.backend} | tags
    assert isinstance(job, Job) and isinstance(config, ExperimentConfig)
    prior, suites = default_prior(), default_suites()
    cluster = _clusters(config_json)[job.cluster]
    spec = build_episode(cluster, job.role, job.seed, prior, suites, job.surface, config.described)
    backends = backend_set(for_seed(job.backend, job.seed))(spec, job.condition is Condition.NO_REQUEST, prior, suites)
    executor = executor_for(config.world)
    result = run_episode(
        spec,
        job.condition,
        fault=job.fault,
        backends=backends,
        executor=executor,
        prior=prior,
        suites=suites,
        cache=job.cache,
    )
    return episode_record(result) | {"backend_set": job.backend, "world": config.world.kind} | tags
