"""The cooking planner: goals of several items become one n-party commitment, dish by dish, by makespan.

A cooking goal is several items one holder must hold at once (or a goal per agent). The
planner deals the dishes out one at a time, each to the agent whose taking it ends the whole
team's work soonest:

- each dish is a one-item team task (the crafting planner's: who gathers, hunts, hands over,
  crafts) over what the team still holds after the dishes dealt before it, delivered to the
  goal's holder, with the maker narrowed to one agent;
- a dish that cooks is tried at the furnace and, for food, at the smoker (twice as fast). One
  station cooks one input at a time, so two dishes on one station by two agents work only
  where the simulator's dry run of the merged commitment says they do;
- every candidate is the merged commitment checked, resolved, compiled and run on the
  simulator from the team's public world, and its makespan is that run's completion time.

Holdings are carried from dish to dish by the ledger (what each task surely consumes and
produces, never a lucky drop), and every dish's goal items are set aside for its holder, so a
later dish cannot eat an earlier one. Under ``own_work`` (hells kitchen) a dish's holder makes it:
it alone gathers, hunts, cooks and crafts, while teammates may only hand over what they already
hold (MINDcraft's recipe steps say "get … from your inventory or other agents"). A goal any
agent may hold is tried with the lead and with the agent holding most of what its recipes use.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from gencoord.dsl.ast import PeerRequest, Proposal, Task
from gencoord.errors import ResolutionError
from gencoord.planning.drafts import DELIVER_SKILL, SMELT_SKILLS
from gencoord.planning.feasibility import closure_items, planning_game
from gencoord.planning.planner import dry_run, plan_team
from gencoord.prior.ledger import consumption, production
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.team import ANY, TeamAgent, TeamGoal, TeamTask
from gencoord.tasks.world import FURNACE, SMOKER, team_world
from gencoord.worlds.sim.physics import default_physics

Paths = dict[str, list[Task]]


@dataclass(frozen=True, slots=True)
class Dish:
    """One goal item as the planner deals it out: ``count`` of ``item`` for ``holder``."""

    item: str
    count: int
    holder: str


@dataclass(frozen=True, slots=True)
class CookingPlan:
    """The lead's proposal for a cooking task, or why there is none (``code``, ``reason``)."""

    code: Reason | str | None
    reason: str
    proposal: Proposal | None = None
    makespan_s: float | None = None
    makers: tuple[tuple[str, str], ...] = ()  # (item, the agent that makes it), in the order dealt
    stations: tuple[tuple[str, str], ...] = ()  # (item, the station it cooks at)

    @property
    def feasible(self) -> bool:
        return self.proposal is not None


def dish_task(task: CookingTask, agents: list[TeamAgent], dish: Dish) -> TeamTask:
    """``dish`` as a one-item team task in ``task``'s world, for ``agents`` as they stand now."""
    return TeamTask(
        id=f"{task.id}.{dish.item}",
        agents=agents,
        goal=TeamGoal(item=dish.item, count=dish.count, holder=dish.holder),
        world=task.world,
        time_limit_s=task.time_limit_s,
    )


def proposal_of(paths: Paths, lead: str) -> Proposal:
    requests = tuple(
        PeerRequest(agent, tuple(tasks)) for agent, tasks in sorted(paths.items()) if agent != lead and tasks
    )
    return Proposal(tuple(paths.get(lead, ())), requests)


def paths_of(proposal: Proposal, lead: str) -> Paths:
    paths: Paths = {lead: list(proposal.self_plan)} if proposal.self_plan else {}
    for request in proposal.peer_requests:
        paths[request.target] = list(request.plan)
    return paths


def cooking_makespan(task: CookingTask, proposal: Proposal, lead: str, prior: Prior) -> float | None:
    """The team's simulated completion time for ``proposal``; None when its dry run misses a goal or fails."""
    episode, world = team_world(task, prior)
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    final, _ = dry_run(proposal, lead, holdings, episode, world, prior)
    return final.clock_s if final is not None and task.goal_met(final.inventories, final.containers) else None


def plan_cooking(task: CookingTask, lead: str, prior: Prior) -> CookingPlan:
    """The lead's n-party proposal for ``task`` as the lead knows it; the answer says why when there is none."""
    best: CookingPlan | None = None
    failure: CookingPlan | None = None
    for holders in _holder_choices(task, lead, prior):
        planned = _deal(task, lead, prior, list(_dishes(task, holders)))
        if not planned.feasible:
            failure = failure or planned
            continue
        if best is None or _rank(planned) < _rank(best):
            best = planned
    if best is not None:
        return best
    assert failure is not None  # at least one choice of holders is tried
    return failure


