"""Reading team-task files: gencoord's own TOML/JSON, and MINDcraft's crafting-task JSON.

gencoord's format is a list of tasks (``[[tasks]]`` in TOML, ``{"tasks": [...]}`` in JSON),
each the fields of :class:`TeamTask`. MINDcraft's is a map of task id → task, read as its
documentation defines it (``data/mindcraft.toml`` says how its commands and worlds map
onto gencoord). Both give the same validated objects, items checked against the prior.
"""

from __future__ import annotations

import json
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gencoord._config import package_text, parse_toml, read_text, validation_message
from gencoord.errors import ConfigError
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.tasks.team import ANY, TeamTask, check_task


class TaskFormat(StrEnum):
    AUTO = "auto"
    GENCOORD = "gencoord"
    MINDCRAFT = "mindcraft"


_MINDCRAFT_KEYS = frozenset({"agent_count", "initial_inventory", "target", "number_of_target", "blocked_actions"})


@cache
def _mindcraft() -> dict[str, Any]:
    return parse_toml(package_text("gencoord.tasks", "mindcraft.toml"), "mindcraft.toml", ConfigError)


def _document(path: Path) -> Any:
    text = read_text(path, ConfigError)
    if path.suffix == ".toml":
        return parse_toml(text, str(path), ConfigError)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ConfigError("INVALID_JSON", f"{path}: not JSON ({exc})") from None


def detect_format(document: Any, origin: str) -> TaskFormat:
    if isinstance(document, dict) and isinstance(document.get("tasks"), list):
        return TaskFormat.GENCOORD
    if (
        isinstance(document, dict)
        and document
        and all(isinstance(task, dict) and _MINDCRAFT_KEYS & set(task) for task in document.values())
    ):
        return TaskFormat.MINDCRAFT
    raise ConfigError(
        "UNKNOWN_TASK_FORMAT",
        f"{origin}: neither gencoord's format (a 'tasks' list) nor MINDcraft's (task id → agent_count, "
        "initial_inventory, target, ...); pass --format to say which",
    )


def _validated(data: Any, origin: str) -> TeamTask:
    try:
        return TeamTask.model_validate(data)
    except ValidationError as exc:
        task = data.get("id", "?") if isinstance(data, dict) else "?"
        raise ConfigError("BAD_TASK", f"{origin}: task {task}: {validation_message(exc)}") from None


def _blocked_skills(task_id: str, commands: Any, origin: str) -> tuple[list[str], list[str]]:
    """(gencoord skills barred, notes on commands gencoord does not model)."""
    if not isinstance(commands, list):
        raise ConfigError("BAD_TASK", f"{origin}: task {task_id}: blocked_actions lists must be lists of commands")
    table = _mindcraft()
    skills: list[str] = []
    unmodelled: list[str] = []
    for command in commands:
        if command in table["blocked_commands"]:
            skills += [skill for skill in table["blocked_commands"][command] if skill not in skills]
        elif command in table["unmodelled"]["commands"]:
            unmodelled.append(str(command))
        else:
            known = ", ".join([*table["blocked_commands"], *table["unmodelled"]["commands"]])
            raise ConfigError(
                "UNKNOWN_COMMAND", f"{origin}: task {task_id}: unknown MINDcraft command {command!r}; known: {known}"
            )
    return skills, unmodelled


def from_mindcraft(task_id: str, raw: dict[str, Any], origin: str) -> TeamTask:
    """One MINDcraft crafting task as a TeamTask (success: some agent holds the target count)."""
    table = _mindcraft()
    inventories = raw.get("initial_inventory") or {}
    blocked = raw.get("blocked_actions") or {}
    if not isinstance(inventories, dict) or not isinstance(blocked, dict):
        raise ConfigError(
            "BAD_TASK", f"{origin}: task {task_id}: initial_inventory and blocked_actions are maps by agent index"
        )
    indexes = [int(key) for key in (*inventories, *blocked) if str(key).isdigit()]
    count = raw.get("agent_count", max(indexes, default=0) + 1)
    if not isinstance(count, int) or count < 1 or any(index >= count for index in indexes):
        raise ConfigError(
            "BAD_TASK", f"{origin}: task {task_id}: agent_count {count!r} does not cover agents {sorted(set(indexes))}"
        )
    target, amount = raw.get("target"), raw.get("number_of_target", 1)
    if isinstance(target, dict):
        if len(target) != 1:
            raise ConfigError(
                "UNSUPPORTED_TARGET",
                f"{origin}: task {task_id}: {len(target)} target items; one target item per task is supported",
            )
        ((target, amount),) = target.items()
    notes: list[str] = []
    agents = []
    for index in range(count):
        skills, unmodelled = _blocked_skills(task_id, blocked.get(str(index), []), origin)
        name = f"{table['agent_prefix']}{index}"
        if unmodelled:
            notes.append(f"{name}: blocked commands with no gencoord skill, not modelled: {', '.join(unmodelled)}")
        agents.append({"name": name, "inventory": inventories.get(str(index)) or {}, "blocked": skills})
    if raw.get("requires_crafting_table", raw.get("requires_ctable")):
        notes.append("MINDcraft marks this task as needing a crafting table: one must be held or crafted, then placed")
    if raw.get("missing_items"):
        notes.append(f"MINDcraft lists as missing: {', '.join(map(str, raw['missing_items']))}")
    data = {
        "id": task_id,
        "agents": agents,
        "goal": {"item": target, "count": amount, "holder": ANY},
        "world": {"crafting_table": False, "resources": table["world"]["resources"]},
        "time_limit_s": raw.get("timeout", 300),
        "source": "mindcraft",
        "notes": notes,
    }
    return _validated(data, origin)


def load_team_tasks(path: Path, fmt: TaskFormat = TaskFormat.AUTO, prior: Prior | None = None) -> list[TeamTask]:
    """Every task in ``path``, validated, with every item checked against ``prior``'s game data."""
    prior = prior or default_prior()
    origin = str(path)
    document = _document(path)
    chosen = detect_format(document, origin) if fmt is TaskFormat.AUTO else fmt
    if chosen is TaskFormat.GENCOORD:
        if not isinstance(document, dict) or not isinstance(document.get("tasks"), list):
            raise ConfigError("BAD_TASK_FILE", f"{origin}: gencoord's format is a 'tasks' list")
        tasks = [_validated(task, origin) for task in document["tasks"]]
    else:
        if not isinstance(document, dict):
            raise ConfigError("BAD_TASK_FILE", f"{origin}: MINDcraft's format maps task ids to tasks")
        tasks = []
        for task_id, raw in document.items():
            if not isinstance(raw, dict):
                raise ConfigError("BAD_TASK", f"{origin}: task {task_id} is not an object")
            tasks.append(from_mindcraft(str(task_id), raw, origin))
    ids = [task.id for task in tasks]
    repeated = sorted({task_id for task_id in ids if ids.count(task_id) > 1})
    if repeated:
        raise ConfigError("DUPLICATE_TASK", f"{origin}: task ids repeat: {', '.join(repeated)}")
    return [check_task(task, prior, origin) for task in tasks]
