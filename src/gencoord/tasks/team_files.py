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

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, ValidationError

from gencoord._config import validation_message
from gencoord._registry import Registry
from gencoord.errors import ConfigError
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason
from gencoord.tasks.task_format import AnyTask, TaskFileFormat, an_object, read_document, validated_task
from gencoord.tasks.team import TeamTask

AUTO = "auto"
"""The format name that says: tell the format from the file's content."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A task of a file that cannot be run as written: why, with a stable code."""

    task: str
    code: Reason | str
    message: str


@dataclass(frozen=True)
class TaskFile:
    """What a task file holds: the tasks that load, and a refusal for each that does not."""

    path: str
    tasks: tuple[AnyTask, ...]
    refused: tuple[Refusal, ...]


class GencoordFormat(TaskFileFormat):
    name = "gencoord"
    description = "gencoord's format (a 'tasks' list)"

    def detects(self, document: Any) -> bool:
        return isinstance(document, dict) and isinstance(document.get("tasks"), list)

    def entries(self, document: Any, origin: str) -> list[tuple[str, Any]]:
        if not self.detects(document):
            raise ConfigError(Reason.BAD_TASK_FILE, f"{origin}: gencoord's format is a 'tasks' list")
        return [(_entry_id(raw, number), raw) for number, raw in enumerate(document["tasks"], start=1)]

    def task(self, task_id: str, raw: Any, origin: str) -> AnyTask:
        return validated_task(an_object(task_id, raw, origin), origin)


GENCOORD = GencoordFormat()
FORMATS: Registry[TaskFileFormat] = Registry(
    "task format",
    "gencoord.task_formats",
    TaskFileFormat,
    {"gencoord": "gencoord.tasks.team_files:GENCOORD", "mindcraft": "gencoord.tasks.mindcraft_format:MINDCRAFT"},
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
    raise ConfigError(Reason.UNKNOWN_TASK_FORMAT, f"{origin}: neither {said}; pass --format to say which")


def read_task_file(path: str | Path, fmt: str = AUTO, prior: Prior | None = None) -> TaskFile:
    """Every task in ``path`` that loads, and a refusal for each that does not.

    ``fmt`` names a format, or is ``auto``: told from the content. Raises :class:`ConfigError`
    only for the file as a whole: not readable, not JSON or TOML, or in no format.
    """
    path = Path(path)
    prior = prior or default_prior()
    origin = str(path)
    if fmt == AUTO:
        document = read_document(path)
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
                raise ConfigError(Reason.DUPLICATE_TASK, f"{origin}: task id {task_id} repeats an earlier task's")
            seen.add(task_id)
            tasks.append(chosen.task(task_id, raw, origin).checked(prior, origin))
        except ConfigError as error:
            refused.append(Refusal(task_id, error.reason, error.message))
        except ValidationError as exc:  # a format that builds its task with a model's own validation
            refused.append(Refusal(task_id, Reason.BAD_TASK, f"{origin}: task {task_id}: {validation_message(exc)}"))
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
        raise ConfigError(
            Reason.UNSUPPORTED_TASK_KIND,
            f"{path}: task {other.id} is a {other.task_kind} task; experiments take crafting tasks "
            "(run it with gencoord tasks run)",
        )
    return [task for task in loaded.tasks if isinstance(task, TeamTask)]
