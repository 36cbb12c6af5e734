"""Reading team-task files: gencoord's own TOML/JSON, and MINDcraft's crafting, cooking and construction JSON.

gencoord's format is a list of tasks (``[[tasks]]`` in TOML, ``{"tasks": [...]}`` in JSON),
each the fields of :class:`TeamTask`, of :class:`CookingTask` (a task with ``goals``, whose
world is MINDcraft's cooking world unless it says otherwise) or of :class:`BuildTask` (a task
with a ``blueprint``). MINDcraft's is a map of task id → task, read as MINDcraft's own code
reads it (``src/agent/tasks/tasks.js``: a target is a name, a list or a map, a count a number
or a map, item names case-blind); its ``type`` says cooking or construction, and
``data/mindcraft.toml`` says how its commands and worlds map onto gencoord. Both formats give
the same validated objects, items checked against the prior.

A file is the unit that can fail whole (not readable, not JSON or TOML, neither format);
a task is the unit of every other problem: a bad task is refused with its own code and
message (:class:`Refusal`) and the rest of its file loads.

Formats are plugins (:class:`TaskFileFormat`): gencoord's and MINDcraft's are built in, and
a package adds its own through the ``gencoord.task_formats`` entry-point group.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, ValidationError

from gencoord._config import package_text, parse_toml, read_text, validation_message
from gencoord._registry import Registry
from gencoord.errors import ConfigError
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.tasks.blueprint import Blueprint, from_layers
from gencoord.tasks.build import BuildTask, check_build_task
from gencoord.tasks.cooking import CookingTask, check_cooking_task
from gencoord.tasks.team import ANY, MAX_AGENTS, TeamTask, check_task

AnyTask = TeamTask | BuildTask | CookingTask
"""What a task file holds: a crafting, a construction or a cooking task."""


AUTO = "auto"
"""The format name that says: tell the format from the file's content."""


_MINDCRAFT_KEYS = frozenset({"agent_count", "initial_inventory", "target", "number_of_target", "blocked_actions"})


@cache
def _mindcraft() -> dict[str, Any]:
    return parse_toml(package_text("gencoord.tasks", "mindcraft.toml"), "mindcraft.toml", ConfigError)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A task of a file that cannot be run as written: why, with a stable code."""

    task: str
    code: str
    message: str


@dataclass(frozen=True)
class TaskFile:
    """What a task file holds: the tasks that load, and a refusal for each that does not."""

    path: str
    tasks: tuple[AnyTask, ...]
    refused: tuple[Refusal, ...]


def cooking_world() -> dict[str, Any]:
    """MINDcraft's cooking world as a team world (``data/mindcraft.toml``): the default of a cooking task."""
    table = _mindcraft()["cooking_world"]
    return {"crafting_table": True, "furnace": True, "smoker": True, **table}


def mindcraft_world() -> frozenset[str]:
    """What a MINDcraft crafting world offers to gather (``data/mindcraft.toml``)."""
    return frozenset(_mindcraft()["world"]["resources"])


def _document(path: Path) -> Any:
    text = read_text(path, ConfigError)
    if path.suffix == ".toml":
        return parse_toml(text, str(path), ConfigError)
    try:
        return json.loads(text)
    except RecursionError:
        raise ConfigError("INVALID_JSON", f"{path}: nested too deeply to be a task file") from None
    except ValueError as exc:
        raise ConfigError("INVALID_JSON", f"{path}: not JSON ({exc})") from None


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
        return _document(path)

    def detects(self, document: Any) -> bool:
        """Whether a document read as JSON or TOML is in this format (auto-detection)."""
        return False

    def entries(self, document: Any, origin: str) -> list[tuple[str, Any]]:
        """(task id, raw task) for every task of the document; a ConfigError when it holds none as this format."""
        raise NotImplementedError

    def task(self, task_id: str, raw: Any, origin: str) -> AnyTask:
        raise NotImplementedError


