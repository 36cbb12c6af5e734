"""What a task consumes, and roughly how many actions it takes (for budgets and surplus)."""

from __future__ import annotations

from gencoord.dsl.ast import Task
from gencoord.prior.gamedata import GameData

_CONSUMING = ("resource.deliver", "build.component", "transform.supply_input", "transform.supply_fuel")


def node_needs(task: Task, game: GameData) -> dict[str, int]:
    """Items the actor must hold for ``task`` to run (a craft's ingredients, a delivery's items)."""
    item, quantity = task.get("item"), task.get("q")
    if not isinstance(item, str) or not isinstance(quantity, int):
        return {}
    if task.skill == "craft.item":
        material = task.get("input")
        recipe = game.recipe(item, None if material is None else str(material))
        return {} if recipe is None else recipe.needs(quantity)
    if task.skill in _CONSUMING:
        return {item: quantity}
    return {}


def action_estimate(task: Task, game: GameData) -> int:
    """Executor actions of ``task`` when nothing goes wrong: a walk plus its work."""
    quantity = task.get("q")
    count = quantity if isinstance(quantity, int) else 1
    if task.skill in ("resource.obtain", "build.component"):
        return 1 + count
    return 2
