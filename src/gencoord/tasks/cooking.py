"""Cooking tasks: goals of several items, a goal per agent, and recipes that only some agents know.

One validated object whatever the file format (``tasks/team_files.py`` reads gencoord's own
TOML/JSON and MINDcraft's cooking JSON). A goal is a set of items that one holder must hold
at the same moment: MINDcraft's test, where ``holder = "any"`` means some one agent holds
every item at once. A task may have a goal per agent (MINDcraft's hells kitchen), and then
``own_work`` says each holder makes its own goal: teammates may tell it how and hand over
what they hold, never collect, cook or craft for it.

Who knows which recipe is part of the task (``recipes``): an agent that does not know how
to make an item must learn it from a teammate who does, over the wire.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from gencoord.errors import ConfigError
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.tasks.team import (
    ANY,
    INVENTORY_SLOTS,
    MAX_AGENTS,
    TaskBase,
    TeamWorld,
    check_agents,
    check_item,
    check_world,
    renamed_items,
    today,
)

MAX_GOAL_ITEMS = 16
"""Distinct items in one goal: more than any cooking task asks, far less than an inventory holds."""


class CookingGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    items: Annotated[dict[str, PositiveInt], Field(min_length=1, max_length=MAX_GOAL_ITEMS)]
    holder: str = ANY  # "any" (one agent holds every item at once), an agent's name, or a chest

    def met(self, inventories: Mapping[str, Mapping[str, int]], containers: Mapping[str, Mapping[str, int]]) -> bool:
        def holds(bag: Mapping[str, int]) -> bool:
            return all(bag.get(item, 0) >= count for item, count in self.items.items())

        if self.holder == ANY:
            return any(holds(bag) for bag in inventories.values())
        table = inventories if self.holder in inventories else containers
        return holds(table.get(self.holder, {}))

    def describe(self) -> str:
        items = ", ".join(f"{count} {item}" for item, count in sorted(self.items.items()))
        return f"{items} held by {'one agent' if self.holder == ANY else self.holder}"


class CookingTask(TaskBase):
    """A cooking task: dishes to hold at once, recipes some agents know, MINDcraft's cooking world."""

    task_kind: ClassVar[str] = "cooking"
    goals: Annotated[list[CookingGoal], Field(min_length=1, max_length=MAX_AGENTS)]
    world: TeamWorld
    # goal item → the agents that know how to make it; an item not listed is known to everyone
    recipes: dict[str, list[str]] = Field(default_factory=dict)
    own_work: bool = False  # each goal's holder makes it; teammates only teach and hand over what they hold
    kind: Literal["cooking"] = "cooking"  # a file may say so (read before the task kinds were registered)

    @model_validator(mode="after")
    def _consistent(self) -> CookingTask:
        names = [agent.name for agent in self.agents]
        for goal in self.goals:
            if goal.holder not in (ANY, *names) and not goal.holder.endswith("chest"):
                raise ValueError(f"a goal's holder must be 'any', an agent ({', '.join(names)}) or a chest")
        for item, knowers in self.recipes.items():
            strangers = sorted(set(knowers) - set(names))
            if strangers:
                raise ValueError(f"recipes.{item} names {strangers[0]!r}, who is not an agent of this task")
        if self.own_work and any(goal.holder not in names for goal in self.goals):
            raise ValueError("own_work needs every goal held by a named agent: the one who makes it")
        return self

    def goal_met(
        self, inventories: Mapping[str, Mapping[str, int]], containers: Mapping[str, Mapping[str, int]]
    ) -> bool:
        """The task's own success test: every goal holds at once."""
        return all(goal.met(inventories, containers) for goal in self.goals)

    def knows(self, agent: str, item: str) -> bool:
        """Whether ``agent`` knows how to make ``item`` (everyone does, unless ``recipes`` says who)."""
        return item not in self.recipes or agent in self.recipes[item]

    def goal_items(self) -> list[str]:
        return sorted({item for goal in self.goals for item in goal.items})

    def checked(self, prior: Prior, origin: str = "") -> CookingTask:
        return check_cooking_task(self, prior, origin)


def check_cooking_task(task: CookingTask, prior: Prior, origin: str = "") -> CookingTask:
    """The task with today's item names, once every item, skill, fuel and size it names is real."""
    where = f"{origin}: task {task.id}" if origin else f"task {task.id}"
    renamed: dict[str, str] = {}
    goals = [goal.model_copy(update={"items": renamed_items(goal.items, renamed, prior)}) for goal in task.goals]
    agents = [a.model_copy(update={"inventory": renamed_items(a.inventory, renamed, prior)}) for a in task.agents]
    recipes = {today(item, renamed, prior): knowers for item, knowers in task.recipes.items()}
    notes = [*task.notes, *(f"pre-1.13 item name {old!r} read as {new!r}" for old, new in sorted(renamed.items()))]
    task = task.model_copy(update={"goals": goals, "agents": agents, "recipes": recipes, "notes": notes})
    for goal in task.goals:
        for item, count in goal.items.items():
            check_item(item, prior, f"{where}: goal")
            most = INVENTORY_SLOTS * prior.game.stack_sizes[item]
            if count > most:
                raise ConfigError(
                    Reason.UNHOLDABLE_GOAL, f"{where}: goal of {count} {item}: one holder holds at most {most}"
                )
    for item in task.recipes:
        check_item(item, prior, f"{where}: recipes")
    check_world(task.world, prior, where)
    check_agents(task.agents, prior, where)
    return task