def _rank(plan: CookingPlan) -> float:
    return math.inf if plan.makespan_s is None else plan.makespan_s


def _dishes(task: CookingTask, holders: dict[int, str]) -> list[Dish]:
    """Every goal item, its holder resolved (``holders`` fills goals any agent may hold)."""
    return [
        Dish(item, count, holders.get(index, goal.holder))
        for index, goal in enumerate(task.goals)
        for item, count in sorted(goal.items.items())
    ]


def _holder_choices(task: CookingTask, lead: str, prior: Prior) -> list[dict[int, str]]:
    """Who holds each goal any agent may hold: the lead, or the agent holding most the goal's recipes use."""
    free = [index for index, goal in enumerate(task.goals) if goal.holder == ANY]
    if not free:
        return [{}]
    game = planning_game(dish_task(task, task.agents, Dish(task.goal_items()[0], 1, ANY)), prior)

    def richest(index: int) -> str:
        used = {i for item in task.goals[index].items for i in closure_items(game, item, table_needed=False)}
        held = {agent.name: sum(n for i, n in agent.inventory.items() if i in used) for agent in task.agents}
        return max(task.agents, key=lambda agent: (held[agent.name], agent.name == lead)).name

    choices = [dict.fromkeys(free, lead), {index: richest(index) for index in free}]
    return [choice for number, choice in enumerate(choices) if choice not in choices[:number]]


def _deal(task: CookingTask, lead: str, prior: Prior, dishes: list[Dish]) -> CookingPlan:
    """Deal ``dishes`` out one by one, each to the maker (and station) whose taking it ends soonest."""
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    start = {agent.name: dict(agent.inventory) for agent in task.agents}
    blocked = {agent.name: agent.blocked for agent in task.agents}
    bars = _givers_only(prior)
    paths: Paths = defaultdict(list)
    makers: list[tuple[str, str]] = []
    stations: list[tuple[str, str]] = []
    seconds: float | None = None
    for number, dish in enumerate(dishes):
        done = dishes[: number + 1]
        crew = [dish.holder] if task.own_work else _makers(task, dish)
        found: tuple[float, str, str, Paths] | None = None
        why: tuple[Reason | str, str] | None = None
        short = ""  # why the first draft that planned fell short on its dry run
        for maker in crew:
            givers = {name for name in holdings if task.own_work and name != maker}
            agents = [
                TeamAgent(name=name, inventory=_positive(holdings[name]), blocked=blocked[name])
                if name not in givers
                else TeamAgent(name=name, inventory=_still_held(holdings[name], start[name]), blocked=bars)
                for name in holdings
            ]
            sub = dish_task(task, agents, dish)
            try:
                planned = plan_team(sub, lead, prior, crafters=[maker])
            except ResolutionError as error:
                why = why or (error.reason, error.message)
                continue
            if planned.proposal is None:
                why = why or (planned.feasibility.code or Reason.NO_PLAN, planned.feasibility.reason)
                continue
            own = paths_of(planned.proposal, lead)
            for station, variant in _station_variants(own, task):
                merged = _merged(paths, variant)
                timed = _timed(task, proposal_of(merged, lead), lead, prior, done)
                if isinstance(timed, str):
                    short = short or timed
                elif found is None or timed < found[0]:
                    found = (timed, maker, station, variant)
        if found is None:
            code, reason = why or (Reason.NO_ASSIGNMENT, "no agent can make it with the skills it has")
            if why is None and short:  # a plan that fell short on the dry run: a herd's drops rolled low, say
                code, reason = (
                    Reason.DRY_RUN_SHORT,
                    f"every draft fell short on the simulator's dry run, first: {short}",
                )
            elif why is None:
                reason = f"no agent can be given {dish.count} {dish.item} without breaking another dish's plan"
            return CookingPlan(code, f"{dish.count} {dish.item} for {dish.holder}: {reason}")
        seconds, maker, station, variant = found
        paths = _merged(paths, variant)
        holdings = _after(holdings, variant, prior)
        if dish.holder in holdings:  # set aside: a later dish may not use it up
            holdings[dish.holder][dish.item] = holdings[dish.holder].get(dish.item, 0) - dish.count
        makers.append((dish.item, maker))
        if station:
            stations.append((dish.item, station))
    return CookingPlan(None, "", proposal_of(paths, lead), seconds, tuple(makers), tuple(stations))