def _an_object(task_id: str, raw: Any, origin: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ConfigError("BAD_TASK", f"{origin}: task {task_id} is not an object")
    return raw


class GencoordFormat(TaskFileFormat):
    name = "gencoord"
    description = "gencoord's format (a 'tasks' list)"

    def detects(self, document: Any) -> bool:
        return isinstance(document, dict) and isinstance(document.get("tasks"), list)

    def entries(self, document: Any, origin: str) -> list[tuple[str, Any]]:
        if not self.detects(document):
            raise ConfigError("BAD_TASK_FILE", f"{origin}: gencoord's format is a 'tasks' list")
        return [(_entry_id(raw, number), raw) for number, raw in enumerate(document["tasks"], start=1)]

    def task(self, task_id: str, raw: Any, origin: str) -> AnyTask:
        return _validated(_an_object(task_id, raw, origin), origin)


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
            raise ConfigError("BAD_TASK_FILE", f"{origin}: MINDcraft's format maps task ids to task objects")
        return [(str(task_id), raw) for task_id, raw in document.items()]

    def task(self, task_id: str, raw: Any, origin: str) -> AnyTask:
        return from_mindcraft(task_id, _an_object(task_id, raw, origin), origin)


GENCOORD = GencoordFormat()
MINDCRAFT = MindcraftFormat()
FORMATS: Registry[TaskFileFormat] = Registry(
    "task format",
    "gencoord.task_formats",
    TaskFileFormat,
    {"gencoord": "gencoord.tasks.team_files:GENCOORD", "mindcraft": "gencoord.tasks.team_files:MINDCRAFT"},
)


def register_task_format(fmt: TaskFileFormat) -> TaskFileFormat:
    """Make ``fmt`` available to ``--format``, configs' ``format`` and auto-detection, under ``fmt.name``."""
    return FORMATS.register(fmt)


def task_format_name(name: str) -> str:
    """``name`` if it names a format (or ``auto``); a ConfigError naming the near miss otherwise."""
    if name != AUTO:
        FORMATS.get(name)
    return name


TaskFormatName = Annotated[str, AfterValidator(lambda name: _as_value_error(task_format_name, name))]
"""A config's ``format``: ``auto`` or a registered format's name."""


def _as_value_error(check: Any, value: str) -> str:
    try:
        return str(check(value))
    except ConfigError as error:
        raise ValueError(error.message) from None


def detect_format(document: Any, origin: str) -> TaskFileFormat:
    """The first format (by name) that recognizes ``document``, or a ConfigError listing every format."""
    for name in FORMATS.names():
        fmt = FORMATS.get(name)
        if fmt.detects(document):
            return fmt
    said = " nor ".join(FORMATS.get(name).description for name in FORMATS.names())
    raise ConfigError("UNKNOWN_TASK_FORMAT", f"{origin}: neither {said}; pass --format to say which")


def _validated(data: Any, origin: str) -> AnyTask:
    try:
        if isinstance(data, dict) and "blueprint" in data:
            return BuildTask.model_validate({**data, "blueprint": _blueprint(data["blueprint"], origin, data)})
        if isinstance(data, dict) and "goals" in data:
            return CookingTask.model_validate({"world": cooking_world(), **data})
        return TeamTask.model_validate(data)
    except ValidationError as exc:
        task = data.get("id", "?") if isinstance(data, dict) else "?"
        raise ConfigError("BAD_TASK", f"{origin}: task {task}: {validation_message(exc)}") from None


def _blueprint(raw: Any, origin: str, task: dict[str, Any]) -> Any:
    """A blueprint in either shape: MINDcraft's levels as they are, gencoord's compact layers expanded."""
    if not isinstance(raw, dict) or "layers" not in raw:
        return raw
    where = f"{origin}: task {task.get('id', '?')}: blueprint"
    compact = {key: raw.get(key) for key in ("origin", "key", "layers")}
    extra = sorted(set(raw) - set(compact))
    if extra:
        raise ConfigError("BAD_TASK", f"{where}: a layered blueprint takes origin, key and layers, not {extra[0]!r}")
    origin_cell, key, layers = compact["origin"] or [0, 0, 0], compact["key"] or {}, compact["layers"]
    if not (
        isinstance(origin_cell, list)
        and len(origin_cell) == 3
        and all(isinstance(c, int) and not isinstance(c, bool) for c in origin_cell)
    ):
        raise ConfigError("BAD_TASK", f"{where}: origin must be three whole numbers [x, y, z]")
    if not isinstance(key, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in key.items()):
        raise ConfigError("BAD_TASK", f"{where}: key maps one-character symbols to block names")
    if not (
        isinstance(layers, list)
        and all(isinstance(rows, list) and all(isinstance(row, str) for row in rows) for rows in layers)
    ):
        raise ConfigError("BAD_TASK", f"{where}: layers is a list of levels, each a list of row strings")
    built: Blueprint = from_layers((origin_cell[0], origin_cell[1], origin_cell[2]), key, layers, where)
    return built.model_dump()


@dataclass(frozen=True, slots=True)
class _Bars:
    """What an agent's blocked commands mean here."""

    skills: list[str]
    plans: bool
    unmodelled: list[str]
    mapped: list[str]  # "!craftRecipe → craft.item", for the task's notes


def _bars(where: str, commands: Any) -> _Bars:
    if not isinstance(commands, list) or not all(isinstance(command, str) for command in commands):
        raise ConfigError("BAD_TASK", f"{where}: blocked_actions must map agent indexes to lists of command names")
    table = _mindcraft()
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
                "UNKNOWN_COMMAND",
                f"{where}: {command[:60]!r} is not a MINDcraft command (gencoord knows all {known} of "
                "src/agent/commands; data/mindcraft.toml lists them)",
            )
    return _Bars(skills, plans, ignored, mapped)


