"""The Short DSL codec (paper S4.1) and the JSON surface with the same fields."""

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task, Value
from gencoord.dsl.json_surface import parse_json, request_json, serialize_json
from gencoord.dsl.parse import WIRE_CAP_BYTES, parse
from gencoord.dsl.serialize import normalize, request_line, serialize
from gencoord.dsl.vocabulary import MAX_PATH_TASKS, Vocabulary

__all__ = [
    "MAX_PATH_TASKS",
    "WIRE_CAP_BYTES",
    "Path",
    "PeerRequest",
    "Proposal",
    "Task",
    "Value",
    "Vocabulary",
    "normalize",
    "parse",
    "parse_json",
    "request_json",
    "request_line",
    "serialize",
    "serialize_json",
]
