"""The Short DSL's fast path: a line already in canonical form, checked by one regex, then split.

What models, the serializer and the composer emit is canonical spacing with unquoted
values; one regex accepts the whole line and plain splitting extracts its parts. Any line it
does not fully accept goes to the scanner (:mod:`gencoord.dsl.parse`), which gives the precise
error; both paths build identical objects (tested).
"""

from __future__ import annotations

import math
import re

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task, Value
from gencoord.dsl.vocabulary import Vocabulary

NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
RESERVED: dict[str, Value] = {"true": True, "false": False, "null": None}


def number(token: str) -> int | float:
    """A JSON number token as int or finite float; ValueError when it is out of range."""
    if "." in token or "e" in token or "E" in token:
        value = float(token)
        if not math.isfinite(value):
            raise ValueError(token)
        return value
    return int(token)


_FAST_VALUE = r"[A-Za-z0-9_.:/+-]+"
_FAST_ARG = rf"[A-Za-z][A-Za-z0-9_]*={_FAST_VALUE}"
_FAST_TASK = rf"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*\((?:{_FAST_ARG}(?:,{_FAST_ARG})*)?\)"
_FAST_PATH = rf"{_FAST_TASK}(?: > {_FAST_TASK})*"  # the path cap is the vocabulary's, checked after
_FAST_SELF = re.compile(rf"SELF (?:-|{_FAST_PATH})")
_FAST_REQ = re.compile(rf"REQ (?:-|({_FAST_VALUE}) {_FAST_PATH})")


_FAST_SPLIT = re.compile(r"([^( ]+)\(([^)]*)\)")


def _fast_value(token: str) -> Value:
    if token.isdigit() and (token[0] != "0" or len(token) == 1):
        return int(token)
    if token[0] in "-0123456789" and NUMBER.fullmatch(token):
        return number(token)
    return RESERVED.get(token, token)


def _fast_path(text: str, vocab: Vocabulary) -> Path | None:
    tasks: list[Task] = []
    aliases = vocab.aliases
    skills = vocab.skills
    for skill, inner in _FAST_SPLIT.findall(text):
        if skill not in skills:
            return None
        args: dict[str, Value] = {}
        if inner:
            for pair in inner.split(","):
                spelled, _, token = pair.partition("=")
                key = aliases.get(spelled, spelled)
                if key in args:
                    return None
                try:
                    args[key] = _fast_value(token)
                except ValueError:
                    return None
        tasks.append(Task(skill, vocab.canonical_args(skill, args)))
    return tuple(tasks) if len(tasks) <= vocab.max_path_tasks else None


def parse_fast(head: str, tail: str, vocab: Vocabulary) -> Proposal | None:
    """The SELF and REQ lines as a proposal, or None for the scanner to read (and refuse precisely)."""
    if _FAST_SELF.fullmatch(head) is None:
        return None
    request = _FAST_REQ.fullmatch(tail)
    if request is None:
        return None
    self_plan = () if head == "SELF -" else _fast_path(head[5:], vocab)
    if self_plan is None:
        return None
    if tail == "REQ -":
        return Proposal(self_plan, ())
    target = request.group(1)
    if target == "-":
        return None
    plan = _fast_path(tail[5 + len(target) :], vocab)
    return None if plan is None else Proposal(self_plan, (PeerRequest(target, plan),))
