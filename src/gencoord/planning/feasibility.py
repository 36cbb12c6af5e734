"""Is a team task reachable from the team's pooled holdings? Said before any action, with a reason.

The check is the centralized view of the task (every agent's inventory pooled): if the
pooled holdings, what agents that may gather can gather, and the real recipes cannot
make the goal, no coordination can, and the task is refused with what is missing ("no
recipe path to 1 cake from the pooled inventories: needs 3 milk_bucket, team has 2").

It is an integer program over the recipe variants reachable from the goal (scipy's
HiGHS): integer runs per variant, an item balance per item, a crafting table when any
3×3 variant runs and none is placed in the world. Exact where a greedy recipe search is
not (a chest made from the only planks a boat can use). Missing items are slack
variables priced so that the solver names a raw missing item before conjuring anything
craftable, which is what a person would fix.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from gencoord.planning.furnace import is_heat, readable, smelted_input, with_furnace
from gencoord.prior.gamedata import GameData, Recipe
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.tasks.team import TeamTask

GATHER_SKILL = "resource.obtain"
CRAFT_SKILL = "craft.item"
TABLE = "crafting_table"
MAX_DEPTH = 12
"""Recipe levels explored below the goal."""
_GREEDY_BUDGET = 400
"""Expansions the fast search may make before the exact solver takes over."""
_RAW_SLACK, _CRAFTED_SLACK, _RUN = 1_000.0, 1_000_000.0, 1.0
_BIG = 100_000


Runs = tuple[tuple[str, Recipe, int], ...]
"""A recipe plan: (result, the variant used, how many times it runs)."""


@dataclass(frozen=True, slots=True)
class Shortfall:
    """What the team lacks: ``needed`` of ``item`` where it holds ``held``."""

    item: str
    needed: int
    held: int
    via: tuple[str, ...]  # the recipe chain from the goal down to ``item``'s parent (empty: the goal itself)


@dataclass(frozen=True, slots=True)
class Feasibility:
    feasible: bool
    code: Reason | None  # UNREACHABLE_GOAL, NO_STATION
    reason: str
    shortfall: Shortfall | None = None
    also_missing: tuple[Shortfall, ...] = ()
    crafts: int = 0  # recipe runs in the cheapest plan (0 when the team already holds the goal)
    runs: Runs = ()  # the cheapest plan: (result, variant, times it runs)
    places_table: bool = False  # the plan puts a crafting table down (none stands in the world)


def _closure(game: GameData, roots: tuple[str, ...], crafting: bool) -> tuple[list[str], list[tuple[str, Recipe]]]:
    """Items and recipe variants reachable from ``roots`` within MAX_DEPTH levels."""
    items: dict[str, int] = {}
    variants: list[tuple[str, Recipe]] = []
    queue = deque((root, 0) for root in roots)
    while queue:
        item, depth = queue.popleft()
        if item in items:
            continue
        items[item] = depth
        if not crafting or depth >= MAX_DEPTH:
            continue
        for _, recipe in addressable(game, item):
            variants.append((item, recipe))
            queue.extend((ingredient, depth + 1) for ingredient in recipe.ingredients if ingredient not in items)
    return list(items), variants


def closure_items(game: GameData, goal: str, table_needed: bool) -> list[str]:
    """Every item the goal's recipes can use, nearest the goal first (what a lead asks peers about)."""
    items, _ = _closure(game, (goal, TABLE) if table_needed else (goal,), True)
    return [item for item in items if not is_heat(item)]


def planning_game(task: TeamTask, prior: Prior) -> GameData:
    """The recipes a plan for ``task`` may use: the crafting recipes, and smelting where a furnace stands."""
    return with_furnace(prior.game, bool(task.world.fuel)) if task.world.furnace else prior.game


def addressable(game: GameData, item: str) -> list[tuple[str | None, Recipe]]:
    """The variants of ``item`` a task can name, each with the ``input`` that selects it.

    A task picks a variant by one input material (``craft.item(input=...)``); a variant
    no material selects (another variant wins every one of its materials) cannot be
    asked for, so plans never use it.
    """
    chosen: list[tuple[str | None, Recipe]] = []
    for recipe in game.recipes.get(item, ()):
        material = next((m for m in sorted(recipe.ingredients) if game.recipe(item, m) is recipe), None)
        if material is not None:
            chosen.append((material, recipe))
        elif game.recipe(item, None) is recipe:
            chosen.append((None, recipe))
    return chosen


