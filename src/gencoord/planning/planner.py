"""The team planner: a goal and what a team holds become role paths and hand-overs.

It works on a :class:`TeamTask` as one agent knows it (its own inventory, what peers
answered), never on the world. The recipe plan is the feasibility check's integer
program (cheapest recipe runs over real variants, tags included); on top of it the
planner chooses who crafts. Every agent that may craft is tried as the crafter; the
choice minimizes hand-overs, then the tasks on the longest path (a stand-in for
simulated time: every task is at least one walk and one action). Supplies come from
the crafter's own holdings first, then from the peers holding the most of each item
(fewest givers), then from gathering. A crafting table is placed by whoever holds one
(no hand-over needed: once placed, every agent uses it), or crafted and placed by the
crafter. Blocked skills are respected everywhere.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from graphlib import TopologicalSorter

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task
from gencoord.errors import ResolutionError
from gencoord.planning.feasibility import (
    CRAFT_SKILL,
    GATHER_SKILL,
    TABLE,
    Feasibility,
    addressable,
    diagnose,
    planning_game,
)
from gencoord.planning.furnace import heat_of, is_heat, smelted_input
from gencoord.prior.gamedata import GameData, Recipe
from gencoord.prior.prior import Prior
from gencoord.tasks.team import ANY, TeamTask
from gencoord.tasks.world import FURNACE, STATION, source_ref

DELIVER_SKILL = "resource.deliver"
PLACE_SKILL = "station.place"
SMELT_SKILLS = ("transform.supply_input", "transform.supply_fuel", "transform.collect_output")


@dataclass(frozen=True, slots=True)
class TeamPlan:
    """A planner's answer: the n-party proposal of ``lead``, or why there is none."""

    feasibility: Feasibility
    proposal: Proposal | None = None
    crafter: str | None = None
    handoffs: int = 0


@dataclass
class _Draft:
    """Paths under construction for one choice of crafter."""

    paths: dict[str, list[Task]] = field(default_factory=lambda: defaultdict(list))
    handoffs: int = 0

    def longest(self) -> int:
        return max((len(tasks) for tasks in self.paths.values()), default=0)


def _task(skill: str, prior: Prior, **args: str | int) -> Task:
    return Task(skill, prior.vocab.canonical_args(skill, args))


def _net_needs(task: TeamTask, runs: tuple[tuple[str, Recipe, int], ...], places_table: bool) -> dict[str, int]:
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


def _material(game: GameData, item: str, recipe: Recipe) -> str | None:
    return next(material for material, variant in addressable(game, item) if variant is recipe)


def _smelt(result: str, source: str, times: int, runs: tuple[tuple[str, Recipe, int], ...], prior: Prior) -> list[Task]:
    """Load ``times`` of ``source`` and the fuel the plan burns for it, then take the output."""
    fuels = [(next(iter(recipe.ingredients)), n) for made, recipe, n in runs if made == heat_of(source)]
    return [
        _task(SMELT_SKILLS[0], prior, q=times, item=source, station=FURNACE),
        *(_task(SMELT_SKILLS[1], prior, q=n, item=fuel, station=FURNACE) for fuel, n in sorted(fuels)),
        _task(SMELT_SKILLS[2], prior, q=times, item=result, station=FURNACE),
    ]


def _craft_order(runs: tuple[tuple[str, Recipe, int], ...], table_made: bool) -> list[tuple[str, Recipe, int]]:
    """Recipe runs with every ingredient crafted before the recipes that use it.

    When the plan crafts the crafting table it places, every 3×3 run also waits for that craft.
    """
    made = {result for result, _, _ in runs}
    table = next((index for index, (result, _, _) in enumerate(runs) if result == TABLE), None)
    graph = {
        index: {other for other, (result, _, _) in enumerate(runs) if result in recipe.ingredients and result in made}
        | ({table} if table_made and table is not None and recipe.grid > 2 and index != table else set())
        for index, (_, recipe, _) in enumerate(runs)
    }
    return [runs[index] for index in TopologicalSorter(graph).static_order()]


