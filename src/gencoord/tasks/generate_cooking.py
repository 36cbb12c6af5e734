"""Cooking tasks as MINDcraft's generators make them, over every axis they vary.

Derived from MINDcraft's ``tasks/cooking_tasks/hells_kitchen_tasks.py`` and
``make_collaboration_required_cooking_task.py``: the same sixteen dishes (``COOKING_ITEMS``),
each with the items the field does not grow (``required_chest_items``), in MINDcraft's JSON
shape. The axes, each drawn independently:

- **variant**: ``plain`` (a ``target`` map one agent must hold all at once), ``block_recipe``
  (``blocked_access_to_recipe`` lists agents whose goal text has no recipe) or
  ``hells_kitchen`` (two agents, a list target: agent *i* makes ``target[i]`` and knows only
  the other's recipe);
- **team size**: 2–5 agents (hells kitchen: 2);
- **dishes**: 1–3 (hells kitchen: 2);
- **bags**, how the required items reach the agents: ``even`` (every item's count shared out
  evenly, remainders to the first agents, as the shipped files do: 8 gold ingots are 4 + 4 or
  2 + 2 + 2 + 2, so the dish needs a hand-over), ``kinds`` (each item kind to one agent in
  turn, as ``reconfigure_tasks`` deals them) or ``none`` (no bags, as the train file's hells
  kitchens ship: a dish needing gold, eggs or cocoa cannot be made and must be refused).

MINDcraft writes ``gold_ingots`` in its table; the game's item is ``gold_ingot``, and the
shipped files give that, so this does too.
"""

from __future__ import annotations

import random
from typing import Any

DISHES: dict[str, dict[str, int]] = {
    "cooked_mutton": {"coal": 8},
    "cooked_beef": {"coal": 8},
    "cooked_porkchop": {"coal": 8},
    "cooked_chicken": {"coal": 8},
    "cooked_rabbit": {"coal": 8},
    "beetroot_soup": {"bowl": 1},
    "mushroom_stew": {"bowl": 1},
    "rabbit_stew": {"bowl": 1},
    "suspicious_stew": {"bowl": 1, "dandelion": 1},
    "baked_potato": {"coal": 8},
    "bread": {},
    "cake": {"milk_bucket": 3, "egg": 1},
    "cookie": {"cocoa_beans": 1},
    "pumpkin_pie": {"egg": 1},
    "golden_apple": {"gold_ingot": 8, "apple": 1},
    "golden_carrot": {"gold_ingot": 8},
}
"""MINDcraft's dishes and the items each needs from a chest or a bag (``required_chest_items``)."""

UNGROWN: dict[str, dict[str, int]] = {
    "cake": {"milk_bucket": 3, "egg": 1},
    "cookie": {"cocoa_beans": 1},
    "pumpkin_pie": {"egg": 1},
    "golden_apple": {"gold_ingot": 8, "apple": 1},
    "golden_carrot": {"gold_ingot": 1},
}
"""What a dish's recipe really uses that nothing in the cooking world yields (the field, its
animals, the trees beyond it): a task whose bags hold less cannot be done. Bowls, dandelions
and coal are not here: trees grow, dandelions bloom and the stations are fuelled."""

HELLS_KITCHEN_TEST_DISHES = frozenset(
    {"cooked_mutton", "baked_potato", "cake", "golden_carrot", "mushroom_stew", "bread"}
)
"""The dishes MINDcraft keeps for its held-out hells-kitchen tasks; its train tasks use the rest."""

VARIANTS = ("plain", "block_recipe", "hells_kitchen")
BAGS = ("even", "kinds", "none")


def _even(items: dict[str, int], agents: int) -> list[dict[str, int]]:
    """Every item's count shared out evenly, the remainder one each to the first agents."""
    bags: list[dict[str, int]] = [{} for _ in range(agents)]
    for item, count in items.items():
        for index in range(agents):
            share = count // agents + (index < count % agents)
            if share:
                bags[index][item] = share
    return bags


def _kinds(items: dict[str, int], agents: int) -> list[dict[str, int]]:
    """Each item kind, whole, to one agent in turn."""
    bags: list[dict[str, int]] = [{} for _ in range(agents)]
    for number, (item, count) in enumerate(items.items()):
        bags[number % agents][item] = count
    return bags


def cooking_task(
    seed: int, agents: int = 2, dishes: int = 2, variant: str = "plain", bags: str = "even"
) -> dict[str, Any]:
    """One task in MINDcraft's JSON shape, keyed by its id (an id ending ``hells_kitchen`` for that variant)."""
    if variant not in VARIANTS or bags not in BAGS:
        raise ValueError(f"variant is one of {', '.join(VARIANTS)}; bags one of {', '.join(BAGS)}")
    rng = random.Random(seed)
    hells = variant == "hells_kitchen"
    agents, dishes = (2, 2) if hells else (agents, dishes)
    chosen = rng.sample(sorted(DISHES), dishes)
    needed: dict[str, int] = {}
    for dish in chosen:
        for item, count in DISHES[dish].items():
            needed[item] = needed.get(item, 0) + count
    dealt = {"even": _even, "kinds": _kinds}[bags](needed, agents) if bags != "none" else []
    raw: dict[str, Any] = {"agent_count": agents, "type": "cooking", "timeout": 300 * dishes}
    raw["target"] = chosen if hells else dict.fromkeys(chosen, 1)
    raw["recipes"] = {dish: [f"make {dish}"] for dish in chosen}  # texts for LLM agents; gencoord reads the game's
    if dealt:
        raw["initial_inventory"] = {str(i): bag for i, bag in enumerate(dealt)}
    blocked = variant == "block_recipe"
    raw["blocked_access_to_recipe"] = [str(i) for i in range(agents) if blocked and rng.random() < 0.5] or (
        ["0"] if blocked else []
    )
    name = "_".join(chosen)
    task_id = f"generated_cooking_{seed}_{name}_{'hells_kitchen' if hells else f'{agents}_agents_{variant}_{bags}'}"
    return {task_id: raw}


def can_be_cooked(raw: dict[str, Any]) -> bool:
    """Whether the pooled bags hold what the dishes need that the world does not yield (an oracle, not the planner)."""
    target = raw["target"]
    dishes = (
        list(target) if isinstance(target, list) else [dish for dish, count in target.items() for _ in range(count)]
    )
    needed: dict[str, int] = {}
    for dish in dishes:
        for item, count in UNGROWN.get(dish, {}).items():
            needed[item] = needed.get(item, 0) + count
    pooled: dict[str, int] = {}
    for bag in (raw.get("initial_inventory") or {}).values():
        for item, count in bag.items():
            pooled[item] = pooled.get(item, 0) + count
    return all(pooled.get(item, 0) >= count for item, count in needed.items())


def cooking_tasks(count: int, seed: int = 0) -> dict[str, Any]:
    """``count`` tasks spanning every variant, team size, dish count and way of dealing bags."""
    tasks: dict[str, Any] = {}
    for number in range(count):
        variant, rest = VARIANTS[number % len(VARIANTS)], number // len(VARIANTS)
        agents, rest = 2 + rest % 4, rest // 4
        bags, rest = BAGS[rest % len(BAGS)], rest // len(BAGS)
        dishes = 1 + rest % 3
        tasks.update(cooking_task(seed * 100_003 + number, agents, dishes, variant, bags))
    return tasks
