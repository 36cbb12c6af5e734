"""The embedded world's durations and capacities, loaded from ``data/physics.toml``."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, PositiveFloat, PositiveInt

from gencoord._config import load_model, package_text, read_text
from gencoord.errors import ConfigError
from gencoord.reasons import Reason

TICKS_PER_S = 20


class Physics(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    walk_blocks_per_s: PositiveFloat
    reach_blocks: PositiveFloat
    inventory_slots: PositiveInt
    container_slots: PositiveInt
    toss_ticks: PositiveInt
    pickup_delay_ticks: PositiveInt
    open_window_ticks: PositiveInt
    click_ticks: PositiveInt
    place_ticks: PositiveInt
    smelt_ticks_per_item: PositiveInt
    smoke_ticks_per_item: PositiveInt
    detour_factor: PositiveFloat
    hit_ticks: PositiveInt
    chase_ticks: PositiveInt
    break_ticks: dict[str, PositiveInt]  # scaffolding blocks: how long one takes to break
    fuel_ticks: dict[str, PositiveInt]
    smelting: dict[str, str]
    smoking: dict[str, str]


def load_physics(path: Path) -> Physics:
    return load_model(Physics, read_text(path, ConfigError), str(path), ConfigError, Reason.INVALID_PHYSICS)


@cache
def default_physics() -> Physics:
    return load_model(
        Physics,
        package_text("gencoord.worlds.sim", "physics.toml"),
        "physics.toml",
        ConfigError,
        Reason.INVALID_PHYSICS,
    )
