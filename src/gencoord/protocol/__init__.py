"""Resolution across the agent boundary: forward requests and bounded feedback."""

from gencoord.protocol.commitment import Commitment, Handoff, RolePath, task_id
from gencoord.protocol.lifecycle import (
    GenerationRequest,
    Generator,
    Responder,
    Stage,
    policy_responder,
    run_feedback,
    run_forward,
)
from gencoord.protocol.resolve import resolve_feedback, resolve_forward
from gencoord.protocol.response import Response, check_response, parse_response, respond
from gencoord.protocol.result import Fail, NoCommitment, ProtocolResult, Success, Trace
from gencoord.protocol.wire import Wire, WireMessage

__all__ = [
    "Commitment",
    "Fail",
    "GenerationRequest",
    "Generator",
    "Handoff",
    "NoCommitment",
    "ProtocolResult",
    "Responder",
    "Response",
    "RolePath",
    "Stage",
    "Success",
    "Trace",
    "Wire",
    "WireMessage",
    "check_response",
    "parse_response",
    "policy_responder",
    "resolve_feedback",
    "resolve_forward",
    "respond",
    "run_feedback",
    "run_forward",
    "task_id",
]
