"""run_cooking_task: a cooking task from private bags and private recipes to a verified world.

The same exchange as a crafting team task (``run/team.py``), with two more kinds of privacy:
several goal items (or a goal per agent), and recipes that only some agents know.

1. The lead is the agent that knows the most goal recipes (the first, on a tie). For each
   goal item whose recipe it does not know, a teammate that knows it teaches it: a PATH
   delivery of the private-structure protocol (``protocol.delivery``: content, id, ACK) whose
   body is the recipe's own step as a skill path, e.g. ``craft.item(q=1,item=golden_carrot,
   station=crafting_station)`` or the furnace's load and collect. The lead checks it against the
   shared contract before it acknowledges. When no agent knows an item's recipe, the lead
   plans it from the shared prior's recipes, as in crafting. What teaching cost is counted on the wire and
   in the record (``recipe_bytes``).
2. One bounded supply question to each peer (``ASK``: the items the goals' recipes can use)
   and one ``HAVE`` answer. A goal the team cannot reach is refused here, naming what is missing.
3. The lead's planner (``planning/cooking.py``, a deterministic rule: zero model calls, and
   the record says so) writes the n-party SELF+REQ; each peer gets its projection and answers
   ACCEPT, COUNTER or REJECT, as in crafting, for at most ``MAX_ROUNDS`` proposals.
4. The commitment is resolved, materialized, compiled, executed and verified: H per hand-over,
   T, and G by MINDcraft's test (every goal held at once) within the time limit.

Peers answer and teach by deterministic rules from what they hold and know.
"""

from __future__ import annotations

import time
from dataclasses import replace

from gencoord.backends.base import Backend
from gencoord.dsl.ast import Path
from gencoord.dsl.serialize import format_path
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import GencoordError, OperationalError, ResolutionError
from gencoord.planning.cooking import Dish, cooking_makespan, dish_task, plan_cooking
from gencoord.planning.feasibility import closure_items, planning_game
from gencoord.planning.planner import plan_team
from gencoord.prior.contract import check_path
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.delivery import Delivery, DeliveryKind, transmit
from gencoord.protocol.supply import MAX_ASKED, SupplyQuery
from gencoord.protocol.wire import Wire
from gencoord.reasons import Reason
from gencoord.run.team_choices import TeamMode
from gencoord.run.team_exchange import Draft, RuleLead, asked_view, negotiate
from gencoord.run.team_run import TeamResult, Verdict, start_run
from gencoord.runtime.compile import compile_plan
from gencoord.runtime.materialize import materialize
from gencoord.runtime.thinking import Thinking
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.team import TeamAgent
from gencoord.tasks.world import team_world
from gencoord.worlds.executor import Executor, WorldSnapshot

PLANNER = "planner"
"""The one lead cooking tasks have: the rule of ``planning/cooking.py``."""

RECIPE_STEP_SKILLS = frozenset({"craft.item", "transform.supply_input", "transform.collect_output"})
"""What a taught recipe may say: how the item itself is made, never who fetches what."""


def cooking_lead(task: CookingTask) -> str:
    """The agent that knows the most goal recipes; the first such agent on a tie."""
    items = task.goal_items()
    return max(task.agents, key=lambda agent: sum(task.knows(agent.name, item) for item in items)).name


def recipe_step(task: CookingTask, item: str, maker: str, prior: Prior) -> Path:
    """How ``item`` itself is made, as a skill path for ``maker``: the last step of the knower's own plan.

    The knower plans one ``item`` in the public world as if the maker held every ingredient
    (the lowest recipe level only: what the item is made from, not where that comes from),
    and keeps the tasks that make the item.
    """
    world = task.world.model_copy(update={"resources": [], "supply": {}})
    probe = dish_task(task.model_copy(update={"world": world}), [TeamAgent(name=maker)], Dish(item, 1, maker))
    game = planning_game(probe, prior)
    for recipe in game.recipes.get(item, ()):
        bag = {ingredient: amount for ingredient, amount in recipe.ingredients.items() if ":" not in ingredient}
        holder = TeamAgent(name=maker, inventory=bag)
        planned = plan_team(probe.model_copy(update={"agents": [holder]}), maker, prior)
        if planned.proposal is not None:
            steps = tuple(t for t in planned.proposal.self_plan if t.skill in RECIPE_STEP_SKILLS)
            if steps and steps[-1].get("item") == item:
                return steps
    raise ResolutionError(Reason.RECIPE_UNKNOWN, f"no recipe of the game makes {item} in this world")


def _teach(
    task: CookingTask, lead: str, prior: Prior, episode: PublicEpisode, wire: Wire
) -> tuple[dict[str, Path], int]:
    """Every goal recipe the lead lacks, taught by the first teammate that knows it; the bytes it cost."""
    taught: dict[str, Path] = {}
    spent = 0
    for item in task.goal_items():
        if task.knows(lead, item):
            continue
        teacher = next((agent.name for agent in task.agents if task.knows(agent.name, item)), None)
        if teacher is None:  # as in crafting: nobody may look it up, so the lead plans from the shared prior
            continue
        body = format_path(recipe_step(task, item, lead, prior))
        delivery = Delivery(DeliveryKind.PATH, teacher, lead, None, body)

        def learn(arrived: Delivery, item: str = item) -> Path:
            return _learned(arrived, item, lead, prior, episode)

        path, cost = transmit(delivery, wire, learn)
        taught[item] = path
        spent += cost.request_bytes + cost.ack_bytes
    return taught, spent


