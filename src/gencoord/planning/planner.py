"""The team planner: a goal and what a team holds become role paths and hand-overs, by makespan.

It works on a :class:`TeamTask` as one agent knows it (its own inventory, what peers
answered) and on the team world's public shape, never on the world itself. The recipe
plan is the feasibility check's (cheapest recipe runs over real variants, tags included);
on top of it the planner drafts who does what, in three families:

- one crafter, supplied from its own bag, then by the peers holding the most of each item
  (fewest givers), then by gathering;
- one crafter alone, gathering what it lacks instead of asking (its own recipe plan);
- one crafter, with what must be gathered dug by every agent that may, a share each, at once;
- sub-assemblies: a peer that holds every ingredient of an intermediate crafts it and
  hands over the product, in parallel with the crafter's own work (each such split alone,
  and all of them at once).

Each draft is checked, resolved, compiled and run on the simulator from the team's
public world, so its makespan is the team's simulated completion time with every
hand-over's walk, toss and pickup counted. The fastest wins; fewer hand-overs break ties.
A crafting table is placed by whoever holds one (once placed, every agent uses it), or
crafted and placed by the crafter. Blocked skills are respected everywhere.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task
from gencoord.errors import GencoordError, ResolutionError
from gencoord.planning.feasibility import (
    CRAFT_SKILL,
    GATHER_SKILL,
    TABLE,
    Feasibility,
    Runs,
    diagnose,
    planning_game,
    quick_runs,
    selecting_input,
)
from gencoord.planning.furnace import heat_of, is_heat, smelted_input
from gencoord.prior.contract import check_proposal
from gencoord.prior.episode import PublicEpisode
from gencoord.prior.gamedata import GameData, Recipe
from gencoord.prior.prior import Prior
from gencoord.protocol.resolve import resolve_team
from gencoord.runtime.compile import compile_plan
from gencoord.runtime.materialize import materialize
from gencoord.tasks.team import ANY, TeamTask
from gencoord.tasks.world import FURNACE, STATION, source_ref, team_world
from gencoord.worlds.executor import WorldSnapshot
from gencoord.worlds.sim.executor import SimExecutor
from gencoord.worlds.spec import WorldSpec

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
    makespan_s: float | None = None  # the chosen plan's simulated completion time
    single_crafter_s: float | None = None  # the fastest plan in which one agent makes everything


@dataclass
class _Draft:
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


def _order(runs: Runs, table_made: bool = False) -> list[int]:
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
    return [runs[index] for index in _order(runs, table_made)]


def _craft(result: str, recipe: Recipe, times: int, game: GameData, prior: Prior) -> Task:
    args: dict[str, str | int] = {"q": recipe.count * times, "item": result}
    material = selecting_input(game, result, recipe)
    if material is not None:
        args["input"] = material
    if recipe.grid > 2:
        args["station"] = STATION
    return _task(CRAFT_SKILL, prior, **args)


def _draft(
    task: TeamTask, crafter: str, feasibility: Feasibility, splits: dict[int, str], prior: Prior, spread: bool = False
) -> _Draft | str:
    """The paths when ``crafter`` makes the goal and each run of ``splits`` (index → peer) is that
    peer's sub-assembly from its own bag; why not, when the team's skills cannot supply it that way.

    With ``spread``, what must be gathered is split evenly over every agent that may gather
    (each digs its share at once and hands it over), rather than gathered by one.
    """
    blocked = {agent.name: set(agent.blocked) for agent in task.agents}
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    game = planning_game(task, prior)
    draft = _Draft()
    made: dict[str, list[Task]] = defaultdict(list)
    for index in (index for index in _order(feasibility.runs) if index in splits):
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
    runs = tuple(run for index, run in enumerate(feasibility.runs) if index not in splits)
    needs = _net_needs(task, runs, feasibility.places_table)
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
            if left == 0:
                break
            share = min(holdings[giver].get(item, 0), left)
            if share:
                holdings[giver][item] -= share
                deliveries[giver].append(_task(DELIVER_SKILL, prior, q=share, item=item, to=crafter))
                draft.handoffs += 1
                left -= share
        if left and item in task.world.resources:
            if not gatherers:
                return f"nobody may gather {item} and hand it over"
            for gatherer, share in _shares(left, gatherers if spread else gatherers[:1], load).items():
                obtained[gatherer].append(_task(GATHER_SKILL, prior, q=share, item=item, loc=source_ref(item)))
                if gatherer != crafter:
                    deliveries[gatherer].append(_task(DELIVER_SKILL, prior, q=share, item=item, to=crafter))
                    draft.handoffs += 1
            left = 0
        if left:
            return f"{left} more {item} is held only by agents that may not hand it over (resource.deliver)"
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


def _sub_assemblies(task: TeamTask, crafter: str, feasibility: Feasibility) -> dict[int, str]:
    """Runs a peer can make itself, each given to the first such peer, in crafting order.

    Only intermediates (never the goal or a heat source). The peer supplies every ingredient
    from its own bag, from what it may gather in the world, or from a sub-assembly of its own
    made earlier (paper for the books it then makes), so a chain of runs moves off the
    crafter's path and the product is handed over once.
    """
    goal = task.goal.item
    free = {agent.name: dict(agent.inventory) for agent in task.agents}
    blocked = {agent.name: set(agent.blocked) for agent in task.agents}

    def supplies(agent: str, recipe: Recipe, times: int) -> bool:
        may_gather = GATHER_SKILL not in blocked[agent]
        return all(
            free[agent].get(item, 0) >= amount * times or (may_gather and item in task.world.resources)
            for item, amount in recipe.ingredients.items()
        )

    splits: dict[int, str] = {}
    for index in _order(feasibility.runs):
        result, recipe, times = feasibility.runs[index]
        if result in (goal, TABLE) or is_heat(result) or smelted_input(recipe) is not None:
            continue
        maker = next(
            (
                agent.name
                for agent in task.agents
                if agent.name != crafter
                and not {CRAFT_SKILL, DELIVER_SKILL} & blocked[agent.name]
                and supplies(agent.name, recipe, times)
            ),
            None,
        )
        if maker is not None:
            for ingredient, amount in recipe.ingredients.items():
                free[maker][ingredient] = max(0, free[maker].get(ingredient, 0) - amount * times)
            free[maker][result] = free[maker].get(result, 0) + recipe.count * times
            splits[index] = maker
    return splits


def _chains(splits: dict[int, str], runs: Runs) -> list[dict[int, str]]:
    """Each split with the earlier splits of the same maker it feeds on: the subsets a draft may take alone."""
    chains: list[dict[int, str]] = []
    for index, maker in splits.items():
        chain, todo = {index}, [index]
        while todo:
            recipe = runs[todo.pop()][1]
            for other, (result, _, _) in enumerate(runs):
                if other not in chain and splits.get(other) == maker and result in recipe.ingredients:
                    chain.add(other)
                    todo.append(other)
        subset = {other: maker for other in sorted(chain)}
        if subset not in chains:
            chains.append(subset)
    return chains


def _alone(task: TeamTask, crafter: str, prior: Prior) -> _Draft | None:
    """``crafter`` makes everything from its own bag and what it gathers: no message, no hand-over."""
    agent = next(agent for agent in task.agents if agent.name == crafter)
    solo = task.model_copy(update={"agents": [agent]})
    found = quick_runs(solo, prior)
    if found is None:
        return None
    draft = _draft(solo, crafter, found, {}, prior)
    return draft if isinstance(draft, _Draft) else None


def makespan(task: TeamTask, proposal: Proposal, lead: str, prior: Prior) -> float | None:
    """The team's simulated completion time for ``proposal`` in ``task``'s public world; None when it fails.

    The lead's own dry run: its view of the bags, the world every agent may name, the
    simulator's physics (walks, tosses, pickups, crafts). Nothing here touches the real world.
    """
    episode, world = team_world(task, prior)
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    final, _ = dry_run(proposal, lead, holdings, episode, world, prior)
    return final.clock_s if final is not None and task.goal_met(final.inventories, final.containers) else None


def dry_run(
    proposal: Proposal,
    lead: str,
    holdings: dict[str, dict[str, int]],
    episode: PublicEpisode,
    world: WorldSpec,
    prior: Prior,
) -> tuple[WorldSnapshot | None, str]:
    """``proposal`` checked, resolved, compiled and run on the simulator.

    Its final world and "", or None and why it fell short (the first failing step, as the world said it).
    """
    try:
        check_proposal(proposal, lead, prior, episode)
        plan = materialize(resolve_team(proposal, lead, holdings, prior, episode), prior, episode)
        program = compile_plan(plan, world, prior.game)
    except GencoordError as error:
        return None, f"{error.reason}: {error.message}"
    executor = SimExecutor(prior.game)
    executor.reset(world)
    records = executor.run(program, 0, len(program.actions))
    failed = next((record for record in records if record.failure is not None), None)
    if failed is not None and failed.failure is not None:
        action = failed.action
        return None, f"{action.agent} {action.name}: {failed.failure.code}: {failed.failure.message}"
    if len(records) < len(program.actions):
        return None, f"the run stopped after {len(records)} of {len(program.actions)} actions"
    return executor.snapshot(), ""


@dataclass(frozen=True, slots=True)
class _Candidate:
    crafter: str
    draft: _Draft
    single: bool  # one agent makes and gathers everything; peers only hand over what they hold


def _candidates(
    task: TeamTask, feasibility: Feasibility, crafters: list[str], prior: Prior, simplest: bool = False
) -> dict[str, str | list[_Candidate]]:
    """Every draft per crafter, or why that crafter cannot be supplied; ``simplest``: the first family's only."""
    found: dict[str, str | list[_Candidate]] = {}
    for crafter in crafters:
        base = _draft(task, crafter, feasibility, {}, prior)
        if isinstance(base, str):
            found[crafter] = base
            continue
        drafts = [_Candidate(crafter, base, True)]
        if simplest:
            found[crafter] = drafts
            continue
        splits = _sub_assemblies(task, crafter, feasibility)
        chains = _chains(splits, feasibility.runs)
        subsets = chains + ([splits] if splits not in chains else [])
        for subset in subsets:
            split = _draft(task, crafter, feasibility, subset, prior)
            if isinstance(split, _Draft):
                drafts.append(_Candidate(crafter, split, False))
        alone = _alone(task, crafter, prior) if len(task.agents) > 1 else None
        if alone is not None:
            drafts.append(_Candidate(crafter, alone, True))
        if task.world.resources and len(task.agents) > 1:  # dig in parallel: every gatherer takes a share
            for subset in ({}, splits) if splits else ({},):
                spread = _draft(task, crafter, feasibility, subset, prior, spread=True)
                if isinstance(spread, _Draft):
                    drafts.append(_Candidate(crafter, spread, False))
        found[crafter] = drafts
    return found


