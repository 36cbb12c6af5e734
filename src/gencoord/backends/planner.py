"""The planner as a team agent's backend: the lead's n-party SELF+REQ, composed by search, zero model calls.

It reads only the lead's LocalContext (its team view: its own bag and what peers
answered) and writes the same canonical Short DSL text a model would, so everything
after it (parse, contract check, resolution) is the same for every backend.
"""

from __future__ import annotations

from gencoord.errors import ConfigError, ResolutionError
from gencoord.planning.planner import plan_team
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Reply, Stage
from gencoord.reasons import Reason
from gencoord.tasks.context import LocalContext


class PlannerBackend:
    """The planner leading; ``lead_makes``: the simplest plan in which the lead crafts, whenever there is one.

    The simplest plan (the lead runs the recipe plan's steps, each teammate hands over what it
    holds of what the plan needs, a table's holder puts it down) is what a team model is taught
    (:mod:`gencoord.train.team_data`): one policy a small model can learn, where the fastest
    plan turns on walking times its prompt does not show. Where the lead cannot make the goal so,
    the fastest plan stands.
    """

    def __init__(self, prior: Prior, lead_makes: bool = False) -> None:
        self.prior = prior
        self.lead_makes = lead_makes
        self.name = "planner+lead-makes" if lead_makes else "planner"

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        if request.stage is not Stage.TEAM_LEAD or context.team is None:
            raise ConfigError(Reason.BACKEND_STAGE, f"the planner composes team proposals, not {request.stage.value}")
        plan = plan_team(context.team, context.agent, self.prior, [context.agent], True) if self.lead_makes else None
        if plan is None or plan.proposal is None:
            plan = plan_team(context.team, context.agent, self.prior)
        if plan.proposal is None:
            code = plan.feasibility.code or Reason.NO_PLAN
            raise ResolutionError(code, plan.feasibility.reason)
        return Reply(self.prior.serialize(plan.proposal), model_calls=0)