def selecting_input(game: GameData, item: str, recipe: Recipe) -> str | None:
    """The ``input`` a craft names to run ``recipe`` for ``item`` (None: the variant is chosen without one)."""
    return next((material for material, variant in addressable(game, item) if variant is recipe), None)


def _chain(goal: str, target: str, used: list[tuple[str, Recipe]]) -> tuple[str, ...]:
    """The path of used recipes from the goal down to ``target``'s parent."""
    parents: dict[str, str] = {}
    queue = deque([goal])
    while queue:
        item = queue.popleft()
        for result, recipe in used:
            if result == item:
                for ingredient in recipe.ingredients:
                    if ingredient not in parents and ingredient != goal:
                        parents[ingredient] = item
                        queue.append(ingredient)
    if target == goal or target not in parents:
        return ()
    path = [parents[target]]
    while path[-1] != goal:
        path.append(parents[path[-1]])
    return tuple(reversed(path))


def _greedy(
    game: GameData, goal: str, count: int, held: dict[str, int], gatherable: set[str], table_needed: bool
) -> tuple[Runs, bool] | None:
    """A plan by depth-first search over variants (held items first), or None to leave it to the solver.

    Most tasks have a plan that uses what is held along the first workable variant; this
    finds it in well under a millisecond. It is sound (every plan it returns balances),
    not complete: a failure, or a search past :data:`_GREEDY_BUDGET` expansions, falls
    back to the exact integer program, which also names what is missing.
    """
    pool: Counter[str] = Counter(held)
    runs: Counter[tuple[str, int]] = Counter()
    budget = [_GREEDY_BUDGET]

    def need(item: str, quantity: int, depth: int, path: frozenset[str]) -> bool:
        take = min(pool[item], quantity)
        pool[item] -= take
        quantity -= take
        if quantity == 0 or item in gatherable:
            return True
        budget[0] -= 1
        if depth >= MAX_DEPTH or item in path or budget[0] < 0:
            return False
        variants = addressable(game, item)
        variants.sort(key=lambda pair: -sum(min(pool[i], n) / n for i, n in pair[1].ingredients.items()))
        for _, recipe in variants:
            times = recipe.crafts_for(quantity)
            saved_pool, saved_runs = pool.copy(), runs.copy()
            if all(need(i, n * times, depth + 1, path | {item}) for i, n in recipe.ingredients.items()):
                runs[(item, game.recipes[item].index(recipe))] += times
                pool[item] += recipe.count * times - quantity
                return True
            pool.clear()
            pool.update(saved_pool)
            runs.clear()
            runs.update(saved_runs)
        return False

    if not need(goal, count, 0, frozenset()):
        return None
    placed = table_needed and any(game.recipes[item][i].grid == 3 for item, i in runs)
    if placed and not need(TABLE, 1, 0, frozenset()):
        return None
    return tuple((item, game.recipes[item][i], times) for (item, i), times in runs.items()), placed


