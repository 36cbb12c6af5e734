"""The canonical Short DSL serializer: the one spelling every legal object has.

Canonical form: exactly two LF-separated lines, ``" > "`` between tasks, no other
spaces, compact keys in the skill's fixed order, atoms unquoted where the grammar
reads them back as the same string, JSON strings ASCII-escaped otherwise.
"""

from __future__ import annotations

import json
import math

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task, Value
from gencoord.dsl.fast_parse import NUMBER, RESERVED
from gencoord.dsl.parse import ATOM
from gencoord.dsl.vocabulary import Vocabulary, default_vocabulary


def format_value(value: Value) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no Short DSL spelling")
        return json.dumps(value)
    if ATOM.fullmatch(value) and value not in RESERVED and not NUMBER.fullmatch(value):
        return value
    return json.dumps(value)


def format_task(task: Task) -> str:
    inner = ",".join(f"{key}={format_value(value)}" for key, value in task.args)
    return f"{task.skill}({inner})"


def format_path(path: Path) -> str:
    return " > ".join(format_task(task) for task in path)


def self_line(proposal: Proposal) -> str:
    return f"SELF {format_path(proposal.self_plan)}" if proposal.self_plan else "SELF -"


def request_line(request: PeerRequest | None) -> str:
    return f"REQ {request.target} {format_path(request.plan)}" if request else "REQ -"


def serialize(proposal: Proposal, vocab: Vocabulary | None = None) -> str:
    """Encode_K: the canonical text of a proposal (``vocab`` defaults to the packaged prior's).

    Two lines for the paper's bilateral form; with several peers, gencoord's n-party
    extension: one REQ line per peer, sorted by agent. A peer addressed twice has no
    canonical text and is refused.
    """
    vocab = vocab or default_vocabulary()
    canonical = normalize(proposal, vocab)
    targets = [request.target for request in canonical.peer_requests]
    if len(set(targets)) != len(targets):
        raise ValueError(f"one REQ line per peer: {sorted(targets)} addresses a peer twice")
    if len(canonical.peer_requests) <= 1:
        return f"{self_line(canonical)}\n{request_line(canonical.request)}"
    ordered = sorted(canonical.peer_requests, key=lambda request: request.target)
    return "\n".join([self_line(canonical), *(request_line(request) for request in ordered)])


def normalize_path(path: Path, vocab: Vocabulary) -> Path:
    return tuple(_normalize_task(task, vocab) for task in path)


def _normalize_task(task: Task, vocab: Vocabulary) -> Task:
    folded = {vocab.aliases.get(key, key): value for key, value in task.args}
    if len(folded) != len(task.args):
        raise ValueError(f"{task.skill}: two arguments fold to the same key")
    return Task(task.skill, vocab.canonical_args(task.skill, folded))


def normalize(proposal: Proposal, vocab: Vocabulary) -> Proposal:
    """N_prop: fold aliases and order arguments canonically (parsed objects already are)."""
    return Proposal(
        normalize_path(proposal.self_plan, vocab),
        tuple(PeerRequest(r.target, normalize_path(r.plan, vocab)) for r in proposal.peer_requests),
    )
