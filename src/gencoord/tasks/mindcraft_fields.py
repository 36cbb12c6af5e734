"""The fields of MINDcraft's task entries, each read as MINDcraft's own code reads it, with a stable code when not.

``src/agent/tasks/tasks.js`` reads a target as a name, a list or a map, a count as a number or
a map, item names case-blind; ``data/mindcraft.toml`` maps blocked commands onto gencoord's
skills. :mod:`gencoord.tasks.mindcraft_format` builds a task of each kind from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gencoord.errors import ConfigError
from gencoord.reasons import Reason
from gencoord.tasks.mindcraft_data import mindcraft_table
from gencoord.tasks.team import MAX_AGENTS


@dataclass(frozen=True, slots=True)
class Bars:
    """What an agent's blocked commands mean here."""

    skills: list[str]
    plans: bool
    unmodelled: list[str]
    mapped: list[str]  # "!craftRecipe → craft.item", for the task's notes


def blocked_commands(where: str, commands: Any) -> Bars:
    if not isinstance(commands, list) or not all(isinstance(command, str) for command in commands):
        raise ConfigError(Reason.BAD_TASK, f"{where}: blocked_actions must map agent indexes to lists of command names")
    table = mindcraft_table()
    unmodelled = {command for group in table["unmodelled"].values() for command in group}
    skills: list[str] = []
    plans, ignored, mapped = True, [], []
    for command in commands:
        if command in table["blocked_commands"]:
            skills += [skill for skill in table["blocked_commands"][command] if skill not in skills]
            mapped.append(f"{command} → {', '.join(table['blocked_commands'][command])}")
        elif command in table["knowledge_commands"]:
            plans = False
        elif command in unmodelled:
            ignored.append(command)
        else:
            known = len(table["blocked_commands"]) + len(table["knowledge_commands"]) + len(unmodelled)
            raise ConfigError(
                Reason.UNKNOWN_COMMAND,
                f"{where}: {command[:60]!r} is not a MINDcraft command (gencoord knows all {known} of "
                "src/agent/commands; data/mindcraft.toml lists them)",
            )
    return Bars(skills, plans, ignored, mapped)


