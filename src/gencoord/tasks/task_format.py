"""What every task-file format shares: the tasks a file holds, the plugin base, and gencoord's own validation.

A format turns a file's entries into gencoord's task fields; :func:`validated_task` then
makes them the validated task of their kind (crafting, cooking or construction), whichever
format they came from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from gencoord._config import parse_toml, read_text, validation_message
from gencoord.errors import ConfigError
from gencoord.reasons import Reason
from gencoord.tasks.blueprint import Blueprint, from_layers
from gencoord.tasks.build import BuildTask
from gencoord.tasks.cooking import CookingTask
from gencoord.tasks.mindcraft_data import cooking_world
from gencoord.tasks.team import TeamTask

AnyTask = TeamTask | BuildTask | CookingTask
"""What a task file holds: a crafting, a construction or a cooking task."""


def read_document(path: Path) -> Any:
    text = read_text(path, ConfigError)
    if path.suffix == ".toml":
        return parse_toml(text, str(path), ConfigError)
    try:
        return json.loads(text)
    except RecursionError:
        raise ConfigError(Reason.INVALID_JSON, f"{path}: nested too deeply to be a task file") from None
    except ValueError as exc:
        raise ConfigError(Reason.INVALID_JSON, f"{path}: not JSON ({exc})") from None


class TaskFileFormat:
    """A format of task files: how a file is read, told apart, split into tasks, and one task built.

    ``read`` parses JSON or TOML by default; a format of another syntax overrides it (and,
    told by nothing, is chosen by name with ``--format``). ``task`` raises a ConfigError (or a
    pydantic ValidationError) for a task that cannot be given as written: that task is refused
    alone.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    """What its files look like, for the message that lists the formats when none fits."""

    def read(self, path: Path) -> Any:
        return read_document(path)

    def detects(self, document: Any) -> bool:
        """Whether a document read as JSON or TOML is in this format (auto-detection)."""
        return False

    def entries(self, document: Any, origin: str) -> list[tuple[str, Any]]:
        """(task id, raw task) for every task of the document; a ConfigError when it holds none as this format."""
        raise NotImplementedError

    def task(self, task_id: str, raw: Any, origin: str) -> AnyTask:
        raise NotImplementedError


def an_object(task_id: str, raw: Any, origin: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ConfigError(Reason.BAD_TASK, f"{origin}: task {task_id} is not an object")
    return raw


def validated_task(data: Any, origin: str) -> AnyTask:
    try:
        if isinstance(data, dict) and "blueprint" in data:
            return BuildTask.model_validate({**data, "blueprint": _blueprint(data["blueprint"], origin, data)})
        if isinstance(data, dict) and "goals" in data:
            return CookingTask.model_validate({"world": cooking_world(), **data})
        return TeamTask.model_validate(data)
    except ValidationError as exc:
        task = data.get("id", "?") if isinstance(data, dict) else "?"
        raise ConfigError(Reason.BAD_TASK, f"{origin}: task {task}: {validation_message(exc)}") from None


def _blueprint(raw: Any, origin: str, task: dict[str, Any]) -> Any:
    """A blueprint in either shape: MINDcraft's levels as they are, gencoord's compact layers expanded."""
    if not isinstance(raw, dict) or "layers" not in raw:
        return raw
    where = f"{origin}: task {task.get('id', '?')}: blueprint"
    compact = {key: raw.get(key) for key in ("origin", "key", "layers")}
    extra = sorted(set(raw) - set(compact))
    if extra:
        raise ConfigError(
            Reason.BAD_TASK, f"{where}: a layered blueprint takes origin, key and layers, not {extra[0]!r}"
        )
    origin_cell, key, layers = compact["origin"] or [0, 0, 0], compact["key"] or {}, compact["layers"]
    if not (
        isinstance(origin_cell, list)
        and len(origin_cell) == 3
        and all(isinstance(c, int) and not isinstance(c, bool) for c in origin_cell)
    ):
        raise ConfigError(Reason.BAD_TASK, f"{where}: origin must be three whole numbers [x, y, z]")
    if not isinstance(key, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in key.items()):
        raise ConfigError(Reason.BAD_TASK, f"{where}: key maps one-character symbols to block names")
    if not (
        isinstance(layers, list)
        and all(isinstance(rows, list) and all(isinstance(row, str) for row in rows) for rows in layers)
    ):
        raise ConfigError(Reason.BAD_TASK, f"{where}: layers is a list of levels, each a list of row strings")
    built: Blueprint = from_layers((origin_cell[0], origin_cell[1], origin_cell[2]), key, layers, where)
    return built.model_dump()
