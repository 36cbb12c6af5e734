"""Construction tasks: a team with private bags of materials, one blueprint, a time limit.

The same agents as a crafting task (``TeamAgent``: a name, a bag, blocked skills), a
blueprint instead of an item goal. Whether the team can build it is judged before any
action (``planning/build.py``); what a file cannot say as a buildable blueprint is refused
when it is read, with the reason (``tasks/blueprint.py``).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import PositiveFloat

from gencoord.prior.prior import Prior
from gencoord.tasks.blueprint import Blueprint, check_blueprint
from gencoord.tasks.team import TaskBase, check_agents


class BuildTask(TaskBase):
    """A construction task: one blueprint the team builds from its bags."""

    task_kind: ClassVar[str] = "construction"
    blueprint: Blueprint
    time_limit_s: PositiveFloat = 1000.0

    def checked(self, prior: Prior, origin: str = "") -> BuildTask:
        return check_build_task(self, prior, origin)


def check_build_task(task: BuildTask, prior: Prior, origin: str = "") -> BuildTask:
    """The task with a state-free blueprint, once every block, item and skill it names is real."""
    where = f"{origin}: task {task.id}" if origin else f"task {task.id}"
    blueprint, notes = check_blueprint(task.blueprint, prior, f"{where}: blueprint")
    agents = check_agents(task.agents, prior, where)
    return task.model_copy(update={"blueprint": blueprint, "agents": agents, "notes": [*task.notes, *notes]})
