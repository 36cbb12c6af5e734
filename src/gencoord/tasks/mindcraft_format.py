"""MINDcraft's task files (crafting, cooking, construction JSON), read as MINDcraft's own code reads them.

``src/agent/tasks/tasks.js``: a target is a name, a list or a map, a count a number or a map,
item names case-blind; a task's ``type`` says cooking or construction, and
``data/mindcraft.toml`` says how its commands and worlds map onto gencoord.
"""

from __future__ import annotations

import re
from typing import Any

from gencoord.errors import ConfigError
from gencoord.reasons import Reason
from gencoord.tasks.build import BuildTask
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.mindcraft_data import cooking_world, mindcraft_table
from gencoord.tasks.mindcraft_fields import (
    agent_prefix,
    blocked_commands,
    index_map,
    inventory,
    target_items,
    task_notes,
    team_agents,
    team_size,
    timeout_s,
    unread_fields,
)
from gencoord.tasks.task_format import AnyTask, TaskFileFormat, an_object, validated_task
from gencoord.tasks.team import ANY

_MINDCRAFT_KEYS = frozenset({"agent_count", "initial_inventory", "target", "number_of_target", "blocked_actions"})


class MindcraftFormat(TaskFileFormat):
    name = "mindcraft"
    description = "MINDcraft's (task id → agent_count, initial_inventory, target, ...)"

    def detects(self, document: Any) -> bool:
        return (
            isinstance(document, dict)
            and bool(document)
            and all(isinstance(task, dict) and _MINDCRAFT_KEYS & set(task) for task in document.values())
        )

    def entries(self, document: Any, origin: str) -> list[tuple[str, Any]]:
        if not isinstance(document, dict) or not any(isinstance(raw, dict) for raw in document.values()):
            raise ConfigError(Reason.BAD_TASK_FILE, f"{origin}: MINDcraft's format maps task ids to task objects")
        return [(str(task_id), raw) for task_id, raw in document.items()]

    def task(self, task_id: str, raw: Any, origin: str) -> AnyTask:
        return from_mindcraft(task_id, an_object(task_id, raw, origin), origin)


MINDCRAFT = MindcraftFormat()


_READ_BUILD = frozenset(
    {
        "agent_count",
        "initial_inventory",
        "blocked_actions",
        "timeout",
        "blueprint",
        "goal",
        "conversation",
        "type",
        "task_id",
        "usernames",
    }
)


def _build_from_mindcraft(task_id: str, raw: dict[str, Any], origin: str) -> BuildTask:
    """One MINDcraft construction task (success: every blueprint cell as the blueprint says)."""
    where = f"{origin}: task {task_id}"
    notes = ["MINDcraft's goal and conversation texts are prompts for LLM agents; the goal is read from blueprint"]
    agents = team_agents(where, raw, notes)
    notes += unread_fields(raw, _READ_BUILD)
    data = {
        "id": task_id,
        "agents": agents,
        "blueprint": raw.get("blueprint"),
        "time_limit_s": timeout_s(where, raw, 1000),
        "source": "mindcraft",
        "notes": notes,
    }
    task = validated_task(data, origin)
    assert isinstance(task, BuildTask)
    return task


_READ_COOKING = frozenset(
    {
        "agent_count",
        "initial_inventory",
        "blocked_actions",
        "target",
        "number_of_target",
        "timeout",
        "recipes",
        "blocked_access_to_recipe",
        "goal",
        "conversation",
        "type",
        "task_type",
        "difficulty",
        "difficulty_metrics",
        "task_id",
    }
)


def _cooking_goals(where: str, task_id: str, raw: dict[str, Any], count: int) -> tuple[list[dict[str, Any]], bool]:
    """The goals, read as ``tasks.js`` checks them, and whether each agent makes its own (hells kitchen).

    A hells-kitchen task (its id ends so, its target a list of two) gives agent i the goal
    ``target[i]``; any other target is one goal held by one agent: a map of counts, or names
    (a string or a list) with ``number_of_target`` as for crafting.
    """
    target = raw.get("target")
    if task_id.endswith("hells_kitchen") and isinstance(target, list) and len(target) == 2:
        if count < 2:
            raise ConfigError(Reason.BAD_TASK, f"{where}: a hells-kitchen target of two needs two agents")
        goals = [
            {"items": target_items(where, {"target": item}, several=True), "holder": f"{agent_prefix()}{i}"}
            for i, item in enumerate(target)
        ]
        return goals, True
    return [{"items": target_items(where, raw, several=True), "holder": ANY}], False


