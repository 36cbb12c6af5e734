"""What a team model reads: one agent's view of a team task and what arrived, rendered compactly.

A team model plays the lead (stage ``team_lead``: the n-party SELF+REQ) and the peers
(``team_have``: the supply answer; ``team_response``: the decision on a projection). Its
input carries only what that agent knows: the lead its own bag, what peers answered, the
public goal and world, and the shared recipes the team's plan runs (MINDcraft's crafting
plan, which its goal text and ``!getCraftingPlan`` give an agent); a peer its own bag, the
skills it cannot use, and the question or projection it received; a gate helper (``gate_help``)
what it can spare, the nodes of its own it could start now, and the escalation's projection. Every name a model must
write is in its input, so a name never seen in training can be copied.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from gencoord.backends.peer import READY
from gencoord.dsl.surface import SurfaceName
from gencoord.planning.feasibility import TABLE, diagnose, planning_game, selecting_input
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.tasks.context import LocalContext
from gencoord.tasks.team import TeamTask

TEAM_STAGES = (Stage.TEAM_LEAD, Stage.TEAM_HAVE, Stage.TEAM_RESPONSE, Stage.GATE_HELP)
PROMPT_END = "\n>>>\n"


def _bag(inventory: Mapping[str, int]) -> str:
    items = sorted(inventory.items())
    return " ".join(f"{item}={count}" for item, count in items) or "-"


def recipe_lines(team: TeamTask, prior: Prior) -> list[str]:
    """The cheapest plan from what the lead knows, as MINDcraft's crafting plan states it: in totals.

    One line per recipe, ``recipe <result> q=<made> input=<material>[ table]: <ingredient>=<used> ...``,
    its quantity and selecting input exactly as a craft step writes them, then ``need`` with the
    totals of what no recipe makes (what teammates hand over or gather), and ``place crafting_table``
    when the plan puts a held table down. Nothing when the view cannot reach the goal.
    """
    judged = diagnose(team, prior)
    game = planning_game(team, prior)
    made = {result for result, _, _ in judged.runs}
    need: Counter[str] = Counter()
    lines = []
    for result, recipe, runs in judged.runs:
        used = {item: count * runs for item, count in sorted(recipe.ingredients.items())}
        need.update({item: count for item, count in used.items() if item not in made})
        material = selecting_input(game, result, recipe)
        selects = f" input={material}" if material is not None else ""
        table = " table" if recipe.grid == 3 else ""
        lines.append(f"recipe {result} q={recipe.count * runs}{selects}{table}: {_bag(used)}")
    if need:
        lines.append(f"need {_bag(need)}")
    if judged.places_table:
        lines.append(f"place {TABLE}")
    return lines


def team_input(context: LocalContext, request: GenerationRequest, prior: Prior) -> str:
    """The prompt for one team message; ends where the model's output begins."""
    lines = [f"stage {request.stage.value}", f"agent {context.agent} {context.role}"]
    if context.surface is SurfaceName.FREEFORM:
        lines.append("surface freeform")  # answer in the team dialogue's sentences, not in typed lines
    if request.stage is Stage.TEAM_LEAD and context.team is not None:
        team = context.team
        goal = team.goal
        lines.append(f"goal {goal.count} {goal.item} for {goal.holder}")
        for agent in team.agents:
            lines.append(f"bag {agent.name}: {_bag(agent.inventory)}")
            if agent.blocked:
                lines.append(f"cannot {agent.name}: {' '.join(sorted(agent.blocked))}")
        lines.append("table " + ("placed" if team.world.crafting_table else "none"))
        if team.world.resources:
            lines.append("gather " + " ".join(sorted(team.world.resources)))
        lines += recipe_lines(team, prior)
    else:
        lines.append(f"lead {context.peer}")
        lines.append(f"bag {context.agent}: {_bag(context.inventory)}")
        if context.blocked:
            lines.append("cannot " + " ".join(context.blocked))
        if READY in context.private:  # a gate helper's own nodes it could start now
            lines.append("ready " + context.private[READY])
        if request.delivered_request is not None:
            lines.append("incoming " + request.delivered_request.replace("\n", " / "))
    return "\n".join(lines) + PROMPT_END