def _index_map(where: str, field: str, value: Any) -> dict[int, Any]:
    """A map keyed by agent index ("0", "1", ...), as MINDcraft's files key them."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(re.fullmatch(r"[0-9]{1,3}", str(key)) for key in value):
        raise ConfigError("BAD_TASK", f'{where}: {field} must map agent indexes ("0", "1", ...) to values')
    return {int(key): item for key, item in value.items()}


def _count(where: str, field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError("BAD_COUNT", f"{where}: {field} must be a whole number of at least 1, not {value!r}")
    return value


def _inventory(where: str, value: Any) -> dict[str, int]:
    """An agent's bag, names lower-cased as MINDcraft's /give does; zero counts are nothing."""
    if not isinstance(value, dict):
        raise ConfigError("BAD_TASK", f"{where}: an inventory maps item names to counts")
    bag: dict[str, int] = {}
    for item, count in value.items():
        if isinstance(count, int) and not isinstance(count, bool) and count == 0:
            continue
        name = str(item).lower()
        bag[name] = bag.get(name, 0) + _count(where, f"count of {str(item)[:40]!r}", count)
    return bag


def _target(where: str, raw: dict[str, Any], several: bool = False) -> Any:
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
        raise ConfigError("BAD_TASK", f"{where}: target must be an item name, a list of names or a map of counts")
    if several:
        if not names or not all(names):
            raise ConfigError("BAD_TASK", f"{where}: target names no item")
        return {name.lower(): _count(where, "number_of_target", _amount(target, amount, name)) for name in names}
    if len(names) != 1:
        raise ConfigError(
            "UNSUPPORTED_TARGET", f"{where}: {len(names)} target items; one target item per task is supported"
        )
    (name,) = names
    if not name:
        raise ConfigError("BAD_TASK", f"{where}: target names no item")
    return name.lower(), _count(where, "number_of_target", _amount(target, amount, name))


def _amount(target: Any, amount: Any, name: str) -> Any:
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


def _notes(raw: dict[str, Any]) -> list[str]:
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
    unread = sorted(str(key)[:40] for key in raw if key not in _READ)
    if unread:
        notes.append(f"fields gencoord does not read: {', '.join(unread)}")
    notes.append(
        "world: a survival world's natural blocks that break by hand, as resource areas that never run out; "
        "nothing is stocked (no mob drops, no ores)"
    )
    return notes


def _team_size(where: str, raw: dict[str, Any], indexes: list[int]) -> int:
    count = raw.get("agent_count", max(indexes, default=0) + 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ConfigError("BAD_TASK", f"{where}: agent_count must be a whole number of at least 1, not {count!r}")
    if count > MAX_AGENTS:
        raise ConfigError("TOO_MANY_AGENTS", f"{where}: agent_count {count}; a team has at most {MAX_AGENTS} agents")
    if any(index >= count for index in indexes):
        raise ConfigError("BAD_TASK", f"{where}: agent_count {count} does not cover agents {indexes}")
    return count


def _timeout(where: str, raw: dict[str, Any], default: int) -> float:
    timeout = raw.get("timeout", default)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < 10**7:
        raise ConfigError("BAD_TASK", f"{where}: timeout must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


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


def _team(where: str, raw: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    """A cooking or construction task's agents: bags and blocked skills by index, the unmodelled noted."""
    inventories = _index_map(where, "initial_inventory", raw.get("initial_inventory"))
    blocked = _index_map(where, "blocked_actions", raw.get("blocked_actions"))
    agents = []
    for index in range(_team_size(where, raw, sorted({*inventories, *blocked}))):
        name = f"{_prefix()}{index}"
        bars = _bars(f"{where}: agent {index}", blocked.get(index, []))
        if bars.unmodelled:
            notes.append(
                f"{name}: blocked commands with no gencoord analogue, not modelled: {', '.join(bars.unmodelled)}"
            )
        bag = _inventory(f"{where}: agent {index}", inventories.get(index) or {})
        agents.append({"name": name, "inventory": bag, "blocked": bars.skills, "can_plan": bars.plans})
    return agents


