"""Construction tasks: a team with private bags of materials, one blueprint, a time limit.

The same agents as a crafting task (``TeamAgent``: a name, a bag, blocked skills), a
blueprint instead of an item goal. Whether the team can build it is judged before any
action (``planning/build.py``); what a file cannot say as a buildable blueprint is refused
when it is read, with the reason (``tasks/blueprint.py``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, model_validator

from gencoord.prior.prior import Prior
from gencoord.tasks.blueprint import Blueprint, check_blueprint
from gencoord.tasks.team import MAX_AGENTS, TeamAgent, check_agents, pooled_bags, unique_names


class BuildTask(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(min_length=1, max_length=200)]
    agents: Annotated[list[TeamAgent], Field(min_length=1, max_length=MAX_AGENTS)]
    blueprint: Blueprint
    time_limit_s: PositiveFloat = 1000.0
    source: Literal["gencoord", "mindcraft"] = "gencoord"
    notes: list[str] = []

    @model_validator(mode="after")
    def _names_are_unique(self) -> BuildTask:
        unique_names(self.agents)
        return self

    def holdings(self) -> dict[str, int]:
        return pooled_bags(self.agents)


def check_build_task(task: BuildTask, prior: Prior, origin: str = "") -> BuildTask:
    """The task with a state-free blueprint, once every block, item and skill it names is real."""
    where = f"{origin}: task {task.id}" if origin else f"task {task.id}"
    blueprint, notes = check_blueprint(task.blueprint, prior, f"{where}: blueprint")
    agents = check_agents(task.agents, prior, where)
    return task.model_copy(update={"blueprint": blueprint, "agents": agents, "notes": [*task.notes, *notes]})
