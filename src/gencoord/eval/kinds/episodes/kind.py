"""Pair episodes: the paper's suites × conditions × faults × backends × surfaces × seeds × roles.

One config shape serves the paper's experiments (request and feedback intervention,
controlled faults, representation, horizon, visibility, private structure) and ``custom``;
each is a kind of its own because each adds its own paper tables and figures to the
generic outcome table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gencoord.backends.families import BackendSpec
from gencoord.backends.registry import backend_fits, backend_set
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import unique_lists
from gencoord.eval.experiment import DEFAULT_KIND, ExperimentKind, Record, ReportParts, validated_with
from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig
from gencoord.eval.kinds.episodes.figures import success_figure, visibility_figure, wire_figure
from gencoord.eval.kinds.episodes.outcomes import block_table, generic_tables, headline_table
from gencoord.eval.kinds.episodes.private import private_tables
from gencoord.eval.kinds.episodes.rows import Row, group_rows
from gencoord.eval.kinds.episodes.tables import (
    fidelity_table,
    horizon_table,
    representation_table,
    stage_table,
    visibility_table,
)
from gencoord.eval.tables import Table
from gencoord.prior.load import default_prior
from gencoord.protocol.delivery import CacheSetting
from gencoord.reasons import Reason
from gencoord.run.episode import (
    CACHED_CONDITIONS,
    FEEDBACK_CONDITIONS,
    FORWARD_CONDITIONS,
    Condition,
    records_of,
    run_episode,
)
from gencoord.run.faults import Fault
from gencoord.run.record import episode_record
from gencoord.tasks.cluster import Cluster, Split, draw_pool, paper_pool
from gencoord.tasks.instances import build_episode
from gencoord.tasks.suites import default_suites
from gencoord.worlds.choice import executor_for


@dataclass(frozen=True, slots=True)
class EpisodeJob:
    key: str
    cluster: int  # index into the config's pool
    role: int
    seed: int
    condition: Condition
    fault: Fault
    backend: BackendSpec  # as the config names it, {seed} and all
    surface: SurfaceName
    cache: CacheSetting = CacheSetting.OFF  # the delivery conditions only


def clusters_of(config: EpisodeExperimentConfig) -> tuple[Cluster, ...]:
    pool = (
        paper_pool(config.pool)
        if isinstance(config.pool, str)
        else draw_pool(config.pool.split, config.pool.size, config.pool.seed)
    )
    if config.clusters is None:
        return pool
    if config.clusters > len(pool):
        raise ConfigError(Reason.POOL_SIZE, f"clusters = {config.clusters} but the pool holds {len(pool)}")
    keep = {cluster.pair for cluster in pool[: config.clusters]}
    return tuple(cluster for cluster in pool if cluster.pair in keep)


def _caches(config: EpisodeExperimentConfig, condition: Condition) -> list[CacheSetting]:
    return list(config.caches) if condition in CACHED_CONDITIONS else [CacheSetting.OFF]


ExtraTables = Callable[[Sequence[Row], Sequence[Record], EpisodeExperimentConfig], list[Table]]
"""A kind's own tables: (the generic rows, the records, the config) → tables after the generic ones."""

ExtraFigures = Callable[[Sequence[Row], EpisodeExperimentConfig, Path], dict[str, bytes]]