def _solve(
    game: GameData,
    items: list[str],
    variants: list[tuple[str, Recipe]],
    held: dict[str, int],
    gatherable: set[str],
    goal: str,
    count: int,
    table_needed: bool,
) -> np.ndarray:
    """The cheapest integer plan: runs per variant, then slack per item, then the table indicator."""
    index = {item: i for i, item in enumerate(items)}
    n_items, n_variants = len(items), len(variants)
    # variables: runs per variant | slack per item | table indicator
    n = n_variants + n_items + 1
    balance = np.zeros((n_items, n))
    for column, (result, recipe) in enumerate(variants):
        balance[index[result], column] += recipe.count
        for ingredient, amount in recipe.ingredients.items():
            balance[index[ingredient], column] -= amount
    balance[np.arange(n_items), n_variants + np.arange(n_items)] = 1.0  # slack makes up what is missing
    demand = np.array([-held.get(item, 0) for item in items], dtype=float)
    demand[index[goal]] += count
    upper = np.full(n_items, np.inf)
    for item in gatherable & set(index):  # gathered without limit: never short
        demand[index[item]] = -np.inf
    constraints = []
    if table_needed:
        balance[index[TABLE], -1] = -1.0  # placing the table uses one up
        table_rows = [column for column, (_, recipe) in enumerate(variants) if recipe.grid == 3]
        if table_rows:
            link = np.zeros((len(table_rows), n))
            link[np.arange(len(table_rows)), table_rows] = 1.0
            link[:, -1] = -_BIG
            constraints.append(LinearConstraint(link, -np.inf, 0.0))  # a 3×3 run needs the table placed
    constraints.insert(0, LinearConstraint(balance, demand, upper))
    cost = np.concatenate(
        [
            np.full(n_variants, _RUN),
            # a craftable item's shortfall costs more the nearer the goal it is (items come nearest
            # first): what is missing is said as deep as it lies (logs, not the planks)
            [
                _CRAFTED_SLACK * (1 + 1 / (1 + i)) if game.recipes.get(item) else _RAW_SLACK
                for i, item in enumerate(items)
            ],
            [_RUN],
        ]
    )
    top = np.concatenate([np.full(n_variants, _BIG), np.full(n_items, _BIG), [1.0 if table_needed else 0.0]])
    solved = milp(cost, constraints=constraints, integrality=np.ones(n), bounds=Bounds(np.zeros(n), top))
    assert solved.success and solved.x is not None, solved.message  # slack keeps it feasible and bounded
    plan: np.ndarray = np.round(solved.x).astype(int)
    return plan


def _in_cooks_words(
    shortfall: Shortfall, used: list[tuple[str, Recipe]], runs: np.ndarray, held: dict[str, int], game: GameData
) -> Shortfall:
    """``shortfall`` named as a person fetches it: gold ingots, not the raw-gold block they unpack from.

    Below the goal, the chain of recipes the solver used may end in steps that only pack (nine
    nuggets to an ingot and back) or smelt what is mined with a pickaxe where the team holds
    none. Those are no one's job in the task, so the missing item is named where that tail
    starts: the smelted material (the ingot) when the tail smelts, else the tail's first item.
    """
    chain = (*shortfall.via, shortfall.item)
    steps = [_step(chain[j - 1], chain[j], used) for j in range(1, len(chain))]
    start = len(steps)
    while start > 0 and (recipe := steps[start - 1]) is not None and _fetched(game, chain[start - 1], recipe, held):
        start -= 1
    if start in (0, len(steps)):
        return shortfall
    smelts = [j for j in range(start, len(steps)) if (recipe := steps[j]) is not None and smelted_input(recipe)]
    at = smelts[0] if smelts else start
    item = chain[at]
    consumed = sum(int(n) * recipe.ingredients.get(item, 0) for (_, recipe), n in zip(used, runs, strict=True))
    return Shortfall(item, max(consumed, held.get(item, 0) + 1), held.get(item, 0), chain[:at])


def _as_fetched(
    missing: list[Shortfall],
    goal: str,
    used: list[tuple[str, Recipe]],
    runs: np.ndarray,
    held: dict[str, int],
    game: GameData,
) -> list[Shortfall]:
    """Every shortfall in a cook's words, once each; one that lies below another's item is moot (no fuel is
    missing for ore nobody has: the ingots are)."""
    named: dict[str, Shortfall] = {}
    for short in missing:
        said = short if short.item in (goal, TABLE) else _in_cooks_words(short, used, runs, held, game)
        if said.item not in named or said.needed > named[said.item].needed:
            named[said.item] = said
    above = set(named) - {goal}
    return [short for short in named.values() if not above & set(short.via)]


def _step(result: str, ingredient: str, used: list[tuple[str, Recipe]]) -> Recipe | None:
    return next((recipe for made, recipe in used if made == result and ingredient in recipe.ingredients), None)


def _fetched(game: GameData, item: str, recipe: Recipe, held: dict[str, int]) -> bool:
    """Whether making ``item`` by ``recipe`` is packing, or smelting mined ore the team holds none of."""
    source = smelted_input(recipe)
    if source is not None:
        return not held.get(source) and _mineral(game, source)
    if len(recipe.ingredients) != 1:
        return False
    (only,) = recipe.ingredients
    return any(set(back.ingredients) == {item} for back in game.recipes.get(only, ()))