def index_map(where: str, field: str, value: Any) -> dict[int, Any]:
    """A map keyed by agent index ("0", "1", ...), as MINDcraft's files key them."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(re.fullmatch(r"[0-9]{1,3}", str(key)) for key in value):
        raise ConfigError(Reason.BAD_TASK, f'{where}: {field} must map agent indexes ("0", "1", ...) to values')
    return {int(key): item for key, item in value.items()}


def whole_count(where: str, field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(Reason.BAD_COUNT, f"{where}: {field} must be a whole number of at least 1, not {value!r}")
    return value


def inventory(where: str, value: Any) -> dict[str, int]:
    """An agent's bag, names lower-cased as MINDcraft's /give does; zero counts are nothing."""
    if not isinstance(value, dict):
        raise ConfigError(Reason.BAD_TASK, f"{where}: an inventory maps item names to counts")
    bag: dict[str, int] = {}
    for item, count in value.items():
        if isinstance(count, int) and not isinstance(count, bool) and count == 0:
            continue
        name = str(item).lower()
        bag[name] = bag.get(name, 0) + whole_count(where, f"count of {str(item)[:40]!r}", count)
    return bag


def target_items(where: str, raw: dict[str, Any], several: bool = False) -> Any:
    """(item, count), normalized as MINDcraft's checkItemForSingleAgent does; with ``several``,
    every target item → its count.

    A target is a name, a list of names or a map of counts; a count is absent (1), a
    number for every target item, or a map by item.
    """
    target, amount = raw.get("target"), raw.get("number_of_target")
    if isinstance(target, str):
        names = [target]
    elif isinstance(target, list) and all(isinstance(item, str) for item in target):
        names = list(dict.fromkeys(target))
    elif isinstance(target, dict):
        names = [str(item) for item in target]
    else:
        raise ConfigError(Reason.BAD_TASK, f"{where}: target must be an item name, a list of names or a map of counts")
    if several:
        if not names or not all(names):
            raise ConfigError(Reason.BAD_TASK, f"{where}: target names no item")
        return {
            name.lower(): whole_count(where, "number_of_target", target_amount(target, amount, name)) for name in names
        }
    if len(names) != 1:
        raise ConfigError(
            Reason.UNSUPPORTED_TARGET, f"{where}: {len(names)} target items; one target item per task is supported"
        )
    (name,) = names
    if not name:
        raise ConfigError(Reason.BAD_TASK, f"{where}: target names no item")
    return name.lower(), whole_count(where, "number_of_target", target_amount(target, amount, name))


def target_amount(target: Any, amount: Any, name: str) -> Any:
    if isinstance(target, dict):
        return target[name]
    if isinstance(amount, dict):
        return amount.get(name)
    return 1 if amount is None else amount


_READ = frozenset(
    {
        "agent_count",
        "initial_inventory",
        "target",
        "number_of_target",
        "blocked_actions",
        "timeout",
        "requires_crafting_table",
        "requires_ctable",
        "missing_items",
        "goal",
        "conversation",
        "type",
        "depth",
        "max_depth",
        "human_count",
        "usernames",
        "restrict_to_inventory",
        "task_id",
    }
)


def task_notes(raw: dict[str, Any]) -> list[str]:
    """What the task says that gencoord does not act on, kept with the task rather than dropped."""
    notes: list[str] = []
    if raw.get("requires_crafting_table", raw.get("requires_ctable")):
        notes.append("MINDcraft marks this task as needing a crafting table: one must be held or crafted, then placed")
    if raw.get("missing_items"):
        missing = raw["missing_items"] if isinstance(raw["missing_items"], list) else [raw["missing_items"]]
        notes.append(f"MINDcraft lists as missing (to be gathered or made): {', '.join(map(str, missing))[:200]}")
    if "type" in raw and raw["type"] != "techtree":
        notes.append(f"MINDcraft task type {str(raw['type'])[:40]!r}, read as a crafting (techtree) task")
    if isinstance(raw.get("goal"), str | dict) or isinstance(raw.get("conversation"), str):
        notes.append("MINDcraft's goal and conversation texts are prompts for LLM agents; the goal is read from target")
    if "depth" in raw or "max_depth" in raw:
        notes.append(f"MINDcraft recipe depth {raw.get('depth', '?')} of {raw.get('max_depth', '?')}")
    if raw.get("human_count"):
        notes.append(f"MINDcraft asks for {raw['human_count']} human players, which gencoord does not seat")
    if raw.get("restrict_to_inventory"):
        notes.append("MINDcraft's restrict_to_inventory: every agent works from its bag only (no gathering)")
    notes += unread_fields(raw, _READ)
    notes.append(
        "world: a survival world's natural blocks that break by hand, as resource areas that never run out; "
        "nothing is stocked (no mob drops, no ores)"
    )
    return notes


def team_size(where: str, raw: dict[str, Any], indexes: list[int]) -> int:
    count = raw.get("agent_count", max(indexes, default=0) + 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ConfigError(Reason.BAD_TASK, f"{where}: agent_count must be a whole number of at least 1, not {count!r}")
    if count > MAX_AGENTS:
        raise ConfigError(
            Reason.TOO_MANY_AGENTS, f"{where}: agent_count {count}; a team has at most {MAX_AGENTS} agents"
        )
    if any(index >= count for index in indexes):
        raise ConfigError(Reason.BAD_TASK, f"{where}: agent_count {count} does not cover agents {indexes}")
    return count


def timeout_s(where: str, raw: dict[str, Any], default: int) -> float:
    timeout = raw.get("timeout", default)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < 10**7:
        raise ConfigError(Reason.BAD_TASK, f"{where}: timeout must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


def team_agents(where: str, raw: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    """A cooking or construction task's agents: bags and blocked skills by index, the unmodelled noted."""
    inventories = index_map(where, "initial_inventory", raw.get("initial_inventory"))
    blocked = index_map(where, "blocked_actions", raw.get("blocked_actions"))
    agents = []
    for index in range(team_size(where, raw, sorted({*inventories, *blocked}))):
        name = f"{agent_prefix()}{index}"
        bars = blocked_commands(f"{where}: agent {index}", blocked.get(index, []))
        if bars.unmodelled:
            notes.append(
                f"{name}: blocked commands with no gencoord analogue, not modelled: {', '.join(bars.unmodelled)}"
            )
        bag = inventory(f"{where}: agent {index}", inventories.get(index) or {})
        agents.append({"name": name, "inventory": bag, "blocked": bars.skills, "can_plan": bars.plans})
    return agents


def agent_prefix() -> str:
    return str(mindcraft_table()["agent_prefix"])


def unread_fields(raw: dict[str, Any], read: frozenset[str]) -> list[str]:
    """A note naming the task's fields gencoord does not read (none when it reads them all): kept, not dropped."""
    unread = sorted(str(key)[:40] for key in raw if key not in read)
    return [f"fields gencoord does not read: {', '.join(unread)}"] if unread else []
