"""Team tasks: any number of agents with private inventories, a crafting goal, a world, a time limit.

One validated object whatever the file format (``tasks/team_files.py`` reads gencoord's own
TOML/JSON and MINDcraft's crafting tasks). Every item a task names is checked against the
prior's game data when the task is built: an unknown item is refused with the closest real
name, and a pre-1.13 name with the name it has today.
"""

from __future__ import annotations

import difflib
from functools import cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, model_validator

from gencoord._config import package_text, parse_toml
from gencoord.errors import ConfigError
from gencoord.prior.prior import Prior

AgentName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:/+-]+$")]
"""An agent id that the Short DSL can carry as an atom."""

ANY = "any"
"""A goal holder: the goal holds when some agent holds the items (MINDcraft's test)."""


class TeamAgent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: AgentName
    inventory: dict[str, PositiveInt] = {}
    blocked: list[str] = []  # gencoord skills this agent may not use (resource.obtain, craft.item, ...)


class TeamGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    item: str
    count: PositiveInt = 1
    holder: str = ANY  # "any", an agent's name, or a container of the world


class TeamWorld(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    crafting_table: bool = True  # a placed crafting table every agent can use
    furnace: bool = False  # a furnace every agent can use (plans may smelt; fuel comes from the team)
    resources: list[str] = []  # items agents that may gather can obtain from the world, without limit


class TeamTask(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(min_length=1)]
    agents: Annotated[list[TeamAgent], Field(min_length=1)]
    goal: TeamGoal
    world: TeamWorld = TeamWorld()
    time_limit_s: PositiveFloat = 300.0
    source: Literal["gencoord", "mindcraft"] = "gencoord"
    notes: list[str] = []  # what the import could not model, kept rather than dropped

    @model_validator(mode="after")
    def _names_are_unique(self) -> TeamTask:
        names = [agent.name for agent in self.agents]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"agent names must be unique; repeated: {', '.join(repeated)}")
        holders = {ANY, *names}
        if self.goal.holder not in holders and not self.goal.holder.endswith("chest"):
            raise ValueError(
                f"goal.holder must be 'any', an agent ({', '.join(names)}) or a chest, not {self.goal.holder!r}"
            )
        return self

    def holdings(self) -> dict[str, int]:
        """Everything the team holds between them (what a centralized planner would see)."""
        pooled: dict[str, int] = {}
        for agent in self.agents:
            for item, count in agent.inventory.items():
                pooled[item] = pooled.get(item, 0) + count
        return pooled


@cache
def legacy_names() -> dict[str, str]:
    """Pre-1.13 item names → today's (``data/legacy_items.toml``)."""
    table = parse_toml(package_text("gencoord.tasks", "legacy_items.toml"), "legacy_items.toml", ConfigError)
    return {str(old): str(new) for old, new in table["renamed"].items()}


def check_item(name: str, prior: Prior, where: str) -> None:
    """Refuse a name the game does not know, saying what it is called now or what is closest."""
    if prior.game.is_item(name):
        return
    renamed = legacy_names().get(name)
    if renamed is not None:
        raise ConfigError(
            "LEGACY_ITEM", f"{where}: {name!r} is a pre-1.13 item name; since Minecraft 1.13 it is {renamed!r}"
        )
    close = difflib.get_close_matches(name, list(prior.game.stack_sizes), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError("UNKNOWN_ITEM", f"{where}: unknown item {name!r}{hint}")


def check_task(task: TeamTask, prior: Prior, origin: str = "") -> TeamTask:
    """Every item and skill the task names exists; the task itself is returned.

    ``origin`` (a file) prefixes every message, so a file of many tasks says where.
    """
    where = f"{origin}: task {task.id}" if origin else f"task {task.id}"
    check_item(task.goal.item, prior, f"{where}: goal.item")
    for resource in task.world.resources:
        check_item(resource, prior, f"{where}: world.resources")
    for agent in task.agents:
        for item in agent.inventory:
            check_item(item, prior, f"{where}: agent {agent.name}'s inventory")
        unknown = [skill for skill in agent.blocked if skill not in prior.skills]
        if unknown:
            skills = ", ".join(sorted(prior.skills))
            raise ConfigError(
                "UNKNOWN_SKILL", f"{where}: agent {agent.name} blocks unknown skill {unknown[0]!r}; skills: {skills}"
            )
    return task
