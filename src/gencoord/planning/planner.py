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
from dataclasses import dataclass

from gencoord.dsl.ast import Path, PeerRequest, Proposal
from gencoord.errors import GencoordError, ResolutionError
from gencoord.planning.drafts import DELIVER_SKILL, Draft, craft_runs_order, draft_paths
from gencoord.planning.feasibility import (
    CRAFT_SKILL,
    GATHER_SKILL,
    TABLE,
    Feasibility,
    Runs,
    diagnose,
    quick_runs,
)
from gencoord.planning.furnace import is_heat, smelted_input
from gencoord.prior.contract import check_proposal
from gencoord.prior.gamedata import Recipe
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.resolve import resolve_team
from gencoord.reasons import Reason
from gencoord.runtime.compile import compile_plan
from gencoord.runtime.materialize import materialize
from gencoord.tasks.team import TeamTask
from gencoord.tasks.world import team_world
from gencoord.worlds.executor import WorldSnapshot
from gencoord.worlds.sim.executor import SimExecutor
from gencoord.worlds.spec import WorldSpec


@dataclass(frozen=True, slots=True)
class TeamPlan:
    """A planner's answer: the n-party proposal of ``lead``, or why there is none."""

    feasibility: Feasibility
    proposal: Proposal | None = None
    crafter: str | None = None
    handoffs: int = 0
    makespan_s: float | None = None  # the chosen plan's simulated completion time
    single_crafter_s: float | None = None  # the fastest plan in which one agent makes everything


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
    for index in craft_runs_order(feasibility.runs):
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


def _alone(task: TeamTask, crafter: str, prior: Prior) -> Draft | None:
    """``crafter`` makes everything from its own bag and what it gathers: no message, no hand-over."""
    agent = next(agent for agent in task.agents if agent.name == crafter)
    solo = task.model_copy(update={"agents": [agent]})
    found = quick_runs(solo, prior)
    if found is None:
        return None
    draft = draft_paths(solo, crafter, found, {}, prior)
    return draft if isinstance(draft, Draft) else None


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
    draft: Draft
    single: bool  # one agent makes and gathers everything; peers only hand over what they hold


def _candidates(
    task: TeamTask, feasibility: Feasibility, crafters: list[str], prior: Prior, simplest: bool = False
) -> dict[str, str | list[_Candidate]]:
    """Every draft per crafter, or why that crafter cannot be supplied; ``simplest``: the first family's only."""
    found: dict[str, str | list[_Candidate]] = {}
    for crafter in crafters:
        base = draft_paths(task, crafter, feasibility, {}, prior)
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
            split = draft_paths(task, crafter, feasibility, subset, prior)
            if isinstance(split, Draft):
                drafts.append(_Candidate(crafter, split, False))
        alone = _alone(task, crafter, prior) if len(task.agents) > 1 else None
        if alone is not None:
            drafts.append(_Candidate(crafter, alone, True))
        if task.world.resources and len(task.agents) > 1:  # dig in parallel: every gatherer takes a share
            for subset in ({}, splits) if splits else ({},):
                spread = draft_paths(task, crafter, feasibility, subset, prior, spread=True)
                if isinstance(spread, Draft):
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
        return TeamPlan(Feasibility(False, Reason.NO_ASSIGNMENT, reason))
    cap = prior.vocab.max_path_tasks
    fitting = [candidate for candidate in drafts if candidate.draft.longest() <= cap]
    if not fitting:
        longest = min(candidate.draft.longest() for candidate in drafts)
        raise ResolutionError(
            Reason.PATH_TOO_LONG,
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


def _proposal(draft: Draft, lead: str) -> Proposal:
    own: Path = tuple(draft.paths.get(lead, ()))
    requests = tuple(
        PeerRequest(agent, tuple(tasks)) for agent, tasks in sorted(draft.paths.items()) if agent != lead and tasks
    )
    return Proposal(own, requests)
