"""The team planner's drafts: who gathers, crafts, smelts and hands over what, for one crafter and its splits.

:func:`draft_paths` writes the role paths of one draft (a crafter, and which peers make which
sub-assemblies from their own bags); :mod:`gencoord.planning.planner` drafts many and keeps the
fastest by dry run.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter

from gencoord.dsl.ast import Task
from gencoord.planning.feasibility import (
    CRAFT_SKILL,
    GATHER_SKILL,
    TABLE,
    Feasibility,
    Runs,
    diagnose,
    planning_game,
    selecting_input,
)
from gencoord.planning.furnace import heat_of, is_heat, smelted_input
from gencoord.prior.gamedata import GameData, Recipe
from gencoord.prior.prior import Prior
from gencoord.tasks.team import ANY, TeamTask
from gencoord.tasks.world import FURNACE, STATION, source_ref

DELIVER_SKILL = "resource.deliver"
PLACE_SKILL = "station.place"
SMELT_SKILLS = ("transform.supply_input", "transform.supply_fuel", "transform.collect_output")


@dataclass
class Draft:
    """Paths under construction for one choice of crafter."""

    paths: dict[str, list[Task]] = field(default_factory=lambda: defaultdict(list))
    handoffs: int = 0

    def longest(self) -> int:
        return max((len(tasks) for tasks in self.paths.values()), default=0)


def _task(skill: str, prior: Prior, **args: str | int) -> Task:
    return Task(skill, prior.vocab.canonical_args(skill, args))


def _net_needs(task: TeamTask, runs: Runs, places_table: bool) -> dict[str, int]:
    """Items the recipe plan takes from holdings or gathering (what it consumes beyond what it makes)."""
    balance: dict[str, int] = defaultdict(int)
    for result, recipe, times in runs:
        balance[result] -= recipe.count * times
        for ingredient, amount in recipe.ingredients.items():
            balance[ingredient] += amount * times
    balance[task.goal.item] += task.goal.count
    if places_table:
        balance[TABLE] += 1
    return {item: amount for item, amount in balance.items() if amount > 0}


def _smelt(result: str, source: str, times: int, runs: Runs, prior: Prior) -> list[Task]:
    """Load ``times`` of ``source`` and the fuel the plan burns for it, then take the output."""
    fuels = [
        (next(iter(recipe.ingredients)), n)
        for made, recipe, n in runs
        if made == heat_of(source) and recipe.ingredients
    ]
    return [
        _task(SMELT_SKILLS[0], prior, q=times, item=source, station=FURNACE),
        *(_task(SMELT_SKILLS[1], prior, q=n, item=fuel, station=FURNACE) for fuel, n in sorted(fuels)),
        _task(SMELT_SKILLS[2], prior, q=times, item=result, station=FURNACE),
    ]


def craft_runs_order(runs: Runs, table_made: bool = False) -> list[int]:
    """Indices of recipe runs with every ingredient crafted before the recipes that use it.

    When the plan crafts the crafting table it places, every 3×3 run also waits for that craft.
    """
    made = {result for result, _, _ in runs}
    table = next((index for index, (result, _, _) in enumerate(runs) if result == TABLE), None)
    graph = {
        index: {other for other, (result, _, _) in enumerate(runs) if result in recipe.ingredients and result in made}
        | ({table} if table_made and table is not None and recipe.grid > 2 and index != table else set())
        for index, (_, recipe, _) in enumerate(runs)
    }
    while True:
        try:
            return list(TopologicalSorter(graph).static_order())
        except CycleError as cycle:
            # runs that make each other's inputs (a block from ingots and ingots from the block): one dependency
            # of the cycle is dropped, and the ledger check of the resolved commitment judges the order
            first, second = cycle.args[1][:2]
            graph[second].discard(first)
            graph[first].discard(second)


def _craft_order(runs: Runs, table_made: bool) -> list[tuple[str, Recipe, int]]:
    return [runs[index] for index in craft_runs_order(runs, table_made)]


def _craft(result: str, recipe: Recipe, times: int, game: GameData, prior: Prior) -> Task:
    args: dict[str, str | int] = {"q": recipe.count * times, "item": result}
    material = selecting_input(game, result, recipe)
    if material is not None:
        args["input"] = material
    if recipe.grid > 2:
        args["station"] = STATION
    return _task(CRAFT_SKILL, prior, **args)


def draft_paths(
    task: TeamTask, crafter: str, feasibility: Feasibility, splits: dict[int, str], prior: Prior, spread: bool = False
) -> Draft | str:
    """The paths when ``crafter`` makes the goal and each run of ``splits`` (index → peer) is that
    peer's sub-assembly from its own bag; why not, when the team's skills cannot supply it that way.

    With ``spread``, what must be gathered is split evenly over every agent that may gather
    (each digs its share at once and hands it over), rather than gathered by one.
    """
    blocked = {agent.name: set(agent.blocked) for agent in task.agents}
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    game = planning_game(task, prior)
    draft = Draft()
    made = _sub_assemblies(task, feasibility, splits, holdings, blocked, game, prior)
    if isinstance(made, str):
        return made
    runs = tuple(run for index, run in enumerate(feasibility.runs) if index not in splits)
    needs = _net_needs(task, runs, feasibility.places_table)
    placer = None
    if feasibility.places_table and any(holdings[a].get(TABLE, 0) for a in holdings):
        candidates = [crafter, *sorted(a for a in holdings if a != crafter)]
        placer = next((a for a in candidates if holdings[a].get(TABLE, 0) and PLACE_SKILL not in blocked[a]), None)
        if placer is None:
            return "no agent holding a crafting table may place it (station.place)"
        holdings[placer][TABLE] -= 1
        needs = {**needs, TABLE: needs[TABLE] - 1}
    supplied = _supply(task, crafter, needs, holdings, blocked, made, prior, spread)
    if isinstance(supplied, str):
        return supplied
    obtained, deliveries, draft.handoffs = supplied
    place = _task(PLACE_SKILL, prior, q=1, item=TABLE, station=STATION)
    for agent in sorted(set(obtained) | set(deliveries) | set(made)):
        if agent != crafter:
            before = [place] if agent == placer and any(t.get("station") for t in made[agent]) else []
            draft.paths[agent] += obtained[agent] + before + made[agent] + deliveries[agent]
    if placer is not None and placer != crafter and place not in draft.paths[placer]:
        draft.paths[placer].append(place)
    own_path = draft.paths[crafter]
    own_path += obtained[crafter]
    placed = placer is not None and placer != crafter
    own_path += _making(runs, game, prior, feasibility.places_table and not placed, placer is None)
    holder = task.goal.holder
    if holder not in (ANY, crafter):
        key = "to" if holder in holdings else "dst"
        own_path.append(_task(DELIVER_SKILL, prior, q=task.goal.count, item=task.goal.item, **{key: holder}))
        draft.handoffs += key == "to"
    barred = next(((a, t.skill) for a, tasks in draft.paths.items() for t in tasks if t.skill in blocked[a]), None)
    if barred is not None:
        return f"{barred[0]} would need {barred[1]}, which it may not use"
    return draft


def _sub_assemblies(
    task: TeamTask,
    feasibility: Feasibility,
    splits: dict[int, str],
    holdings: dict[str, dict[str, int]],
    blocked: dict[str, set[str]],
    game: GameData,
    prior: Prior,
) -> dict[str, list[Task]] | str:
    """Each peer's own making of the runs ``splits`` gives it, from its bag (gathering what it lacks and may
    gather), taken out of ``holdings``; why not, when a maker lacks an ingredient it cannot gather."""
    made: dict[str, list[Task]] = defaultdict(list)
    for index in (index for index in craft_runs_order(feasibility.runs) if index in splits):
        maker = splits[index]
        result, recipe, times = feasibility.runs[index]
        for ingredient, amount in recipe.ingredients.items():
            short = amount * times - holdings[maker].get(ingredient, 0)
            if short > 0:
                if ingredient not in task.world.resources or GATHER_SKILL in blocked[maker]:
                    return f"{maker} lacks {short} {ingredient} for its {result}"
                made[maker].append(_task(GATHER_SKILL, prior, q=short, item=ingredient, loc=source_ref(ingredient)))
                holdings[maker][ingredient] = amount * times
            holdings[maker][ingredient] -= amount * times
        holdings[maker][result] = holdings[maker].get(result, 0) + recipe.count * times
        made[maker].append(_craft(result, recipe, times, game, prior))
    return made


Supply = tuple[dict[str, list[Task]], dict[str, list[Task]], int]
"""What each agent gathers, what each hands the crafter, and how many hand-overs that makes."""


def _supply(
    task: TeamTask,
    crafter: str,
    needs: dict[str, int],
    holdings: dict[str, dict[str, int]],
    blocked: dict[str, set[str]],
    made: dict[str, list[Task]],
    prior: Prior,
    spread: bool,
) -> Supply | str:
    """How the crafter comes to hold ``needs``: its own bag first, then teammates' gifts (the fullest bag
    first), then gathering (by the least busy gatherer, or by every one with ``spread``); why not, when an
    item is held only by agents that may not hand it over, or nobody may gather it."""
    gatherers = [
        agent
        for agent in (crafter, *sorted(a for a in holdings if a != crafter))
        if GATHER_SKILL not in blocked[agent] and (agent == crafter or DELIVER_SKILL not in blocked[agent])
    ]
    obtained: dict[str, list[Task]] = defaultdict(list)
    deliveries: dict[str, list[Task]] = defaultdict(list)
    handoffs = 0
    load = {agent: len(made[agent]) for agent in gatherers}  # a sub-assembly maker is already busy
    for item, amount in sorted(needs.items()):
        if amount <= 0:
            continue
        own = min(holdings[crafter].get(item, 0), amount)
        holdings[crafter][item] = holdings[crafter].get(item, 0) - own
        left = amount - own
        givers = sorted(
            (a for a in holdings if a != crafter and DELIVER_SKILL not in blocked[a]),
            key=lambda a: (-holdings[a].get(item, 0), a),
        )
        for giver in givers:
            share = min(holdings[giver].get(item, 0), left)
            if share:
                holdings[giver][item] -= share
                deliveries[giver].append(_task(DELIVER_SKILL, prior, q=share, item=item, to=crafter))
                handoffs += 1
                left -= share
        if left and item in task.world.resources:
            if not gatherers:
                return f"nobody may gather {item} and hand it over"
            for gatherer, share in _shares(left, gatherers if spread else gatherers[:1], load).items():
                obtained[gatherer].append(_task(GATHER_SKILL, prior, q=share, item=item, loc=source_ref(item)))
                if gatherer != crafter:
                    deliveries[gatherer].append(_task(DELIVER_SKILL, prior, q=share, item=item, to=crafter))
                    handoffs += 1
            left = 0
        if left:
            return f"{left} more {item} is held only by agents that may not hand it over (resource.deliver)"
    return obtained, deliveries, handoffs


def _making(runs: Runs, game: GameData, prior: Prior, place: bool, table_made: bool) -> list[Task]:
    """The crafter's own making, in crafting order: each smelt, the table put down before the first 3×3 craft
    (``place``), each craft; ``table_made``: the table it places is one the plan crafts."""
    steps: list[Task] = []
    for result, recipe, times in _craft_order(runs, place and table_made):
        if is_heat(result):
            continue  # its fuel goes in with the smelt that burns it
        source = smelted_input(recipe)
        if source is not None:
            steps += _smelt(result, source, times, runs, prior)
            continue
        if recipe.grid > 2 and place:
            steps.append(_task(PLACE_SKILL, prior, q=1, item=TABLE, station=STATION))
            place = False
        steps.append(_craft(result, recipe, times, game, prior))
    return steps


@dataclass(frozen=True, slots=True)
class Making:
    """What the cheapest recipe plan takes, whoever does it: the items it consumes beyond what it makes
    (``needs``: what bags hand over or the world gives) and the steps one agent making everything runs."""

    needs: dict[str, int]
    steps: tuple[Task, ...]


def making(task: TeamTask, prior: Prior) -> Making | None:
    """The plan's needs and its steps for one maker: what no bag of the team holds gathered first, then each
    smelt, the table put down and each craft in crafting order; None when the goal is out of the view's reach.

    Who makes, who hands over what and to whom is left open: this is the plan as a list of jobs
    (what MINDcraft's crafting plan gives an agent), not an assignment.
    """
    feasibility = diagnose(task, prior)
    if not feasibility.feasible:
        return None
    held: dict[str, int] = defaultdict(int)
    for agent in task.agents:
        for item, count in agent.inventory.items():
            held[item] += count
    needs = _net_needs(task, feasibility.runs, feasibility.places_table)
    gathered = [
        _task(GATHER_SKILL, prior, q=amount - held[item], item=item, loc=source_ref(item))
        for item, amount in sorted(needs.items())
        if item in task.world.resources and amount > held[item]
    ]
    game = planning_game(task, prior)
    steps = _making(feasibility.runs, game, prior, feasibility.places_table, not held[TABLE])
    return Making(needs, tuple(gathered + steps))


def _shares(amount: int, crew: list[str], load: dict[str, int]) -> dict[str, int]:
    """``amount`` units dealt one by one to whoever of ``crew`` has least to gather so far.

    ``load`` counts each agent's units across every item of the draft, so two logs of
    different kinds go to two agents rather than both to the first; ties go to the earlier
    (the crafter first).
    """
    shares: dict[str, int] = {}
    for _ in range(amount):
        gatherer = min(crew, key=lambda agent: (load[agent], crew.index(agent)))
        load[gatherer] += 1
        shares[gatherer] = shares.get(gatherer, 0) + 1
    return shares
