"""The composition reference (v1 Table S15 / v2 S25): receiver methods on clusters of unseen binding cross-products."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gencoord.backends.families import BackendSpec
from gencoord.backends.registry import backend_fits, backend_set
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import unique_lists
from gencoord.eval.experiment import ExperimentKind, Record, ReportParts, validated_with
from gencoord.eval.kinds.composition.config import CompositionExperimentConfig
from gencoord.models.variant import Records
from gencoord.planning.composition import CompositionMethod
from gencoord.prior.load import default_prior
from gencoord.reasons import Reason
from gencoord.run.composition import composition_record, run_composition
from gencoord.tasks.cross_products import composition_case
from gencoord.tasks.suites import default_suites
from gencoord.worlds.choice import executor_for


@dataclass(frozen=True, slots=True)
class CompositionJob:
    key: str
    case: int
    role: int
    seed: int
    method: CompositionMethod
    backend: BackendSpec | None  # Direct Short DSL's backend, with this job's seed filled in


def _check_direct(direct: BackendSpec, seeds: Sequence[int], origin: str) -> None:
    """Direct Short DSL is a model trained on factor-form records, or a prompted API: nothing else writes them."""
    if not (direct.family.checkpoint or direct.family.calls_api):
        raise ConfigError(
            Reason.DIRECT_BACKEND,
            f"{origin}: direct is a trained model or an API (model:<checkpoint>, api:<url>#<model>), not {direct!r}",
        )
    for seed in seeds:
        name = direct.for_seed(seed)
        if not backend_fits(name, False, SurfaceName.DSL, Records.COMPOSITION):
            raise ConfigError(
                Reason.DIRECT_BACKEND,
                f"{origin}: {name} was not trained on composition records (gencoord train --records composition)",
            )


class CompositionKind(ExperimentKind[CompositionExperimentConfig, int, CompositionJob]):
    name = "composition"
    config = CompositionExperimentConfig
    backend_fields = ("direct",)

    def check(self, config: CompositionExperimentConfig, origin: str) -> None:
        unique_lists(origin, {"methods": config.methods, "seeds": config.seeds, "roles": config.roles})
        if config.direct is not None:
            _check_direct(config.direct, config.seeds, origin)

    def prepare(self, config: CompositionExperimentConfig) -> int:
        """How many cases run (each is built in its worker from its index, a pure function of it)."""
        return min(config.cases, config.clusters or config.cases)

    def expand(self, config: CompositionExperimentConfig, prepared: int) -> list[CompositionJob]:
        direct = CompositionMethod.DIRECT_SHORT_DSL
        return [
            CompositionJob(
                f"cross-product-{case:03d}|r{role}|s{seed}|{method}",
                case,
                role,
                seed,
                method,
                config.direct.for_seed(seed) if method is direct and config.direct is not None else None,
            )
            for case in range(prepared)
            for method in config.methods
            for seed in config.seeds
            for role in config.roles
        ]

    def run_job(self, config: CompositionExperimentConfig, prepared: int, job: CompositionJob) -> dict[str, Any]:
        prior, suites = default_prior(), default_suites()
        case = composition_case(job.case, job.role, job.seed, prior, suites)
        sender = None
        if job.backend is not None:
            sender = backend_set(job.backend)(case.spec, False, prior, suites)[case.spec.sender]
        composed = run_composition(case, job.method, executor_for(config.world), prior, suites, sender)
        return composition_record(composed) | {"world": config.world.kind, "backend_set": job.backend}

    def report(
        self, config: CompositionExperimentConfig, records: Sequence[Record], out: Path, facts: Mapping[str, Any]
    ) -> ReportParts:
        from gencoord.eval.kinds.composition.tables import (  # noqa: PLC0415 - scipy: reports only
            composition_headline,
            composition_table,
        )

        return ReportParts([composition_table(records, config)], headline=composition_headline(records, config))

    def backends(self, config: CompositionExperimentConfig) -> list[str]:
        return [] if config.direct is None else [config.direct]

    def with_backends(self, config: CompositionExperimentConfig, names: list[str]) -> CompositionExperimentConfig:
        """A composition run's --backend is its Direct Short DSL model (the other methods are rules)."""
        if len(names) != 1:
            raise ConfigError(
                Reason.BACKEND_NOT_SUPPORTED,
                f"{config.name}: a composition run takes one --backend, the Direct Short DSL model, not {len(names)}",
            )
        direct = CompositionMethod.DIRECT_SHORT_DSL
        methods = config.methods if direct in config.methods else [*config.methods, direct]
        return validated_with(config, {"methods": methods, "direct": names[0]}, Reason.INVALID_CONFIG)


COMPOSITION = CompositionKind()
