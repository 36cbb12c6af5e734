"""The item ledger of a skill step: what it takes from and puts into its actor's inventory.

The resolver counts a commitment's items with it, the episode pipeline advances an agent's
view with it (single-step horizon), and training rows use the same view, so all three agree.
"""

from __future__ import annotations

from collections import Counter

from gencoord.dsl.ast import Task
from gencoord.dsl.cells import placed_counts
from gencoord.prior.prior import Prior


def consumption(task: Task, prior: Prior) -> dict[str, int]:
    """Items the task takes out of its actor's inventory."""
    spec = prior.skills[task.skill]
    quantity = task.get("q")
    if spec.consumes is None or not isinstance(quantity, int):
        return {}
    if spec.consumes == "recipe":
        material = task.get("input")
        recipe = prior.game.recipe(str(task.get("item")), None if material is None else str(material))
        return recipe.needs(quantity) if recipe is not None else {}
    if (
        spec.consumes in prior.keys and prior.keys[spec.consumes].type == "cells"
    ):  # a build task uses one block per cell it names
        return placed_counts(task.get("cells"), task.get("share")) or {}
    return {str(task.get(spec.consumes)): quantity}


def production(task: Task, prior: Prior) -> dict[str, int]:
    """Items the task puts into its actor's inventory."""
    spec = prior.skills[task.skill]
    quantity = task.get("q")
    if spec.produces is None or not isinstance(quantity, int):
        return {}
    return {str(task.get(spec.produces)): quantity}


def inventory_after(inventory: dict[str, int], step: Task, prior: Prior) -> dict[str, int]:
    """``inventory`` once ``step`` is carried out (items at zero are dropped)."""
    counts = Counter(inventory)
    counts.update(production(step, prior))
    counts.subtract(consumption(step, prior))
    return {item: n for item, n in sorted(counts.items()) if n > 0}