def _learned(arrived: Delivery, item: str, lead: str, prior: Prior, episode: PublicEpisode) -> Path:
    """The lead taking a taught recipe on: a contract-checked path whose last step makes ``item``."""
    path = prior.parse_path(arrived.body)
    check_path(path, lead, "SELF", prior, episode)
    if not path or path[-1].get("item") != item or any(task.skill not in RECIPE_STEP_SKILLS for task in path):
        raise ResolutionError(Reason.NOT_A_RECIPE, f"the delivery does not say how {item} itself is made")
    return path


def _asked(task: CookingTask, prior: Prior) -> SupplyQuery:
    """``ASK`` for what the goals' recipes can use, nearest each goal first, within the bound."""
    game = planning_game(dish_task(task, task.agents, Dish(task.goal_items()[0], 1, task.agents[0].name)), prior)
    items: dict[str, None] = {}
    for item in task.goal_items():
        items.update(dict.fromkeys(closure_items(game, item, table_needed=False)))
    return SupplyQuery(tuple(sorted(list(items)[:MAX_ASKED])))


def alone_makespan(task: CookingTask, prior: Prior) -> float | None:
    """The fastest plan in which the lead cooks everything from the team's pooled bags: the baseline."""
    lead = cooking_lead(task)
    pooled: dict[str, int] = {}
    for agent in task.agents:
        for item, count in agent.inventory.items():
            pooled[item] = pooled.get(item, 0) + count
    own = next(agent for agent in task.agents if agent.name == lead).model_copy(update={"inventory": pooled})
    names = {agent.name for agent in task.agents}
    goals = [goal.model_copy(update={"holder": lead}) if goal.holder in names else goal for goal in task.goals]
    solo = task.model_copy(update={"agents": [own], "goals": goals, "own_work": False, "recipes": {}})
    return plan_cooking(solo, lead, prior).makespan_s


def run_cooking_task(
    task: CookingTask,
    prior: Prior,
    *,
    mode: TeamMode = TeamMode.PRIVATE,
    surface: SurfaceName = SurfaceName.DSL,
    backend: str = PLANNER,
    peer_backend: Backend | None = None,
    executor: Executor | None = None,
    thinking: Thinking | None = None,
) -> TeamResult:
    """One cooking task end to end; never raises for a task that cannot be coordinated (the result says why)."""
    clock = time.perf_counter()
    made = team_world(task, prior)
    run = start_run(
        task,
        prior,
        made,
        cooking_lead(task),
        backend,
        mode=mode,
        surface=surface,
        peer_backend=peer_backend,
        executor=executor,
        clock=clock,
    )
    lead, wire, peers, episode = run.lead, run.wire, run.peers, run.episode
    if surface is not SurfaceName.DSL:
        return run.finish(code=Reason.UNSUPPORTED_SURFACE, message="a cooking commitment travels in the Short DSL only")
    if task.goal_met({a.name: a.inventory for a in task.agents}, {}):
        return run.finish(message="the goal already holds: nothing to coordinate", success=True)

    def draft(view: CookingTask) -> Draft:
        planned = plan_cooking(view, lead, prior)
        return Draft(planned.proposal, planned.code, planned.reason)

    try:
        _, spent = _teach(task, lead, prior, episode, wire)
        run.result = replace(run.result, recipe_bytes=spent)
        view = task if mode is TeamMode.CENTRALIZED else asked_view(task, lead, _asked(task, prior), wire, peers)
        agreed = negotiate(view, RuleLead(lead, draft, prior, wire, peers, run.generations), prior, episode)
        commitment, proposal = agreed.commitment, agreed.proposal
        if commitment is None or proposal is None:
            return run.finish(feasible=agreed.feasible, code=agreed.code, message=agreed.message)
        plan = materialize(commitment, prior, episode)
        program = compile_plan(plan, run.world, prior.game)
        run.result = replace(
            run.result,
            planned_makespan_s=cooking_makespan(task, proposal, lead, prior),
            single_crafter_s=alone_makespan(task, prior),
        )
    except GencoordError as error:
        if isinstance(error, OperationalError) and error.outage:  # an endpoint gone: no outcome of the team's
            raise
        return run.finish(code=error.reason, message=error.message, failure=str(error.code))

    def verdict(final: WorldSnapshot) -> Verdict:
        if task.goal_met(final.inventories, final.containers):
            return Verdict(True)
        unmet = next(goal for goal in task.goals if not goal.met(final.inventories, final.containers))
        return Verdict(False, "GOAL_UNMET", f"at the end, not {unmet.describe()}")

    return run.execute(commitment, plan, program, verdict, thinking)