def _mineral(game: GameData, item: str) -> bool:
    """Whether ``item`` is mined: a block only a tool harvests, or dropped only by such blocks."""
    if item in game.blocks:
        return game.blocks[item].harvest_tools is not None
    sources = game.sources_of(item)
    return bool(sources) and all(game.blocks[block].harvest_tools is not None for block in sources)


def _gatherable(task: TeamTask) -> set[str]:
    return set(task.world.resources) if any(GATHER_SKILL not in agent.blocked for agent in task.agents) else set()


def quick_runs(task: TeamTask, prior: Prior) -> Feasibility | None:
    """A feasible plan by the fast search alone, or None: a None proves nothing (only :func:`diagnose` does).

    For the planner's optional drafts (one agent alone, gathering), where a miss costs a
    candidate and the exact solver's hundreds of milliseconds would cost every task.
    """
    if all(CRAFT_SKILL in agent.blocked for agent in task.agents):
        return None
    game = planning_game(task, prior)
    found = _greedy(
        game, task.goal.item, task.goal.count, task.holdings(), _gatherable(task), not task.world.crafting_table
    )
    if found is None:
        return None
    runs, places_table = found
    return Feasibility(True, None, "", crafts=sum(t for _, _, t in runs), runs=runs, places_table=places_table)


def diagnose(task: TeamTask, prior: Prior) -> Feasibility:
    """Whether the goal is reachable from what the team holds, gathers and crafts (blocked skills respected)."""
    quick = quick_runs(task, prior)
    if quick is not None:
        return quick
    game = planning_game(task, prior)
    crafters = [agent for agent in task.agents if CRAFT_SKILL not in agent.blocked]
    gatherable = _gatherable(task)
    goal, count = task.goal.item, task.goal.count
    table_needed = not task.world.crafting_table
    items, variants = _closure(game, (goal, TABLE) if table_needed else (goal,), bool(crafters))
    held = task.holdings()
    x = _solve(game, items, variants, held, gatherable, goal, count, table_needed)
    n_variants = len(variants)
    used = [variants[column] for column in range(n_variants) if x[column] > 0]
    crafts = int(x[:n_variants].sum())
    missing = [
        Shortfall(item, held.get(item, 0) + int(x[n_variants + i]), held.get(item, 0), _chain(goal, item, used))
        for i, item in enumerate(items)
        if x[n_variants + i] > 0
    ]
    if not missing:
        runs = tuple((result, recipe, int(x[column])) for column, (result, recipe) in enumerate(variants) if x[column])
        return Feasibility(True, None, "", crafts=crafts, runs=runs, places_table=bool(table_needed and x[-1] > 0))
    missing = _as_fetched(missing, goal, used, x[:n_variants][x[:n_variants] > 0], held, game)
    missing.sort(key=lambda short: (short.item == goal, short.item == TABLE, -len(short.via), short.item))
    first = missing[0]
    if first.item == TABLE and table_needed:
        return Feasibility(
            False,
            Reason.NO_STATION,
            f"a 3×3 recipe on the way to {goal} needs a crafting table: none is placed in the world, none is "
            f"held, and none can be made from what is left",
            first,
            tuple(missing[1:]),
        )
    has = f"team has {first.held}" if first.held else "team has none"
    chain = " → ".join(readable(item) for item in (*first.via, first.item)) if first.via else ""
    needs = f"needs {first.needed} {readable(first.item)}, {has}"
    reason = f"no recipe path to {count} {goal} from the pooled inventories: {needs}"
    reason += f" (via {chain})" if chain else ""
    if len(missing) > 1:
        reason += "; also short: " + ", ".join(f"{s.needed - s.held} {readable(s.item)}" for s in missing[1:])
    if table_needed and x[-1] > 0 and not held.get(TABLE):
        reason += " — counting the crafting table a 3×3 recipe needs, which must be made: none is placed or held"
    if not crafters and game.recipes.get(goal):
        reason += " (no agent may craft: every agent blocks craft.item)"
    return Feasibility(False, Reason.UNREACHABLE_GOAL, reason, first, tuple(missing[1:]), crafts)
