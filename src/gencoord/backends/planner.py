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
from gencoord.tasks.context import LocalContext


class PlannerBackend:
    name = "planner"

    def __init__(self, prior: Prior) -> None:
        self.prior = prior

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply:
        if request.stage is not Stage.TEAM_LEAD or context.team is None:
            raise ConfigError("BACKEND_STAGE", f"the planner composes team proposals, not {request.stage.value}")
        plan = plan_team(context.team, context.agent, self.prior)
        if plan.proposal is None:
            code = plan.feasibility.code or "NO_PLAN"
            raise ResolutionError(code, plan.feasibility.reason)
        return Reply(self.prior.serialize(plan.proposal), model_calls=0)