def _measured(seconds: float | None) -> float | None:
    return None if seconds is None or math.isinf(seconds) else seconds


def _crafters(task: TeamTask, feasibility: Feasibility) -> list[str]:
    names = [agent.name for agent in task.agents]
    if not feasibility.runs:  # nothing to craft: the goal is held or gathered, and handed to its holder
        return [task.goal.holder] if task.goal.holder in names else names
    return [agent.name for agent in task.agents if CRAFT_SKILL not in agent.blocked]


def plan_team(
    task: TeamTask, lead: str, prior: Prior, crafters: list[str] | None = None, simplest: bool = False
) -> TeamPlan:
    """The lead's n-party proposal for ``task`` as the lead knows it: the draft of least makespan.

    ``crafters`` narrows who may make the goal (a cooking planner deals dishes out this way);
    ``simplest`` keeps only the first family (one crafter, supplied from its own bag, then by the
    peers holding most, then by gathering): a plan whose every step is one of the recipe plan's.

    Raises nothing for an unreachable goal: the answer carries the diagnosis. Raises
    :class:`ResolutionError` (``PATH_TOO_LONG``) when every draft needs a path longer than
    the prior's cap.
    """
    feasibility = diagnose(task, prior)
    if not feasibility.feasible:
        return TeamPlan(feasibility)
    allowed = [name for name in _crafters(task, feasibility) if crafters is None or name in crafters]
    attempts = _candidates(task, feasibility, allowed, prior, simplest)
    drafts = [candidate for found in attempts.values() if not isinstance(found, str) for candidate in found]
    if not drafts:
        why = "; ".join(f"{name}: {reason}" for name, reason in attempts.items())
        role = "crafts" if feasibility.runs else "collects the goal"
        reason = f"the items exist in the team, but no agent that {role} can be supplied with the skills it has ({why})"
        if not attempts:
            reason = "every agent blocks craft.item"
        return TeamPlan(Feasibility(False, "NO_ASSIGNMENT", reason))
    cap = prior.vocab.max_path_tasks
    fitting = [candidate for candidate in drafts if candidate.draft.longest() <= cap]
    if not fitting:
        longest = min(candidate.draft.longest() for candidate in drafts)
        raise ResolutionError(
            "PATH_TOO_LONG",
            f"every plan needs a path of {longest} tasks; the prior caps a path at {cap} (limits.max_path_tasks)",
        )
    timed = [(makespan(task, _proposal(c.draft, lead), lead, prior), c) for c in fitting]
    ran = [(seconds, c) for seconds, c in timed if seconds is not None]
    if not ran:  # no draft runs to the goal in the lead's dry run: the fewest hand-overs, as a person would
        ran = [(math.inf, c) for _, c in timed]

    def rank(pair: tuple[float, _Candidate]) -> tuple[float, int, int, bool, str]:
        seconds, c = pair
        return (round(seconds, 3), c.draft.handoffs, c.draft.longest(), c.crafter != lead, c.crafter)

    seconds, chosen = min(ran, key=rank)
    single = min((s for s, c in ran if c.single), default=None)
    return TeamPlan(
        feasibility,
        _proposal(chosen.draft, lead),
        chosen.crafter,
        chosen.draft.handoffs,
        makespan_s=_measured(seconds),
        single_crafter_s=_measured(single),
    )


def single_crafter_makespan(task: TeamTask, lead: str, prior: Prior) -> float | None:
    """The fastest plan in which one agent makes and gathers everything (peers only hand over what they hold).

    The baseline a report sets each chosen plan against; None when no such plan runs.
    """
    feasibility = diagnose(task, prior)
    if not feasibility.feasible:
        return None
    cap = prior.vocab.max_path_tasks
    attempts = _candidates(task, feasibility, _crafters(task, feasibility), prior)
    times = [
        makespan(task, _proposal(c.draft, lead), lead, prior)
        for found in attempts.values()
        if not isinstance(found, str)
        for c in found
        if c.single and c.draft.longest() <= cap
    ]
    return min((seconds for seconds in times if seconds is not None), default=None)


def _proposal(draft: _Draft, lead: str) -> Proposal:
    own: Path = tuple(draft.paths.get(lead, ()))
    requests = tuple(
        PeerRequest(agent, tuple(tasks)) for agent, tasks in sorted(draft.paths.items()) if agent != lead and tasks
    )
    return Proposal(own, requests)
