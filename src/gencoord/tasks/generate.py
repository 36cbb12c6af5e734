"""Random team tasks drawn from the recipe graph: for property tests, benchmarks and stress runs.

A target is any craftable item; one random recipe tree below it gives the raw leaves,
whose units are split at random across the agents, plus distractor items no recipe of
the tree could use. A third of the worlds have a placed table, a third a table in one
agent's bag, and a third neither but oak logs to gather (the table is made, then placed).
Every generated task is feasible by construction; ``essential`` names the leaves nothing
can stand in for (every recipe on the way has one variant), so removing a unit of one
must make the task unreachable.

:func:`random_mindcraft_task` writes one in MINDcraft's crafting format, as MINDcraft's
files are made: the recipe tree's leaves split over the agents, a crafting table in agent
0's bag, and, some of the time, the leaves a survival world grows left for the team to
gather (its ``missing_items``).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from gencoord.prior.prior import Prior
from gencoord.tasks.team import TeamAgent, TeamGoal, TeamTask, TeamWorld

MAX_DEPTH = 6
GATHERED = "oak_log"
"""What a world without a table offers, a third of the time: the crafting table is then made and placed."""


@dataclass(frozen=True)
class GeneratedTask:
    task: TeamTask
    leaves: Counter[str]  # raw items the drawn tree consumes
    essential: frozenset[str]  # leaves no other variant can replace


def _tree(prior: Prior, rng: random.Random, target: str, count: int) -> tuple[Counter[str], set[str], set[str]] | None:
    """One random recipe tree: its leaves, every item its nodes' variants could use, the essential leaves."""
    leaves: Counter[str] = Counter()
    touched: set[str] = set()
    seen: set[str] = set()
    essential: set[str] = set()

    def expand(item: str, needed: int, depth: int, only_way: bool) -> bool:
        if item in seen or depth > MAX_DEPTH:
            return False
        seen.add(item)
        recipes = prior.game.recipes.get(item, ())
        if not recipes:
            leaves[item] += needed
            if only_way:
                essential.add(item)
            return True
        touched.update(i for recipe in recipes for i in recipe.ingredients)
        recipe = rng.choice(recipes)
        runs = recipe.crafts_for(needed)
        single = only_way and len(recipes) == 1
        return all(expand(ingredient, n * runs, depth + 1, single) for ingredient, n in recipe.ingredients.items())

    return (leaves, touched | seen, essential) if expand(target, count, 0, True) else None


def random_task(
    prior: Prior, rng: random.Random, agents: int, *, task_id: str = "generated", distractors: int = 2
) -> GeneratedTask | None:
    """One random feasible task for ``agents`` agents; None when the drawn tree is unusable (redraw)."""
    craftable = sorted(item for item, recipes in prior.game.recipes.items() if recipes)
    target, count = rng.choice(craftable), rng.randint(1, 3)
    if target == "crafting_table":  # every task has a table to craft at: the goal would hold before any action
        return None
    tree = _tree(prior, rng, target, count)
    if tree is None:
        return None
    leaves, touched, essential = tree
    if not leaves or target in leaves:
        return None
    names = [f"agent_{i}" for i in range(agents)]  # valid Minecraft player names too (3-16 characters)
    inventories: dict[str, Counter[str]] = {name: Counter() for name in names}
    for item, n in leaves.items():
        for _ in range(n):
            inventories[rng.choice(names)][item] += 1
    raw = sorted(item for item in prior.game.stack_sizes if item not in prior.game.recipes and item not in touched)
    for _ in range(distractors):
        inventories[rng.choice(names)][rng.choice(raw)] += rng.randint(1, 5)
    placed = rng.random() < 0.5
    if not placed:
        inventories[rng.choice(names)]["crafting_table"] += 1
    team = [TeamAgent(name=name, inventory=dict(inventories[name])) for name in names]
    task = TeamTask(
        id=task_id, agents=team, goal=TeamGoal(item=target, count=count), world=TeamWorld(crafting_table=placed)
    )
    return GeneratedTask(task, leaves, frozenset(essential))


def random_mindcraft_task(
    prior: Prior, rng: random.Random, agents: int, world: frozenset[str], gathered: float = 0.3
) -> dict[str, Any] | None:
    """One random feasible task as a MINDcraft crafting-file entry; None when the draw is unusable.

    With probability ``gathered``, every leaf that ``world`` offers to gather (MINDcraft's
    survival world: logs, sand, flowers) is taken out of the bags and named in
    ``missing_items``, so the team must dig it. Blocked commands are drawn as MINDcraft's files draw
    them: ``!getCraftingPlan`` for none, agent 0, or every agent.
    """
    generated = random_task(prior, rng, agents, distractors=rng.randint(0, 2))
    return None if generated is None else mindcraft_entry(generated, rng, world, gathered)


def mindcraft_entry(
    generated: GeneratedTask, rng: random.Random, world: frozenset[str], gathered: float = 0.3
) -> dict[str, Any]:
    """``generated`` as a MINDcraft crafting-file entry (see :func:`random_mindcraft_task`)."""
    task = generated.task
    agents = len(task.agents)
    missing: list[str] = []
    if rng.random() < gathered:
        missing = sorted(item for item in generated.leaves if item in world)
    bags = {
        str(index): {item: n for item, n in agent.inventory.items() if item not in missing}
        for index, agent in enumerate(task.agents)
    }
    if task.world.crafting_table:  # MINDcraft's world has no standing table: agent 0 holds one
        bags["0"]["crafting_table"] = bags["0"].get("crafting_table", 0) + 1
    plan = rng.choice(["full_plan", "partial_plan", "no_plan"])
    barred = {"full_plan": set(), "partial_plan": {0}, "no_plan": set(range(agents))}[plan]
    return {
        "goal": f"Collaborate with other agents to craft an {task.goal.item}",
        "conversation": f"Let's work together to craft an {task.goal.item}.",
        "initial_inventory": bags,
        "agent_count": agents,
        "target": task.goal.item,
        "number_of_target": task.goal.count,
        "type": "techtree",
        "timeout": 300,
        "blocked_actions": {str(i): ["!getCraftingPlan"] if i in barred else [] for i in range(agents)},
        "missing_items": missing,
        "requires_crafting_table": True,
    }