def _build_from_mindcraft(task_id: str, raw: dict[str, Any], origin: str) -> BuildTask:
    """One MINDcraft construction task (success: every blueprint cell as the blueprint says)."""
    where = f"{origin}: task {task_id}"
    notes = ["MINDcraft's goal and conversation texts are prompts for LLM agents; the goal is read from blueprint"]
    agents = _team(where, raw, notes)
    unread = sorted(str(key)[:40] for key in raw if key not in _READ_BUILD)
    if unread:
        notes.append(f"fields gencoord does not read: {', '.join(unread)}")
    data = {
        "id": task_id,
        "agents": agents,
        "blueprint": raw.get("blueprint"),
        "time_limit_s": _timeout(where, raw, 1000),
        "source": "mindcraft",
        "notes": notes,
    }
    task = _validated(data, origin)
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
            raise ConfigError("BAD_TASK", f"{where}: a hells-kitchen target of two needs two agents")
        goals = [
            {"items": _target(where, {"target": item}, several=True), "holder": f"{_prefix()}{i}"}
            for i, item in enumerate(target)
        ]
        return goals, True
    return [{"items": _target(where, raw, several=True), "holder": ANY}], False


def _cooking_from_mindcraft(task_id: str, raw: dict[str, Any], origin: str) -> CookingTask:
    """One MINDcraft cooking task (success: the goal items held by one agent at once, or each agent's own)."""
    where = f"{origin}: task {task_id}"
    notes = [
        "MINDcraft's goal, conversation and recipe texts are prompts for LLM agents; goals are read from target, "
        "recipes from the game's data"
    ]
    agents = _team(where, raw, notes)
    names = [str(agent["name"]) for agent in agents]
    count = len(names)
    goals, own_work = _cooking_goals(where, task_id, raw, count)
    barred = raw.get("blocked_access_to_recipe") or []
    if not isinstance(barred, list) or not all(re.fullmatch(r"[0-9]{1,3}", str(i)) and int(i) < count for i in barred):
        raise ConfigError("BAD_TASK", f"{where}: blocked_access_to_recipe must list agent indexes below {count}")
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
    unread = sorted(str(key)[:40] for key in raw if key not in _READ_COOKING)
    if unread:
        notes.append(f"fields gencoord does not read: {', '.join(unread)}")
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
        "time_limit_s": _timeout(where, raw, 300),
        "source": "mindcraft",
        "notes": notes,
    }
    task = _validated(data, origin)
    assert isinstance(task, CookingTask)
    return task


def _prefix() -> str:
    return str(_mindcraft()["agent_prefix"])


