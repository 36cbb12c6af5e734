"""The embedded world's durations and capacities, loaded from ``data/physics.toml``."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, PositiveFloat, PositiveInt, ValidationError

from gencoord.errors import ConfigError

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
    detour_factor: PositiveFloat
    fuel_ticks: dict[str, PositiveInt]
    smelting: dict[str, str]


def load_physics(path: Path) -> Physics:
    try:
        return Physics.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError("INVALID_PHYSICS", f"{path}: {exc}") from None


@cache
def default_physics() -> Physics:
    text = (resources.files("gencoord.worlds.sim") / "data" / "physics.toml").read_text(encoding="utf-8")
    return Physics.model_validate(tomllib.loads(text))
