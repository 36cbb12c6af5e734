"""Smelting as the planner reasons about it: furnace runs and the fuel they burn, as recipe variants.

The feasibility program and the planner work on recipe variants, so a furnace joins them
as two more kinds of variant over a *heat* pseudo-item per smelted input: a fuel variant
turns one fuel item into its burn time in heat units, and a smelt variant turns one input
and one item's smelt time of heat into one output. Integer runs of those say exactly how
many fuel items a batch needs (a furnace burns whole items: two planks smelt three raw
iron). Heat is kept per input, never pooled across inputs, because a furnace that goes
cold between two batches loses what was left of its fire. Heat is never an item: nobody
holds it, asks for it or is told of it.

The times and tables are the simulator's physics (vanilla's), which the Minecraft world
also sends its server, so a plan's fuel is what both worlds burn.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

from gencoord.prior.gamedata import GameData, Recipe
from gencoord.worlds.sim.physics import default_physics

_HEAT = "heat:"


def heat_of(source: str) -> str:
    """The pseudo-item a furnace smelting ``source`` burns."""
    return _HEAT + source


def is_heat(item: str) -> bool:
    return item.startswith(_HEAT)


def smelted_input(recipe: Recipe) -> str | None:
    """The item a smelt variant puts in the furnace (None: not a smelt variant)."""
    if not any(is_heat(item) for item in recipe.ingredients):
        return None
    return next(item for item in recipe.ingredients if not is_heat(item))


def readable(item: str) -> str:
    """An item as a person reads it in a diagnosis (heat as the fuel it stands for)."""
    return f"furnace fuel for {item.removeprefix(_HEAT)}" if is_heat(item) else item


FUELLED_HEAT = 1 << 20
"""Heat units one run of a fuelled station's own fire gives: more than any task burns."""


@cache
def _variants(fuelled: bool) -> dict[str, tuple[Recipe, ...]]:
    """Smelt and fuel variants; at a ``fuelled`` station (its fuel slot filled before the episode)
    heat is had from nothing instead: the plan has no fuel task at all."""
    physics = default_physics()
    unit = math.gcd(physics.smelt_ticks_per_item, *physics.fuel_ticks.values())
    per_item = physics.smelt_ticks_per_item // unit
    variants: dict[str, list[Recipe]] = {}
    for source, output in sorted(physics.smelting.items()):
        heat = heat_of(source)
        variants.setdefault(output, []).append(Recipe(1, 0, {source: 1, heat: per_item}))
        burnt = [Recipe(ticks // unit, 0, {fuel: 1}) for fuel, ticks in sorted(physics.fuel_ticks.items())]
        variants[heat] = [Recipe(FUELLED_HEAT, 0, {})] if fuelled else burnt
    return {item: tuple(found) for item, found in variants.items()}


_WITH_FURNACE: dict[tuple[int, bool], tuple[GameData, GameData]] = {}


def with_furnace(game: GameData, fuelled: bool = False) -> GameData:
    """``game`` with the furnace's smelt and fuel variants added after each item's crafting recipes."""
    known = _WITH_FURNACE.get((id(game), fuelled))
    if known is not None and known[0] is game:
        return known[1]
    recipes = dict(game.recipes)
    for item, variants in _variants(fuelled).items():
        recipes[item] = (*recipes.get(item, ()), *variants)
    extended = replace(game, recipes=recipes)
    _WITH_FURNACE[(id(game), fuelled)] = (game, extended)
    return extended
