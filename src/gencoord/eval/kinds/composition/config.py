"""The composition experiment's config: what its TOML file holds, validated when it loads."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from gencoord.backends.families import BackendName
from gencoord.eval.config import NAME_PATTERN, BootstrapSpec, ExecutionSpec
from gencoord.planning.composition import CompositionMethod
from gencoord.tasks.cross_products import CROSS_PRODUCT_CLUSTERS
from gencoord.worlds.choice import WorldChoice


class CompositionExperimentConfig(BaseModel):
    """The composition reference: receiver methods on clusters of unseen binding cross-products."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=NAME_PATTERN)]
    kind: Literal["composition"] = "composition"
    description: str = ""
    cases: PositiveInt = CROSS_PRODUCT_CLUSTERS  # clusters, cycling over the unseen combinations
    methods: list[CompositionMethod] = Field(
        default=[CompositionMethod.COMPLETE_CASE_TABLE, CompositionMethod.EXPLICIT_FACTOR_COMPOSER], min_length=1
    )
    direct: BackendName | None = None  # Direct Short DSL's backend: model:<checkpoint>, {seed} for one per seed
    seeds: list[int] = Field(default=[0], min_length=1)
    roles: list[Annotated[int, Field(ge=0, le=1)]] = Field(default=[0, 1], min_length=1)
    clusters: PositiveInt | None = None  # keep only the first N cases: reduced runs
    world: WorldChoice = WorldChoice()
    output: str = "runs"
    workers: Annotated[int, Field(ge=0)] = 0
    bootstrap: BootstrapSpec = BootstrapSpec()
    execution: ExecutionSpec = ExecutionSpec()

    @model_validator(mode="after")
    def _direct_has_a_backend(self) -> CompositionExperimentConfig:
        wanted = CompositionMethod.DIRECT_SHORT_DSL in self.methods
        if wanted and self.direct is None:
            raise ValueError("method direct_short_dsl needs `direct`, the backend set that writes its records")
        if self.direct is not None and not wanted:
            raise ValueError("`direct` is given but direct_short_dsl is not among the methods")
        return self

    def summary(self) -> str:
        count = min(self.cases, self.clusters or self.cases)
        methods = ", ".join(self.methods)
        direct = f" (direct: {self.direct.label})" if self.direct else ""
        return f"{count} cross-product clusters; methods {methods}{direct}; seeds {self.seeds}; roles {self.roles}"
