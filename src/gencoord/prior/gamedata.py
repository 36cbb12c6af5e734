"""Real Minecraft item names, crafting recipes and block mining data (from minecraft-data)."""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Iterable, Mapping
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


@dataclass(frozen=True, slots=True)
class Block:
    """What breaking a block takes and yields: vanilla hardness, tool material and drops."""

    hardness: float
    material: str
    harvest_tools: frozenset[str] | None  # None: any tool or the bare hand harvests it
    drops: tuple[str, ...]

    def harvestable_with(self, held: Iterable[str]) -> bool:
        return self.harvest_tools is None or not self.harvest_tools.isdisjoint(held)


@dataclass(frozen=True)
class GameData:
    game_version: str
    source: str
    stack_sizes: dict[str, int]
    recipes: dict[str, tuple[Recipe, ...]]
    blocks: dict[str, Block]
    tool_speeds: dict[str, dict[str, float]]
    tag_variants: tuple[tuple[str, Recipe], ...] = ()  # (result, variant) the tags restored beyond the raw data

    @classmethod
    def load(cls, path: Path) -> GameData:
        """The game data at ``path``; a ``tags.toml`` beside it restores collapsed ingredient tags."""
        raw = json.loads(path.read_text(encoding="utf-8"))
        recipes = {
            item: tuple(Recipe(r["count"], r["grid"], dict(r["ingredients"])) for r in variants if r["count"] >= 1)
            for item, variants in raw["recipes"].items()
        }  # a recipe that makes nothing (minecraft-data's map-extending entry for "air") is not one
        recipes = {item: variants for item, variants in recipes.items() if variants}
        raw_recipes = recipes
        tags = path.with_name("tags.toml")
        if tags.is_file():
            recipes = expand_dye_tags(recipes, tomllib.loads(tags.read_text(encoding="utf-8")))
        restored = tuple(
            (item, recipe)
            for item, variants in recipes.items()
            for recipe in variants[len(raw_recipes.get(item, ())) :]
        )  # expansion only appends, so what follows an item's raw variants is what the tags restored
        return cls(
            game_version=raw["game_version"],
            source=raw["source"],
            stack_sizes=dict(raw["items"]),
            recipes=recipes,
            blocks={
                name: Block(
                    b["hardness"],
                    b["material"],
                    None if b["harvest_tools"] is None else frozenset(b["harvest_tools"]),
                    tuple(b["drops"]),
                )
                for name, b in raw["blocks"].items()
            },
            tool_speeds=raw["tool_speeds"],
            tag_variants=restored,
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

    def tool_speed(self, block: Block, held: Iterable[str]) -> float:
        """The best mining speed among ``held`` tools for the block's material (1 = bare hand)."""
        speeds = [self.tool_speeds.get(part, {}) for part in block.material.split(";")]
        return max((table.get(tool, 1.0) for table in speeds for tool in held), default=1.0)

    @cached_property
    def tools(self) -> frozenset[str]:
        """Every item that mines some material faster than the bare hand."""
        return frozenset(tool for table in self.tool_speeds.values() for tool in table)

    @cached_property
    def _ticks(self) -> dict[tuple[str, tuple[str, ...]], int]:
        return {}

    def break_ticks(self, name: str, held: Iterable[str]) -> int:
        """Game ticks to break block ``name`` holding ``held`` items (vanilla's digging formula).

        Damage per tick is speed / hardness / 30 when the block is harvestable with a held
        tool, and / 100 otherwise (it then drops nothing); the block breaks when the
        accumulated damage reaches 1. Memoized per block and tool set: mining is hot.
        """
        tools = tuple(sorted(item for item in held if item in self.tools))
        key = (name, tools)
        ticks = self._ticks.get(key)
        if ticks is None:
            ticks = self._ticks[key] = self._compute_ticks(self.blocks[name], tools)
        return ticks

    def _compute_ticks(self, block: Block, tools: tuple[str, ...]) -> int:
        if block.hardness == 0:
            return 1
        divisor = 30 if block.harvestable_with(tools) else 100
        damage = self.tool_speed(block, tools) / block.hardness / divisor
        return 1 if damage >= 1 else math.ceil(1 / damage)

    def sources_of(self, item: str) -> tuple[str, ...]:
        """Blocks whose breaking drops ``item``, e.g. stone and cobblestone for cobblestone."""
        return self._sources.get(item, ())

    @cached_property
    def _sources(self) -> dict[str, tuple[str, ...]]:
        found: dict[str, list[str]] = {}
        for name, block in self.blocks.items():
            for drop in block.drops:
                found.setdefault(drop, []).append(name)
        return {item: tuple(names) for item, names in found.items()}

    def is_item(self, name: str) -> bool:
        return name in self.stack_sizes

    def recipe(self, item: str, material: str | None) -> Recipe | None:
        """The recipe that makes ``item`` from ``material``, preferring single-material ones.

        With no material, the first recipe listed for the item. None when the game has
        no such recipe, so callers can say "no recipe" rather than "missing ingredient".
        """
        return self._recipe_index.get((item, material))


def expand_dye_tags(
    recipes: Mapping[str, tuple[Recipe, ...]], tags: Mapping[str, object]
) -> dict[str, tuple[Recipe, ...]]:
    """Dyeing recipes that take one other colour's item (``black_wool``) take any other colour's.

    ``tags`` is ``tags.toml``: the colours and the dyed families. A recipe is a dyeing
    recipe when its result is a member of a family and it consumes exactly one other
    member plus the result's dye; other recipes that use a member for itself (a bed made
    of black wool) are left as they are.
    """
    colors = [str(color) for color in tags["colors"]]  # type: ignore[attr-defined]
    families = [str(family) for family in tags["dyed_families"]]  # type: ignore[attr-defined]
    expanded = dict(recipes)
    for family in families:
        members = {f"{color}_{family}" for color in colors}
        for color in colors:
            result, dye = f"{color}_{family}", f"{color}_dye"
            variants = list(expanded.get(result, ()))
            dyeing = [
                recipe
                for recipe in variants
                if len(recipe.ingredients) == 2
                and recipe.ingredients.get(dye) == 1
                and any(item in members and item != result and n == 1 for item, n in recipe.ingredients.items())
            ]
            if not dyeing:
                continue
            present = {item for recipe in dyeing for item in recipe.ingredients if item in members}
            template = dyeing[0]
            variants += [
                Recipe(template.count, template.grid, {member: 1, dye: 1})
                for member in sorted(members - present - {result})
            ]
            expanded[result] = tuple(variants)
    return expanded
