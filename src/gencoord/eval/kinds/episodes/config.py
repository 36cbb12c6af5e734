"""The episodes experiment's config: what its TOML file holds, validated when it loads."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator, model_validator

from gencoord.backends.families import PairBackendName, parse_backend
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import NAME_PATTERN, BootstrapSpec, ExecutionSpec
from gencoord.eval.experiment import DEFAULT_KIND, experiment_kind
from gencoord.protocol.delivery import CacheSetting
from gencoord.run.episode import (
    CACHED_CONDITIONS,
    DELIVERY_KINDS,
    Condition,
    check_dialogue,
)
from gencoord.run.faults import Fault
from gencoord.tasks.cluster import PAPER_POOLS, Split
from gencoord.worlds.choice import WorldChoice


class PoolSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    split: Split
    size: PositiveInt
    seed: int = 0


class EpisodeExperimentConfig(BaseModel):
    """Pair episodes of the paper's suites; ``kind`` picks the paper tables the report adds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=NAME_PATTERN)]
    kind: str = DEFAULT_KIND
    description: str = ""
    pool: str | PoolSpec
    clusters: PositiveInt | None = None  # keep only the first N clusters (whole pairs): reduced runs
    conditions: list[Condition] = Field(min_length=1)
    faults: list[Fault] = [Fault.CLEAN]
    caches: list[CacheSetting] = Field(default=[CacheSetting.OFF], min_length=1)  # for the delivery conditions
    # who takes a delivery on: the shared delivery processing (the paper's), or the receiver's backend
    delivery_receiver: Literal["rule", "backend"] = "rule"
    backends: list[PairBackendName] = [parse_backend("rule")]
    surfaces: list[SurfaceName] = [SurfaceName.DSL]
    seeds: list[int] = Field(default=[0], min_length=1)
    roles: list[Annotated[int, Field(ge=0, le=1)]] = Field(default=[0, 1], min_length=1)
    reference: Condition | None = None  # paired differences are reference − condition
    described: Literal["C1", "C2", "C3"] | None = None  # senders get a described private fact, not its code
    output: str = "runs"
    workers: Annotated[int, Field(ge=0)] = 0  # 0: one per CPU core
    bootstrap: BootstrapSpec = BootstrapSpec()
    world: WorldChoice = WorldChoice()  # where the actions run: the simulator, or real Minecraft
    execution: ExecutionSpec = ExecutionSpec()

    @field_validator("kind")
    @classmethod
    def _an_episode_kind(cls, kind: str) -> str:
        if experiment_kind(kind).config is not cls:  # one of the pair-episode kinds, which share this config
            raise ValueError(f"{kind!r} is not a kind of pair-episode experiment")
        return kind

    @field_validator("pool")
    @classmethod
    def _known_pool(cls, pool: str | PoolSpec) -> str | PoolSpec:
        if isinstance(pool, str) and pool not in PAPER_POOLS:
            raise ValueError(f"unknown pool {pool!r}; known: {', '.join(sorted(PAPER_POOLS))}")
        return pool

    @model_validator(mode="after")
    def _caches_apply(self) -> EpisodeExperimentConfig:
        if self.caches != [CacheSetting.OFF] and not set(self.conditions) & set(CACHED_CONDITIONS):
            cached = ", ".join(CACHED_CONDITIONS)
            raise ValueError(f"caches apply only to the delivery conditions ({cached}), and none is listed")
        return self

    @model_validator(mode="after")
    def _receiver_applies(self) -> EpisodeExperimentConfig:
        if self.delivery_receiver != "rule" and not set(self.conditions) & set(DELIVERY_KINDS):
            delivered = ", ".join(DELIVERY_KINDS)
            raise ValueError(f"delivery_receiver applies only to the delivery conditions ({delivered}), none is listed")
        return self

    @model_validator(mode="after")
    def _dialogue_fits(self) -> EpisodeExperimentConfig:
        if SurfaceName.FREEFORM in self.surfaces:
            for condition in self.conditions:
                for fault in self.faults:
                    try:
                        check_dialogue(condition, fault)
                    except ConfigError as error:
                        raise ValueError(error.message) from None
        return self

    @property
    def split(self) -> Split:
        return PAPER_POOLS[self.pool][0] if isinstance(self.pool, str) else self.pool.split

    def summary(self) -> str:
        pool = self.pool if isinstance(self.pool, str) else f"{self.pool.split.value} × {self.pool.size}"
        clusters = f" (first {self.clusters} clusters)" if self.clusters else ""
        return (
            f"pool {pool}{clusters}; conditions {', '.join(self.conditions)}; faults {', '.join(self.faults)}; "
            + (f"caches {', '.join(self.caches)}; " if self.caches != [CacheSetting.OFF] else "")
            + (f"delivery receiver {self.delivery_receiver}; " if self.delivery_receiver != "rule" else "")
            + f"backends {', '.join(backend.label for backend in self.backends)}; surfaces {', '.join(self.surfaces)}; "
            f"seeds {', '.join(map(str, self.seeds))}; roles {', '.join(map(str, self.roles))}"
        )