def _makers(task: CookingTask, dish: Dish) -> list[str]:
    """Who may make ``dish``: its holder first (no hand-over at the end), then everyone else in order."""
    names = [agent.name for agent in task.agents]
    return [dish.holder] + [name for name in names if name != dish.holder] if dish.holder in names else names


def _still_held(now: dict[str, int], start: dict[str, int]) -> dict[str, int]:
    """What a hells-kitchen teammate may still give: what it held at the start and has not used or given,
    never what it made for its own dish (a spare bowl of its own is its own cooking, not the other's)."""
    return {item: kept for item, count in start.items() if (kept := min(count, now.get(item, 0))) > 0}


def _givers_only(prior: Prior) -> list[str]:
    """A hells-kitchen teammate's bars: every skill but handing over what it holds."""
    return sorted(skill for skill in prior.skills if skill != DELIVER_SKILL)


def _positive(bag: dict[str, int]) -> dict[str, int]:
    return {item: count for item, count in bag.items() if count > 0}


def _merged(paths: Paths, extra: Paths) -> Paths:
    merged: Paths = defaultdict(list, {agent: list(tasks) for agent, tasks in paths.items()})
    for agent, tasks in extra.items():
        merged[agent] += tasks
    return merged


def _station_variants(paths: Paths, task: CookingTask) -> list[tuple[str, Paths]]:
    """The dish's paths as planned (cooking at the furnace), and at the smoker where it cooks food only."""
    cooked = {str(t.get("item")) for tasks in paths.values() for t in tasks if t.skill == SMELT_SKILLS[0]}
    if not cooked:
        return [("", paths)]
    variants = [(FURNACE, paths)]
    if task.world.smoker and cooked <= set(default_physics().smoking):
        smoked = {
            agent: [_at(t, SMOKER) if t.skill in SMELT_SKILLS else t for t in tasks] for agent, tasks in paths.items()
        }
        variants.insert(0, (SMOKER, smoked))
    return variants


def _at(task: Task, station: str) -> Task:
    return Task(task.skill, tuple((key, station if key == "station" else value) for key, value in task.args))


def _after(holdings: dict[str, dict[str, int]], paths: Paths, prior: Prior) -> dict[str, dict[str, int]]:
    """What every agent surely holds once ``paths`` are done (hand-overs land with their receivers)."""
    after = {agent: dict(bag) for agent, bag in holdings.items()}
    for agent, tasks in paths.items():
        for task in tasks:
            for item, used in consumption(task, prior).items():
                after[agent][item] = after[agent].get(item, 0) - used
            for item, made in production(task, prior).items():
                after[agent][item] = after[agent].get(item, 0) + made
            receiver, quantity, given = task.get("to"), task.get("q"), task.get("item")
            if isinstance(receiver, str) and receiver in after and isinstance(quantity, int) and isinstance(given, str):
                after[receiver][given] = after[receiver].get(given, 0) + quantity
    return after


def _timed(task: CookingTask, proposal: Proposal, lead: str, prior: Prior, dishes: list[Dish]) -> float | str:
    """The dry run's completion time when every dish of ``dishes`` is held at the end; else why not."""
    episode, world = team_world(task, prior)
    holdings = {agent.name: dict(agent.inventory) for agent in task.agents}
    final, why = dry_run(proposal, lead, holdings, episode, world, prior)
    if final is None:
        return why
    owed: dict[str, dict[str, int]] = defaultdict(dict)
    for dish in dishes:
        owed[dish.holder][dish.item] = owed[dish.holder].get(dish.item, 0) + dish.count
    for holder, items in owed.items():
        bags = list(final.inventories.values()) if holder == ANY else [final.inventories.get(holder) or {}]
        if holder not in final.inventories and holder != ANY:
            bags = [final.containers.get(holder) or {}]
        if not any(all(bag.get(item, 0) >= count for item, count in items.items()) for bag in bags):
            return f"{holder} ends without {', '.join(f'{count} {item}' for item, count in sorted(items.items()))}"
    return final.clock_s