def from_mindcraft(task_id: str, raw: dict[str, Any], origin: str) -> AnyTask:
    """One MINDcraft task: a construction task as a BuildTask, a cooking task as a CookingTask, any
    other as a crafting TeamTask (success: some agent holds the target count)."""
    if raw.get("type") == "construction" or "blueprint" in raw:
        return _build_from_mindcraft(task_id, raw, origin)
    if raw.get("type") == "cooking":
        return _cooking_from_mindcraft(task_id, raw, origin)
    table = _mindcraft()
    where = f"{origin}: task {task_id}"
    inventories = _index_map(where, "initial_inventory", raw.get("initial_inventory"))
    blocked = _index_map(where, "blocked_actions", raw.get("blocked_actions"))
    count = _team_size(where, raw, sorted({*inventories, *blocked}))
    target, amount = _target(where, raw)
    notes = _notes(raw)
    agents = []
    restricted = bool(raw.get("restrict_to_inventory"))
    planners = 0
    for index in range(count):
        name = f"{table['agent_prefix']}{index}"
        bars = _bars(f"{where}: agent {index}", blocked.get(index, []))
        bag = _inventory(f"{where}: agent {index}", inventories.get(index) or {})
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
    timeout = _timeout(where, raw, 300)
    data = {
        "id": task_id,
        "agents": agents,
        "goal": {"item": target, "count": amount, "holder": ANY},
        "world": {"crafting_table": False, "resources": [] if restricted else table["world"]["resources"]},
        "time_limit_s": timeout,
        "source": "mindcraft",
        "notes": notes,
    }
    return _validated(data, origin)


def read_task_file(path: str | Path, fmt: str = AUTO, prior: Prior | None = None) -> TaskFile:
    """Every task in ``path`` that loads, and a refusal for each that does not.

    ``fmt`` names a format, or is ``auto``: told from the content. Raises :class:`ConfigError`
    only for the file as a whole: not readable, not JSON or TOML, or in no format.
    """
    path = Path(path)
    prior = prior or default_prior()
    origin = str(path)
    if fmt == AUTO:
        document = _document(path)
        chosen = detect_format(document, origin)
    else:
        chosen = FORMATS.get(fmt)
        document = chosen.read(path)
    entries = chosen.entries(document, origin)
    tasks: list[AnyTask] = []
    refused: list[Refusal] = []
    seen: set[str] = set()
    for task_id, raw in entries:
        try:
            if task_id in seen:
                raise ConfigError("DUPLICATE_TASK", f"{origin}: task id {task_id} repeats an earlier task's")
            seen.add(task_id)
            task = chosen.task(task_id, raw, origin)
            checked: AnyTask
            if isinstance(task, BuildTask):
                checked = check_build_task(task, prior, origin)
            elif isinstance(task, CookingTask):
                checked = check_cooking_task(task, prior, origin)
            else:
                checked = check_task(task, prior, origin)
            tasks.append(checked)
        except ConfigError as error:
            refused.append(Refusal(task_id, error.reason, error.message))
        except ValidationError as exc:  # a format that builds its task with a model's own validation
            refused.append(Refusal(task_id, "BAD_TASK", f"{origin}: task {task_id}: {validation_message(exc)}"))
    return TaskFile(origin, tuple(tasks), tuple(refused))


def _entry_id(raw: Any, number: int) -> str:
    """A task's id as a refusal names it: its own, or its place in the list."""
    ident = raw.get("id") if isinstance(raw, dict) else None
    return ident[:200] if isinstance(ident, str) and ident else f"#{number}"


def load_team_tasks(path: str | Path, fmt: str = AUTO, prior: Prior | None = None) -> list[TeamTask]:
    """Every task in ``path``, validated, with every item checked against ``prior``'s game data.

    Strict, for the files an experiment config names: the first refused task fails the
    whole load. ``gencoord tasks`` reads with :func:`read_task_file` and goes on.
    """
    loaded = read_task_file(path, fmt, prior)
    if loaded.refused:
        first = loaded.refused[0]
        raise ConfigError(first.code, first.message)
    other = next((task for task in loaded.tasks if not isinstance(task, TeamTask)), None)
    if other is not None:
        kind = "construction" if isinstance(other, BuildTask) else "cooking"
        raise ConfigError(
            "UNSUPPORTED_TASK_KIND",
            f"{path}: task {other.id} is a {kind} task; experiments take crafting tasks "
            "(run it with gencoord tasks run)",
        )
    return [task for task in loaded.tasks if isinstance(task, TeamTask)]