def _cooking_from_mindcraft(task_id: str, raw: dict[str, Any], origin: str) -> CookingTask:
    """One MINDcraft cooking task (success: the goal items held by one agent at once, or each agent's own)."""
    where = f"{origin}: task {task_id}"
    notes = [
        "MINDcraft's goal, conversation and recipe texts are prompts for LLM agents; goals are read from target, "
        "recipes from the game's data"
    ]
    agents = team_agents(where, raw, notes)
    names = [str(agent["name"]) for agent in agents]
    count = len(names)
    goals, own_work = _cooking_goals(where, task_id, raw, count)
    barred = raw.get("blocked_access_to_recipe") or []
    if not isinstance(barred, list) or not all(re.fullmatch(r"[0-9]{1,3}", str(i)) and int(i) < count for i in barred):
        raise ConfigError(Reason.BAD_TASK, f"{where}: blocked_access_to_recipe must list agent indexes below {count}")
    unaware = {names[int(i)] for i in barred}
    items = sorted({item for goal in goals for item in goal["items"]})
    recipes: dict[str, list[str]] = {}
    for item in items:
        makers = {goal["holder"] for goal in goals if item in goal["items"]} if own_work else set()
        knowers = [name for name in names if name not in unaware and name not in makers]
        if len(knowers) < len(names):
            recipes[item] = knowers
    if unaware:
        notes.append(f"{', '.join(sorted(unaware))}: no recipe in its goal text (blocked_access_to_recipe)")
    if own_work:
        notes.append(
            "hells kitchen: each agent makes its own goal and knows only its teammate's recipe; a teammate may hand "
            "over what it holds, never collect, cook or craft for the other"
        )
    if isinstance(raw.get("difficulty"), str):
        notes.append(f"MINDcraft difficulty {raw['difficulty'][:40]!r}")
    notes += unread_fields(raw, _READ_COOKING)
    notes.append(
        "world: MINDcraft's cooking field (ripe crops, mushrooms, pumpkins, sugar cane, 8 of each animal, a house "
        "with a crafting table, a fuelled furnace and smoker), with oak trees and dandelions beyond it"
    )
    data = {
        "id": task_id,
        "agents": agents,
        "goals": goals,
        "world": cooking_world(),
        "recipes": recipes,
        "own_work": own_work,
        "time_limit_s": timeout_s(where, raw, 300),
        "source": "mindcraft",
        "notes": notes,
    }
    task = validated_task(data, origin)
    assert isinstance(task, CookingTask)
    return task


def from_mindcraft(task_id: str, raw: dict[str, Any], origin: str) -> AnyTask:
    """One MINDcraft task: a construction task as a BuildTask, a cooking task as a CookingTask, any
    other as a crafting TeamTask (success: some agent holds the target count)."""
    if raw.get("type") == "construction" or "blueprint" in raw:
        return _build_from_mindcraft(task_id, raw, origin)
    if raw.get("type") == "cooking":
        return _cooking_from_mindcraft(task_id, raw, origin)
    table = mindcraft_table()
    where = f"{origin}: task {task_id}"
    inventories = index_map(where, "initial_inventory", raw.get("initial_inventory"))
    blocked = index_map(where, "blocked_actions", raw.get("blocked_actions"))
    count = team_size(where, raw, sorted({*inventories, *blocked}))
    target, amount = target_items(where, raw)
    notes = task_notes(raw)
    agents = []
    restricted = bool(raw.get("restrict_to_inventory"))
    planners = 0
    for index in range(count):
        name = f"{table['agent_prefix']}{index}"
        bars = blocked_commands(f"{where}: agent {index}", blocked.get(index, []))
        bag = inventory(f"{where}: agent {index}", inventories.get(index) or {})
        skills = bars.skills + (["resource.obtain"] if restricted and "resource.obtain" not in bars.skills else [])
        if bars.mapped:
            notes.append(f"{name}: MINDcraft's blocked commands bar gencoord skills: {'; '.join(bars.mapped)}")
        if bars.unmodelled:
            ignored = ", ".join(bars.unmodelled)
            notes.append(f"{name}: blocked commands with no gencoord analogue, not modelled: {ignored}")
        if not bars.plans:
            notes.append(f"{name} may not use !getCraftingPlan: it cannot look the plan up, so it does not lead")
        planners += bars.plans
        agents.append({"name": name, "inventory": bag, "blocked": skills, "can_plan": bars.plans})
    if not planners:
        notes.append("no agent may look the plan up: agent_0 leads from the shared recipe prior")
    timeout = timeout_s(where, raw, 300)
    data = {
        "id": task_id,
        "agents": agents,
        "goal": {"item": target, "count": amount, "holder": ANY},
        "world": {"crafting_table": False, "resources": [] if restricted else table["world"]["resources"]},
        "time_limit_s": timeout,
        "source": "mindcraft",
        "notes": notes,
    }
    return validated_task(data, origin)
