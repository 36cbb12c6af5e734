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
from gencoord.dsl.serialize import format_task
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import GencoordError
from gencoord.planning.drafts import making
from gencoord.prior.ledger import consumption, production
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.tasks.context import LocalContext
from gencoord.tasks.team import TeamTask

TEAM_STAGES = (Stage.TEAM_LEAD, Stage.TEAM_HAVE, Stage.TEAM_RESPONSE, Stage.GATE_HELP)
PROMPT_END = "\n>>>\n"


def _bag(inventory: Mapping[str, int]) -> str:
    items = sorted(inventory.items())
    return " ".join(f"{item}={count}" for item, count in items) or "-"


def _counts(inventory: Mapping[str, int]) -> str:
    """A bag as the hand-overs write it (``q=8,item=bamboo``), so a delivery copies its quantity and item in order."""
    items = sorted(inventory.items())
    return " ".join(f"q={count},item={item}" for item, count in items) or "-"


def plan_lines(team: TeamTask, prior: Prior) -> list[str]:
    """The cheapest plan from what the lead knows, as MINDcraft's crafting plan gives it: its jobs and its needs.

    One ``step`` line per job, written as the task a path carries (what no bag holds gathered,
    the table put down, each craft with its quantity and selecting input, in crafting order),
    then ``need`` with the totals the plan consumes beyond what it makes (what bags hand over
    or gathering brings). Who does each step, and who hands what to whom, is the lead's to
    decide. Nothing when the view cannot reach the goal.
    """
    made = making(team, prior)
    if made is None:
        return []
    lines = [f"step {format_task(step)}" for step in made.steps]
    if made.needs:
        lines.append(f"need {_counts(made.needs)}")
    return lines


def ledger_lines(context: LocalContext, delivered: str, prior: Prior) -> list[str]:
    """A peer's ledger of the path asked of it: per item its path uses, in order of first use, what it holds,
    what it gets (handed over by others, or made by its own earlier steps) and what the path uses:
    ``ledger item=<item> have=<held> gets=<n> uses=<n>``. Nothing when the projection does not parse
    (words, or a hostile message: the decision line then answers it as it stands)."""
    try:
        proposal = prior.parse(delivered)
    except GencoordError:
        return []
    mine = next((r.plan for r in proposal.peer_requests if r.target == context.agent), None)
    if mine is None:
        return []
    gets: Counter[str] = Counter()
    for path in (proposal.self_plan, *(r.plan for r in proposal.peer_requests if r.target != context.agent)):
        gets.update({str(t.get("item")): int(t.get("q") or 0) for t in path if t.get("to") == context.agent})
    uses: Counter[str] = Counter()
    for task in mine:
        uses.update(consumption(task, prior))
        gets.update(production(task, prior))
    return [
        f"ledger item={item} have={context.inventory.get(item, 0)} gets={gets[item]} uses={used}"
        for item, used in uses.items()
    ]


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
            lines.append(f"bag {agent.name}: {_counts(agent.inventory)}")
            if agent.blocked:
                lines.append(f"cannot {agent.name}: {' '.join(sorted(agent.blocked))}")
        lines.append("table " + ("placed" if team.world.crafting_table else "none"))
        if team.world.resources:
            lines.append("gather " + " ".join(sorted(team.world.resources)))
        lines += plan_lines(team, prior)
        return "\n".join(lines) + PROMPT_END
    # a peer: its own state first, so the names of its bag take the first name slots whatever the question,
    # then what arrived, then the ledger of a projection next to where the decision begins
    lines.append(f"lead {context.peer}")
    lines.append(f"bag {context.agent}: {_bag(context.inventory)}")
    if context.blocked:
        lines.append("cannot " + " ".join(context.blocked))
    if READY in context.private:  # a gate helper's own nodes it could start now
        lines.append("ready " + context.private[READY])
    if request.delivered_request is not None:
        lines.append("incoming " + request.delivered_request.replace("\n", " / "))
    if request.stage is Stage.TEAM_RESPONSE and request.delivered_request is not None:
        lines += ledger_lines(context, request.delivered_request, prior)
    return "\n".join(lines) + PROMPT_END
