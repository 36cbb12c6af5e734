"""Vanilla loot of ripe crops and animals (``data/loot.toml``): rolled by worlds, counted by planners.

A crop or an animal drops a random amount, so the two sides read the table differently. A
world rolls each drop from the episode's seeded generator, so an episode can be replayed. A
planner counts only what is certain (every entry's minimum), and a skill goes on harvesting
or hunting until it holds what its task asked for, so a plan never depends on luck.
"""

from __future__ import annotations

import random
from functools import cache

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt

from gencoord._config import load_model, package_text
from gencoord.errors import ConfigError
from gencoord.reasons import Reason


class Drop(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    item: str
    min: NonNegativeInt
    max: NonNegativeInt
    chance: float = Field(1.0, gt=0.0, le=1.0)

    @property
    def certain(self) -> int:
        return self.min if self.chance == 1.0 else 0


class BlockLoot(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    state: str | None = None  # the block state that is ripe (``age=7``), as a setblock writes it
    drops: tuple[Drop, ...]


class MobLoot(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    health: PositiveInt
    drops: tuple[Drop, ...]


class LootTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    blocks: dict[str, BlockLoot]
    mobs: dict[str, MobLoot]

    def block_yields(self, block: str, item: str) -> bool:
        loot = self.blocks.get(block)
        return loot is not None and any(drop.item == item for drop in loot.drops)

    def mob_for(self, item: str) -> str | None:
        """The animal whose killing is the surest way to ``item`` (most certain, then most at best)."""
        dropping = [
            (drop.certain, drop.max, name) for name, mob in self.mobs.items() for drop in mob.drops if drop.item == item
        ]
        return max(dropping)[2] if dropping else None

    def crop_for(self, item: str) -> str | None:
        """The crop block whose harvest yields ``item`` (None: no crop does)."""
        return next((name for name in sorted(self.blocks) if self.block_yields(name, item)), None)


def certain(drops: tuple[Drop, ...], item: str) -> int:
    """How many ``item`` one roll of ``drops`` yields at the least."""
    return sum(drop.certain for drop in drops if drop.item == item)


def roll(drops: tuple[Drop, ...], rng: random.Random) -> dict[str, int]:
    """One roll of ``drops``: every entry that drops, with its count drawn uniformly."""
    rolled: dict[str, int] = {}
    for drop in drops:
        if drop.chance < 1.0 and rng.random() >= drop.chance:
            continue
        count = rng.randint(drop.min, drop.max)
        if count:
            rolled[drop.item] = rolled.get(drop.item, 0) + count
    return rolled


@cache
def default_loot() -> LootTable:
    return load_model(
        LootTable, package_text("gencoord.prior", "loot.toml"), "loot.toml", ConfigError, Reason.INVALID_LOOT
    )
