"""The JSON surface: the same fields as the Short DSL, with full key names.

This is the paper's structured comparator (GenCoord-JSON). It is decoded the way a
JSON protocol would be in practice, ``json.loads`` plus pydantic validation, and then
folded into the same :class:`Proposal` so that everything downstream is shared.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task, Value
from gencoord.dsl.parse import check_size
from gencoord.dsl.vocabulary import Vocabulary
from gencoord.errors import Location, ParseError, did_you_mean
from gencoord.reasons import Reason

JsonValue = StrictStr | StrictInt | StrictFloat | StrictBool | None


class JsonTask(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    skill: StrictStr
    args: dict[StrictStr, JsonValue] = Field(default_factory=dict)


class JsonPeerRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    target: StrictStr
    requested_plan: Annotated[list[JsonTask], Field(min_length=1)]


class JsonProposal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    self_plan: list[JsonTask]
    peer_requests: list[JsonPeerRequest]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ParseError(Reason.DUPLICATE_KEY, f"duplicate JSON key {key!r}", Location(section="JSON", key=key))
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise ParseError(Reason.INVALID_JSON, f"{name} is not a JSON number", Location(section="JSON"))


def _task(raw: JsonTask, vocab: Vocabulary, section: str, index: int) -> Task:
    where = Location(section=section, task_index=index, skill=raw.skill)
    if raw.skill not in vocab.skills:
        raise ParseError(
            Reason.UNKNOWN_SKILL, f"unknown skill {raw.skill!r}{did_you_mean(raw.skill, vocab.skills)}", where
        )
    args: dict[str, Value] = {}
    for spelled, value in raw.args.items():
        key = vocab.aliases.get(spelled, spelled)
        if key in args:
            raise ParseError(Reason.DUPLICATE_KEY, f"duplicate argument {key!r} after alias folding", where)
        if isinstance(value, float) and not math.isfinite(value):
            raise ParseError(Reason.NUMBER_OUT_OF_RANGE, f"argument {key!r} is not a finite number", where)
        args[key] = value
    return Task(raw.skill, vocab.canonical_args(raw.skill, args))


def _path(raw: list[JsonTask], vocab: Vocabulary, section: str) -> Path:
    if len(raw) > vocab.max_path_tasks:
        where = Location(section="JSON")
        raise ParseError(
            Reason.INVALID_JSON_SCHEMA, f"{section}: a path holds at most {vocab.max_path_tasks} tasks", where
        )
    return tuple(_task(task, vocab, section, i) for i, task in enumerate(raw, start=1))


def parse_json(message: str | bytes, vocab: Vocabulary) -> Proposal:
    """Decode the JSON surface; raise :class:`ParseError` for anything malformed."""
    text = check_size(message)
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ParseError(
            Reason.INVALID_JSON, exc.msg, Location(line=exc.lineno, column=exc.colno, section="JSON")
        ) from None
    except RecursionError:
        raise ParseError(Reason.INVALID_JSON, "JSON nested too deeply", Location(section="JSON")) from None
    try:
        raw = JsonProposal.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(root)"
        raise ParseError(Reason.INVALID_JSON_SCHEMA, f"{field}: {first['msg']}", Location(section="JSON")) from None
    return Proposal(
        _path(raw.self_plan, vocab, "SELF"),
        tuple(PeerRequest(r.target, _path(r.requested_plan, vocab, "REQ")) for r in raw.peer_requests),
    )


def _task_object(task: Task, vocab: Vocabulary) -> dict[str, object]:
    return {"skill": task.skill, "args": {vocab.full_names.get(k, k): v for k, v in task.args}}


def request_object(request: PeerRequest, vocab: Vocabulary) -> dict[str, object]:
    return {"target": request.target, "requested_plan": [_task_object(t, vocab) for t in request.plan]}


def serialize_json(proposal: Proposal, vocab: Vocabulary) -> str:
    """The canonical JSON surface: compact separators, full key names, ASCII."""
    obj = {
        "self_plan": [_task_object(t, vocab) for t in proposal.self_plan],
        "peer_requests": [request_object(r, vocab) for r in proposal.peer_requests],
    }
    return json.dumps(obj, separators=(",", ":"))


def request_json(request: PeerRequest, vocab: Vocabulary) -> str:
    """The request object alone: what the JSON surface puts on the wire for a REQ."""
    return json.dumps(request_object(request, vocab), separators=(",", ":"))
