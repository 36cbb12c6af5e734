"""Team tasks: any number of agents with private inventories, a crafting goal, a world, a time limit.

One validated object whatever the file format (``tasks/team_files.py`` reads gencoord's own
TOML/JSON and MINDcraft's crafting tasks). Every item a task names is checked against the
prior's game data when the task is built: an unknown item is refused with the closest real
name; a pre-1.13 name is read as the name it has today, and the task's notes say so.
Sizes are bounded before anything is planned: a team, a goal or a bag that no Minecraft
world could hold is refused with the bound it breaks.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Annotated, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, model_validator

from gencoord._config import package_text, parse_toml
from gencoord.errors import ConfigError
from gencoord.prior.loot import default_loot
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.worlds.sim.physics import default_physics

AgentName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:/+-]+$")]
"""An agent id that the Short DSL can carry as an atom."""

ANY = "any"
"""A goal holder: the goal holds when some agent holds the items (MINDcraft's test)."""

MAX_AGENTS = 16
"""Agents in one team: the players our embedded Minecraft server admits (``max-players``)."""

INVENTORY_SLOTS = 36
"""A player's main inventory: a goal or a bag beyond 36 full stacks cannot be held."""

Items = Mapping[str, int]

_LONGEST_NAME = 80
"""Longer than any item name; a longer one is refused before it is compared with every item."""


class TeamAgent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: AgentName
    inventory: dict[str, PositiveInt] = {}
    blocked: list[str] = []  # gencoord skills this agent may not use (resource.obtain, craft.item, ...)
    can_plan: bool = True  # False: it cannot look up how to make the goal, so it does not lead


class TeamGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    item: str
    count: PositiveInt = 1
    holder: str = ANY  # "any", an agent's name, or a container of the world


class TeamWorld(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    crafting_table: bool = True  # a placed crafting table every agent can use
    furnace: bool = False  # a furnace every agent can use (plans may smelt; fuel comes from the team)
    smoker: bool = False  # a smoker beside the furnace: food only, twice as fast
    fuel: dict[str, PositiveInt] = {}  # what fills each furnace's and smoker's fuel slot before the episode
    # items agents may gather, each a resource area: blocks that break by hand, ripe crops, animals
    resources: list[str] = []
    # blocks (or animals) of a resource area; absent: a block area never runs out, a herd has 8
    supply: dict[str, PositiveInt] = {}

    @model_validator(mode="after")
    def _consistent(self) -> TeamWorld:
        if self.smoker and not self.furnace:
            raise ValueError("world.smoker needs world.furnace: the smoker cooks beside the furnace")
        stray = sorted(set(self.supply) - set(self.resources))
        if stray:
            raise ValueError(f"world.supply names {stray[0]!r}, which is not in world.resources")
        return self


class TaskBase(BaseModel):
    """What a task of every kind has: an id, a team of agents with private bags, a time limit, where it came from.

    ``task_kind`` names the kind (``run/kinds.py``'s ``TASK_KINDS``: crafting, cooking,
    construction, or a plugin's) that judges, runs and records it; :meth:`checked` is what
    reading a file asks of every task: the task with every name it uses made real, or a
    ConfigError saying which is not.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_kind: ClassVar[str]
    id: Annotated[str, Field(min_length=1, max_length=200)]
    agents: Annotated[list[TeamAgent], Field(min_length=1, max_length=MAX_AGENTS)]
    time_limit_s: PositiveFloat = 300.0
    source: Literal["gencoord", "mindcraft"] = "gencoord"
    notes: list[str] = []  # what the import could not model, kept rather than dropped

    @model_validator(mode="after")
    def _names_are_unique(self) -> Self:
        unique_names(self.agents)
        return self

    def holdings(self) -> dict[str, int]:
        """Everything the team holds between them (what a centralized planner would see)."""
        return pooled_bags(self.agents)

    def checked(self, prior: Prior, origin: str = "") -> Self:
        raise NotImplementedError


class TeamTask(TaskBase):
    """A crafting team task: agents with private bags, a goal item and holder, the world, a time limit."""

    task_kind: ClassVar[str] = "crafting"
    goal: TeamGoal
    world: TeamWorld = TeamWorld()

    @model_validator(mode="after")
    def _goal_holder_is_known(self) -> TeamTask:
        names = [agent.name for agent in self.agents]
        holders = {ANY, *names}
        if self.goal.holder not in holders and not self.goal.holder.endswith("chest"):
            raise ValueError(
                f"goal.holder must be 'any', an agent ({', '.join(names)}) or a chest, not {self.goal.holder!r}"
            )
        return self

    def goal_met(self, inventories: Mapping[str, Mapping[str, int]], containers: Mapping[str, Items]) -> bool:
        """The task's own success test: some agent (or the named holder) holds the goal count."""
        goal = self.goal
        if goal.holder == ANY:
            return any(items.get(goal.item, 0) >= goal.count for items in inventories.values())
        table = inventories if goal.holder in inventories else containers
        return table.get(goal.holder, {}).get(goal.item, 0) >= goal.count

    def checked(self, prior: Prior, origin: str = "") -> TeamTask:
        return check_task(self, prior, origin)


def pooled_bags(agents: list[TeamAgent]) -> dict[str, int]:
    """Every agent's bag added up."""
    pooled: dict[str, int] = {}
    for agent in agents:
        for item, count in agent.inventory.items():
            pooled[item] = pooled.get(item, 0) + count
    return pooled


@cache
def legacy_names() -> dict[str, str]:
    """Pre-1.13 item names → today's (``data/legacy_items.toml``)."""
    table = parse_toml(package_text("gencoord.tasks", "legacy_items.toml"), "legacy_items.toml", ConfigError)
    return {str(old): str(new) for old, new in table["renamed"].items()}


def check_item(name: str, prior: Prior, where: str) -> None:
    """Refuse a name the game does not know, saying what is closest."""
    if prior.game.is_item(name):
        return
    if len(name) > _LONGEST_NAME:
        raise ConfigError(Reason.UNKNOWN_ITEM, f"{where}: unknown item {name[:40]!r}… ({len(name)} characters)")
    close = difflib.get_close_matches(name, list(prior.game.stack_sizes), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(Reason.UNKNOWN_ITEM, f"{where}: unknown item {name!r}{hint}")


def today(name: str, renamed: dict[str, str], prior: Prior) -> str:
    """A pre-1.13 name as the item is called now (recorded in ``renamed``); any other name as it is."""
    new = legacy_names().get(name)
    if new is None or prior.game.is_item(name):
        return name
    renamed[name] = new
    return new


def renamed_items(items: dict[str, int], renamed: dict[str, str], prior: Prior) -> dict[str, int]:
    merged: dict[str, int] = {}
    for item, count in items.items():
        key = today(item, renamed, prior)
        merged[key] = merged.get(key, 0) + count
    return merged


def modern_names(task: TeamTask, prior: Prior) -> TeamTask:
    """``task`` with every pre-1.13 item name read as today's, each rename in the notes."""
    renamed: dict[str, str] = {}
    goal = task.goal.model_copy(update={"item": today(task.goal.item, renamed, prior)})
    resources = [today(item, renamed, prior) for item in task.world.resources]
    agents = [
        agent.model_copy(update={"inventory": renamed_items(agent.inventory, renamed, prior)}) for agent in task.agents
    ]
    if not renamed:
        return task
    notes = [f"pre-1.13 item name {old!r} read as {new!r}" for old, new in sorted(renamed.items())]
    world = task.world.model_copy(update={"resources": list(dict.fromkeys(resources))})
    return task.model_copy(update={"goal": goal, "world": world, "agents": agents, "notes": [*task.notes, *notes]})


def _stacks(items: dict[str, int], prior: Prior) -> int:
    return sum(-(-count // prior.game.stack_sizes[item]) for item, count in items.items())


def check_task(task: TeamTask, prior: Prior, origin: str = "") -> TeamTask:
    """The task with today's item names, once every item, skill and size it names is real.

    ``origin`` (a file) prefixes every message, so a file of many tasks says where.
    """
    where = f"{origin}: task {task.id}" if origin else f"task {task.id}"
    task = modern_names(task, prior)
    check_item(task.goal.item, prior, f"{where}: goal.item")
    check_world(task.world, prior, where)
    check_agents(task.agents, prior, where)
    most = INVENTORY_SLOTS * prior.game.stack_sizes[task.goal.item]
    if task.goal.count > most:
        raise ConfigError(
            Reason.UNHOLDABLE_GOAL,
            f"{where}: goal.count {task.goal.count} {task.goal.item}: one agent holds at most {most} "
            f"({INVENTORY_SLOTS} stacks of {prior.game.stack_sizes[task.goal.item]})",
        )
    return task


def check_world(world: TeamWorld, prior: Prior, where: str) -> None:
    """Refuse a world that names an item nothing yields, or a fuel no furnace burns."""
    for resource in world.resources:
        check_item(resource, prior, f"{where}: world.resources")
        if gathered_from(resource, prior) is None and hunted_from(resource) is None:
            raise ConfigError(
                Reason.NOT_GATHERABLE,
                f"{where}: world.resources: no block breaks by hand into {resource!r}, no crop yields it and no "
                "animal drops it, so no world can offer it to gather; give it to an agent instead",
            )
    for fuel in world.fuel:
        if fuel not in default_physics().fuel_ticks:
            fuels = ", ".join(sorted(default_physics().fuel_ticks))
            raise ConfigError(Reason.NOT_FUEL, f"{where}: world.fuel: {fuel!r} is not a furnace fuel ({fuels})")


def unique_names(agents: Sequence[TeamAgent]) -> list[str]:
    """The agents' names, or a ValueError (pydantic's validation message) naming each repeated one."""
    names = [agent.name for agent in agents]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"agent names must be unique; repeated: {', '.join(repeated)}")
    return names


def check_agents(agents: list[TeamAgent], prior: Prior, where: str) -> list[TeamAgent]:
    """``agents`` once every item and skill they name is real and every bag fits a player's inventory."""
    for agent in agents:
        for item in agent.inventory:
            check_item(item, prior, f"{where}: agent {agent.name}'s inventory")
        unknown = [skill for skill in agent.blocked if skill not in prior.skills]
        if unknown:
            skills = ", ".join(sorted(prior.skills))
            raise ConfigError(
                Reason.UNKNOWN_SKILL,
                f"{where}: agent {agent.name} blocks unknown skill {unknown[0]!r}; skills: {skills}",
            )
        if _stacks(agent.inventory, prior) > INVENTORY_SLOTS:
            raise ConfigError(
                Reason.INVENTORY_OVERFLOW,
                f"{where}: agent {agent.name}'s inventory needs {_stacks(agent.inventory, prior)} slots; "
                f"a player has {INVENTORY_SLOTS}",
            )
    return agents


def gathered_from(item: str, prior: Prior) -> str | None:
    """A block that drops exactly ``item`` when broken by hand, preferring the block of the same name;
    else the ripe crop whose harvest yields it (wheat, beetroots)."""
    blocks = [
        name
        for name in prior.game.sources_of(item)
        if prior.game.blocks[name].harvest_tools is None and prior.game.blocks[name].drops == (item,)
    ]
    if item in blocks:
        return item
    return blocks[0] if blocks else default_loot().crop_for(item)


def hunted_from(item: str) -> str | None:
    """The animal whose drops are the surest way to ``item`` (None: no animal drops it)."""
    return default_loot().mob_for(item)
