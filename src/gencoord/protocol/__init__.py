"""Resolution across the agent boundary: forward requests and bounded feedback."""

from gencoord.protocol.commitment import Commitment, Handoff, RolePath, task_id
from gencoord.protocol.generation import Generation, Reply
from gencoord.protocol.resolve import resolve_feedback, resolve_forward
from gencoord.protocol.response import Response, check_response, parse_response, respond
from gencoord.protocol.result import Fail, NoCommitment, ProtocolResult, Success, Trace
from gencoord.protocol.wire import Wire, WireMessage

__all__ = [
    "Commitment",
    "Fail",
    "Generation",
    "Handoff",
    "NoCommitment",
    "ProtocolResult",
    "Reply",
    "Response",
    "RolePath",
    "Success",
    "Trace",
    "Wire",
    "WireMessage",
    "check_response",
    "parse_response",
    "resolve_feedback",
    "resolve_forward",
    "respond",
    "task_id",
]