@dataclass(frozen=True)
class EpisodeKind(ExperimentKind[EpisodeExperimentConfig, tuple[Cluster, ...], EpisodeJob]):
    """A pair-episode experiment: the shared pipeline, with this kind's own tables and figure titles."""

    name: str
    tables: ExtraTables | None = None
    figures: ExtraFigures | None = None
    headline: Callable[[Sequence[Row], EpisodeExperimentConfig], Table] = headline_table
    """The table the report opens with (default: success by row, its interval, the paper's figure)."""
    success_title: str | None = None  # the success figure's title (default: the experiment's name)
    wire_title: str = "Wire bytes per episode"
    config = EpisodeExperimentConfig
    backend_fields = ("backends",)

    def check(self, config: EpisodeExperimentConfig, origin: str) -> None:
        feedback = config.split is Split.GOAL_CAPABILITY
        allowed = FEEDBACK_CONDITIONS if feedback else FORWARD_CONDITIONS
        wrong = [c.value for c in config.conditions if c not in allowed]
        if wrong:
            suite = "Goal×Capability" if feedback else "forward"
            raise ConfigError(Reason.CONDITION_SUITE, f"{origin}: conditions {wrong} do not apply to a {suite} pool")
        if config.reference is not None and config.reference not in config.conditions:
            raise ConfigError(
                Reason.REFERENCE, f"{origin}: reference {config.reference.value!r} is not among the conditions"
            )
        unique_lists(origin, {"conditions": config.conditions, "seeds": config.seeds, "roles": config.roles})

    def prepare(self, config: EpisodeExperimentConfig) -> tuple[Cluster, ...]:
        return clusters_of(config)

    def expand(self, config: EpisodeExperimentConfig, prepared: tuple[Cluster, ...]) -> list[EpisodeJob]:
        jobs: list[EpisodeJob] = []
        for index, cluster in enumerate(prepared):
            for condition in config.conditions:
                for fault in config.faults:
                    for backend in config.backends:
                        for surface in config.surfaces:
                            for seed in config.seeds:
                                single = condition is Condition.SINGLE_STEP
                                if not backend_fits(backend.for_seed(seed), single, surface, records_of(condition)):
                                    continue
                                for role in config.roles:
                                    key = "|".join(
                                        (cluster.id, f"r{role}", f"s{seed}", condition, fault, backend, surface)
                                    )
                                    for setting in _caches(config, condition):
                                        # the cache joins the key only where it applies, so other keys never change
                                        keyed = f"{key}|cache={setting}" if condition in CACHED_CONDITIONS else key
                                        jobs.append(
                                            EpisodeJob(
                                                keyed, index, role, seed, condition, fault, backend, surface, setting
                                            )
                                        )
        used = {job.backend for job in jobs}
        idle = [name for name in config.backends if name not in used]
        if idle:
            raise ConfigError(
                Reason.BACKEND_FITS_NOTHING,
                f"{idle[0]} runs in none of this config's conditions and surfaces "
                "(a trained model writes only the surface and horizon it learned)",
            )
        return jobs

    def run_job(
        self, config: EpisodeExperimentConfig, prepared: tuple[Cluster, ...], job: EpisodeJob
    ) -> dict[str, Any]:
        prior, suites = default_prior(), default_suites()
        spec = build_episode(prepared[job.cluster], job.role, job.seed, prior, suites, job.surface, config.described)
        no_request = job.condition is Condition.NO_REQUEST
        backends = backend_set(job.backend.for_seed(job.seed))(spec, no_request, prior, suites)
        result = run_episode(
            spec,
            job.condition,
            fault=job.fault,
            backends=backends,
            executor=executor_for(config.world),
            prior=prior,
            suites=suites,
            cache=job.cache,
            receiver_answers=config.delivery_receiver == "backend",
        )
        return episode_record(result) | {"backend_set": job.backend, "world": config.world.kind}

    def report(
        self, config: EpisodeExperimentConfig, records: Sequence[Record], out: Path, facts: Mapping[str, Any]
    ) -> ReportParts:
        folder = out / "figures"
        rows = group_rows(records, config)
        tables = generic_tables(rows, config)
        if self.tables is not None:
            tables += self.tables(rows, records, config)
        folder.mkdir(parents=True, exist_ok=True)
        figures = {"success": success_figure(rows, config, folder / "success.png", self.success_title)}
        if self.figures is not None:
            figures |= self.figures(rows, config, folder)
        if any(row.records[0]["protocol"]["wire_bytes"] for row in rows):
            figures["wire"] = wire_figure(rows, config, folder / "wire.png", self.wire_title)
        return ReportParts(tables, figures, headline=self.headline(rows, config))

    def backends(self, config: EpisodeExperimentConfig) -> list[str]:
        return list(config.backends)

    def with_backends(self, config: EpisodeExperimentConfig, names: list[str]) -> EpisodeExperimentConfig:
        return validated_with(config, {"backends": names})


def _feedback_tables(rows: Sequence[Row], records: Sequence[Record], config: EpisodeExperimentConfig) -> list[Table]:
    fidelity = fidelity_table(records, config)
    return [block_table(rows, config), *([fidelity] if fidelity is not None else [])]


def _visibility_figures(rows: Sequence[Row], config: EpisodeExperimentConfig, folder: Path) -> dict[str, bytes]:
    return {"visibility": visibility_figure(rows, config, folder / "visibility.png")}


REQUEST_INTERVENTION = EpisodeKind(  # Table S12, Figure 4b
    "request_intervention", success_title="Delivered binding selects peer execution (cf. paper Fig. 4b)"
)
FEEDBACK_INTERVENTION = EpisodeKind(  # Tables S18, S19, Figure 4a
    "feedback_intervention",
    tables=_feedback_tables,
    success_title="Feedback content selects requester revision (cf. paper Fig. 4a)",
)
CONTROLLED_FAULTS = EpisodeKind(  # v2 Table S46
    "controlled_faults",
    tables=lambda rows, _, config: [stage_table(rows, config)],
    success_title="Original-task success under controlled faults",
)
REPRESENTATION = EpisodeKind(  # Table 2 / S10
    "representation",
    tables=lambda rows, _, config: [representation_table(rows, config)],
    success_title="Success by communication surface",
    wire_title="Peer payload by surface (cf. paper Table S10)",
)
HORIZON = EpisodeKind(  # Table S13: multi-step vs single-step commitments
    "horizon",
    tables=lambda rows, _, config: [horizon_table(rows, config)],
    success_title="Multi-step vs single-step commitments (cf. paper Table S13)",
)
VISIBILITY = EpisodeKind(  # Figure S5: topology motif × task-structure view × method
    "visibility", headline=visibility_table, figures=_visibility_figures
)
PRIVATE_STRUCTURE = EpisodeKind(  # v2 Tables S20–S23: PATH / SLICE / GOAL delivery and the cache
    "private_structure", tables=lambda _, records, config: private_tables(records, config)
)
CUSTOM = EpisodeKind(DEFAULT_KIND)
