"""Random cooking tasks in MINDcraft's format: for property tests, benchmarks and stress runs.

A task draws dishes from the foods the cooking world can make and gives the team, split at
random over its agents, what the field does not grow (MINDcraft's generator does the same:
gold for a golden carrot, a bowl for a stew, an egg for a pie). Recipes are withheld from
agents at random (``blocked_access_to_recipe``), and a two-agent task may be a hells kitchen:
one dish per agent, each knowing only the other's recipe.
"""

from __future__ import annotations

import random
from typing import Any

BROUGHT: dict[str, dict[str, int]] = {
    "cooked_chicken": {},
    "cooked_mutton": {},
    "cooked_porkchop": {},
    "cooked_rabbit": {},
    "cooked_beef": {},
    "baked_potato": {},
    "bread": {},
    "golden_carrot": {"gold_ingot": 1},
    "mushroom_stew": {"bowl": 1},
    "beetroot_soup": {"bowl": 1},
    "suspicious_stew": {"bowl": 1, "dandelion": 1},
    "pumpkin_pie": {"egg": 1},
    "cookie": {"cocoa_beans": 1},
}
"""What a dish needs that the cooking field does not grow: it comes in the agents' bags."""

FOODS = tuple(sorted(BROUGHT))


def _split(rng: random.Random, items: dict[str, int], agents: int) -> list[dict[str, int]]:
    """Every unit of ``items`` dealt to a random agent (gold by the ingot, so no one may hold it all)."""
    bags: list[dict[str, int]] = [{} for _ in range(agents)]
    for item, count in items.items():
        for _ in range(count):
            bag = bags[rng.randrange(agents)]
            bag[item] = bag.get(item, 0) + 1
    return bags


def random_cooking_task(seed: int, agents: int = 2, dishes: int = 2, hells_kitchen: bool = False) -> dict[str, Any]:
    """One task (MINDcraft's JSON shape, keyed by its id) with ``dishes`` dishes over ``agents`` agents."""
    rng = random.Random(seed)
    chosen = rng.sample(FOODS, dishes if not hells_kitchen else 2)
    brought: dict[str, int] = {}
    for dish in chosen:
        for item, count in BROUGHT[dish].items():
            # gold comes as more ingots than one nugget craft needs, spread thin
            amount = count * (rng.randint(2, 4) if item == "gold_ingot" else 1)
            brought[item] = brought.get(item, 0) + amount
    suffix = "hells_kitchen" if hells_kitchen else f"{agents}_agents"
    task_id = f"generated_cooking_{seed}_{'_'.join(chosen)}_{suffix}"
    raw: dict[str, Any] = {"agent_count": 2 if hells_kitchen else agents, "type": "cooking", "timeout": 500}
    if hells_kitchen:
        raw["target"] = chosen
        bags = [dict(BROUGHT[chosen[0]]), dict(BROUGHT[chosen[1]])]  # each brings what its own dish needs
        raw["initial_inventory"] = {str(i): bag for i, bag in enumerate(bags)}
        raw["blocked_access_to_recipe"] = []
    else:
        raw["target"] = {dish: 1 for dish in chosen}
        raw["initial_inventory"] = {str(i): bag for i, bag in enumerate(_split(rng, brought, agents))}
        raw["blocked_access_to_recipe"] = [str(i) for i in range(agents) if rng.random() < 0.4]
    return {task_id: raw}
