"""One way to load a TOML document into a pydantic model, with errors a person can act on.

Every file gencoord reads (priors, suites, experiment and gate configs, physics, gate
jobs) goes through here, so each failure has the same shape: the file, the field path as
the user wrote it, what is wrong (with the allowed values where there is a fixed set),
and a stable reason code on the caller's error type.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gencoord.errors import GencoordError
from gencoord.reasons import Reason

M = TypeVar("M", bound=BaseModel)

_UNION_TAG = re.compile(r"^(?:[A-Z]\w*|str|int|float|bool|none|(?:list|dict|tuple|set|literal|function-\w+)\[.*\])$")
"""How pydantic names the member of a union it tried; never a field of ours (those are snake_case)."""


def _near_field(model: type[BaseModel], path: tuple[str, ...]) -> str:
    """ " (did you mean 'workers'?)" for an unknown key at ``path`` of ``model``'s documents, or nothing."""
    for part in path[:-1]:
        field = model.model_fields.get(part)
        inner = field.annotation if field is not None else None
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return ""
        model = inner
    near = difflib.get_close_matches(path[-1], list(model.model_fields), n=1) if path else []
    return f" (did you mean {near[0]!r}?)" if near else ""


def validation_message(exc: ValidationError, tagged: bool = False, model: type[BaseModel] | None = None) -> str:
    """The most specific problem of a pydantic error: the field path, then what is wrong.

    Unions report one error per member they tried (``pool.str``, ``pool.PoolSpec.split``);
    the member names are not fields the user wrote, so they are dropped, and the deepest
    problem wins: it is the one that says what the user meant to write. A ``tagged`` union
    at the top (experiment configs by ``kind``) puts its tag first in every path; it is dropped too.
    With ``model`` (the document's model), an unknown key is answered with the nearest known one.
    """
    problems: list[tuple[tuple[str, ...], str]] = []
    for error in exc.errors():
        parts = error["loc"][1:] if tagged else error["loc"]
        path = tuple(str(part) for part in parts if not _UNION_TAG.match(str(part)))
        message = re.sub(r"^Value error, ", "", error["msg"])
        if error["type"] == "extra_forbidden" and model is not None:
            message += _near_field(model, path)
        problems.append((path, message))
    deepest = max(len(path) for path, _ in problems)
    chosen = [(path, message) for path, message in problems if len(path) == deepest]
    path = chosen[0][0]
    messages = list(dict.fromkeys(message for candidate, message in chosen if candidate == path))
    # a shorter path the chosen one extends is the union's other member, not another problem
    others = len({candidate for candidate, _ in problems if candidate != path and path[: len(candidate)] != candidate})
    more = f" (and {others} more problem{'s' if others != 1 else ''})" if others else ""
    field = f"{'.'.join(path)}: " if path else ""  # a problem of the whole document names no field
    return f"{field}{'; or '.join(messages)}{more}"


def read_text(path: Path, error: type[GencoordError]) -> str:
    """A user's file as text, or ``error`` (UNREADABLE, NOT_UTF8) naming the file and the fix."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(Reason.UNREADABLE, f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise error(Reason.NOT_UTF8, f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def package_text(package: str, name: str) -> str:
    """A data file shipped inside the package."""
    return (resources.files(package) / "data" / name).read_text(encoding="utf-8")


def parse_toml(text: str, origin: str, error: type[GencoordError]) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(Reason.INVALID_TOML, f"{origin}: {exc}") from None


def validated(model: type[M], data: Any, origin: str, error: type[GencoordError], reason: Reason) -> M:
    """``data`` as ``model``, or ``error(reason)`` with the most specific problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(reason, f"{origin}: {validation_message(exc)}") from None


def load_model(model: type[M], text: str, origin: str, error: type[GencoordError], reason: Reason) -> M:
    """A TOML document as ``model``: both steps, with their errors."""
    return validated(model, parse_toml(text, origin, error), origin, error, reason)
