"""MINDcraft's worlds and commands as gencoord reads them (``data/mindcraft.toml``), read once."""

from __future__ import annotations

from functools import cache
from typing import Any

from gencoord._config import package_text, parse_toml
from gencoord.errors import ConfigError


@cache
def mindcraft_table() -> dict[str, Any]:
    """``data/mindcraft.toml``: how MINDcraft's commands and worlds map onto gencoord."""
    return parse_toml(package_text("gencoord.tasks", "mindcraft.toml"), "mindcraft.toml", ConfigError)


def cooking_world() -> dict[str, Any]:
    """MINDcraft's cooking world as a team world (``data/mindcraft.toml``): the default of a cooking task."""
    table = mindcraft_table()["cooking_world"]
    return {"crafting_table": True, "furnace": True, "smoker": True, **table}


def mindcraft_world() -> frozenset[str]:
    """What a MINDcraft crafting world offers to gather (``data/mindcraft.toml``)."""
    return frozenset(mindcraft_table()["world"]["resources"])