def _draft(task: TeamTask, crafter: str, needs: dict[str, int], feasibility: Feasibility, prior: Prior) -> _Draft | str:
    """The paths when ``crafter`` crafts; why not, when the team's skills cannot supply it that way."""
    blocked = {agent.name: set(agent.blocked) for agent in task.agents}
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    draft = _Draft()
    table_from_bag = feasibility.places_table and any(holdings[a].get(TABLE, 0) for a in holdings)
    placer = None
    if feasibility.places_table and table_from_bag:
        candidates = [crafter, *sorted(a for a in holdings if a != crafter)]
        placer = next((a for a in candidates if holdings[a].get(TABLE, 0) and PLACE_SKILL not in blocked[a]), None)
        if placer is None:
            return "no agent holding a crafting table may place it (station.place)"
        holdings[placer][TABLE] -= 1
        needs = {**needs, TABLE: needs[TABLE] - 1}
    gatherers = [
        agent
        for agent in (crafter, *sorted(a for a in holdings if a != crafter))
        if GATHER_SKILL not in blocked[agent] and (agent == crafter or DELIVER_SKILL not in blocked[agent])
    ]
    obtained: dict[str, list[Task]] = defaultdict(list)
    deliveries: dict[str, list[Task]] = defaultdict(list)
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
            if left == 0:
                break
            share = min(holdings[giver].get(item, 0), left)
            if share:
                holdings[giver][item] -= share
                deliveries[giver].append(_task(DELIVER_SKILL, prior, q=share, item=item, to=crafter))
                draft.handoffs += 1
                left -= share
        if left and item in task.world.resources:
            gatherer = next(iter(gatherers), None)
            if gatherer is None:
                return f"nobody may gather {item} and hand it over"
            obtained[gatherer].append(_task(GATHER_SKILL, prior, q=left, item=item, loc=source_ref(item)))
            if gatherer != crafter:
                deliveries[gatherer].append(_task(DELIVER_SKILL, prior, q=left, item=item, to=crafter))
                draft.handoffs += 1
            left = 0
        if left:
            return f"{left} more {item} is held only by agents that may not hand it over (resource.deliver)"
    for agent in sorted(set(obtained) | set(deliveries)):
        if agent != crafter:
            draft.paths[agent] += obtained[agent] + deliveries[agent]
    place = _task(PLACE_SKILL, prior, q=1, item=TABLE, station=STATION)
    if placer is not None and placer != crafter:
        draft.paths[placer].append(place)
    own_path = draft.paths[crafter]
    own_path += obtained[crafter]
    placed = placer is not None and placer != crafter
    smelted = sorted({source for _, recipe, _ in feasibility.runs if (source := smelted_input(recipe))})
    if len(smelted) > 1:
        return f"the plan smelts {' and '.join(smelted)}, and one furnace smelts one kind of item per plan"
    game = planning_game(task, prior)
    for result, recipe, times in _craft_order(feasibility.runs, feasibility.places_table and placer is None):
        if is_heat(result):
            continue  # its fuel goes in with the smelt that burns it
        source = smelted_input(recipe)
        if source is not None:
            own_path += _smelt(result, source, times, feasibility.runs, prior)
            continue
        if recipe.grid > 2 and feasibility.places_table and not placed:
            own_path.append(place)
            placed = True
        args: dict[str, str | int] = {"q": recipe.count * times, "item": result}
        material = _material(game, result, recipe)
        if material is not None:
            args["input"] = material
        if recipe.grid > 2:
            args["station"] = STATION
        own_path.append(_task(CRAFT_SKILL, prior, **args))
    holder = task.goal.holder
    if holder not in (ANY, crafter):
        key = "to" if holder in holdings else "dst"
        own_path.append(_task(DELIVER_SKILL, prior, q=task.goal.count, item=task.goal.item, **{key: holder}))
        draft.handoffs += key == "to"
    barred = next(((a, t.skill) for a, tasks in draft.paths.items() for t in tasks if t.skill in blocked[a]), None)
    if barred is not None:
        return f"{barred[0]} would need {barred[1]}, which it may not use"
    return draft


def plan_team(task: TeamTask, lead: str, prior: Prior) -> TeamPlan:
    """The lead's n-party proposal for ``task`` as the lead knows it.

    Raises nothing for an unreachable goal: the answer carries the diagnosis. Raises
    :class:`ResolutionError` (``PATH_TOO_LONG``) when every choice of crafter needs a
    path longer than the prior's cap.
    """
    feasibility = diagnose(task, prior)
    if not feasibility.feasible:
        return TeamPlan(feasibility)
    needs = _net_needs(task, feasibility.runs, feasibility.places_table)
    names = [agent.name for agent in task.agents]
    holder = task.goal.holder
    if not feasibility.runs:  # nothing to craft: the goal is held or gathered, and handed to its holder
        candidates = [holder] if holder in names else names
    else:
        candidates = [agent.name for agent in task.agents if CRAFT_SKILL not in agent.blocked]
    attempts = {name: _draft(task, name, needs, feasibility, prior) for name in candidates}
    drafts = [(name, draft) for name, draft in attempts.items() if isinstance(draft, _Draft)]
    if not drafts:
        why = "; ".join(f"{name}: {reason}" for name, reason in attempts.items())
        role = "crafts" if feasibility.runs else "collects the goal"
        reason = f"the items exist in the team, but no agent that {role} can be supplied with the skills it has ({why})"
        if not attempts:
            reason = "every agent blocks craft.item"
        return TeamPlan(Feasibility(False, "NO_ASSIGNMENT", reason))
    cap = prior.vocab.max_path_tasks
    fitting = [(name, draft) for name, draft in drafts if draft.longest() <= cap]
    if not fitting:
        longest = min(draft.longest() for _, draft in drafts)
        raise ResolutionError(
            "PATH_TOO_LONG",
            f"every plan needs a path of {longest} tasks; the prior caps a path at {cap} (limits.max_path_tasks)",
        )
    crafter, draft = min(fitting, key=lambda pair: (pair[1].handoffs, pair[1].longest(), pair[0] != lead, pair[0]))
    return TeamPlan(feasibility, _proposal(draft, lead), crafter, draft.handoffs)


def _proposal(draft: _Draft, lead: str) -> Proposal:
    own: Path = tuple(draft.paths.get(lead, ()))
    requests = tuple(
        PeerRequest(agent, tuple(tasks)) for agent, tasks in sorted(draft.paths.items()) if agent != lead and tasks
    )
    return Proposal(own, requests)
