"""Real Minecraft item names and crafting recipes (extracted from minecraft-data)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Recipe:
    """One crafting recipe: ``count`` of the result from ``ingredients`` in a ``grid``×``grid`` grid."""

    count: int
    grid: int
    ingredients: dict[str, int]

    def crafts_for(self, quantity: int) -> int:
        """How many times the recipe runs to make at least ``quantity`` results."""
        return math.ceil(quantity / self.count)

    def needs(self, quantity: int) -> dict[str, int]:
        """Ingredients consumed to make at least ``quantity`` results."""
        runs = self.crafts_for(quantity)
        return {item: n * runs for item, n in self.ingredients.items()}


@dataclass(frozen=True)
class GameData:
    game_version: str
    source: str
    stack_sizes: dict[str, int]
    recipes: dict[str, tuple[Recipe, ...]]

    @classmethod
    def load(cls, path: Path) -> GameData:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            game_version=raw["game_version"],
            source=raw["source"],
            stack_sizes=dict(raw["items"]),
            recipes={
                item: tuple(Recipe(r["count"], r["grid"], dict(r["ingredients"])) for r in variants)
                for item, variants in raw["recipes"].items()
            },
        )

    @cached_property
    def _recipe_index(self) -> dict[tuple[str, str | None], Recipe]:
        index: dict[tuple[str, str | None], Recipe] = {}
        for item, variants in self.recipes.items():
            index[(item, None)] = variants[0]
            for recipe in sorted(variants, key=lambda r: len(r.ingredients), reverse=True):
                for material in recipe.ingredients:
                    index[(item, material)] = recipe  # the fewest-ingredient recipe wins
        return index

    def is_item(self, name: str) -> bool:
        return name in self.stack_sizes

    def recipe(self, item: str, material: str | None) -> Recipe | None:
        """The recipe that makes ``item`` from ``material``, preferring single-material ones.

        With no material, the first recipe listed for the item. None when the game has
        no such recipe, so callers can say "no recipe" rather than "missing ingredient".
        """
        return self._recipe_index.get((item, material))
