"""The team exchange said in controlled free-form sentences: the comparator for team tasks.

The same typed content as the DSL exchange (a supply question, an answer, the n-party
proposal, each peer's decision), said the way people write chat messages, with one
fixed convention so a shared extractor recovers it exactly. Comparing the two on the
same tasks measures what the surface costs on the wire, not how well a parser guesses.
Paths reuse the two-agent dialogue's verbs and prepositions.
"""

from __future__ import annotations

import re

from gencoord.dsl.ast import PeerRequest, Proposal
from gencoord.dsl.dialogue import hear_path, say_path
from gencoord.dsl.vocabulary import Vocabulary
from gencoord.errors import Location, ParseError

_WHERE = Location(section="DIALOGUE")
_ASKED = re.compile(r"Do you have any of these: (?P<items>[^?]+)\? ")
_HELD = re.compile(r"I have (?P<held>.+?)\.(?: |$)")
_CANNOT = re.compile(r"I cannot use (?P<skills>.+?)\.(?: |$)")
_MINE = re.compile(r"I will (?P<steps>.+?)\.(?: |$)")
_THEIRS = re.compile(r"(?P<peer>[A-Za-z0-9_.:/+-]+), please (?P<steps>.+?)\.(?: |$)")
_NONE = "none of those"
_NOTHING = "I have nothing to do myself."


def _unheard(what: str) -> ParseError:
    return ParseError("UNHEARD", f"the extractor finds no {what} in the message", _WHERE)


def say_ask(items: tuple[str, ...], lead: str, peer: str, goal: str) -> str:
    return (
        f"Hi {peer}, {lead} here. We need to make {goal}. Do you have any of these: {', '.join(items)}? "
        "Tell me how many of each you have, and anything you cannot do."
    )


def hear_ask(text: str) -> tuple[str, ...]:
    found = _ASKED.search(text)
    if found is None:
        raise _unheard("question")
    return tuple(found.group("items").split(", "))


def say_have(holds: tuple[tuple[str, int], ...], cannot: tuple[str, ...], lead: str, peer: str) -> str:
    held = ", ".join(f"{count} {item}" for item, count in holds) or _NONE
    said = f"Hi {lead}, {peer} here. I have {held}."
    return said + (f" I cannot use {' or '.join(cannot)}." if cannot else "")


def hear_have(text: str) -> str:
    """The answer in the DSL's ``HAVE`` form, for the typed parser to check."""
    found = _HELD.search(text)
    if found is None:
        raise _unheard("answer")
    held = found.group("held")
    pairs = [] if held == _NONE else [part.split(" ", 1) for part in held.split(", ")]
    if any(len(pair) != 2 for pair in pairs):
        raise _unheard("count and item")
    words = [f"{item}={count}" for count, item in pairs] or ["-"]
    cannot = _CANNOT.search(text)
    if cannot is not None:
        words += ["CANNOT", *cannot.group("skills").split(" or ")]
    return "HAVE " + " ".join(words)


def say_proposal(proposal: Proposal, lead: str, peer: str) -> str:
    mine = f"I will {say_path(proposal.self_plan)}." if proposal.self_plan else _NOTHING
    asks = " ".join(f"{request.target}, please {say_path(request.plan)}." for request in proposal.peer_requests)
    return f"Hi {peer}, {lead} here. Here is the plan. {mine} {asks} That is everything."


def hear_proposal(text: str, vocab: Vocabulary) -> Proposal:
    mine = _MINE.search(text)
    own = hear_path(mine.group("steps"), vocab) if mine is not None and _NOTHING not in text else ()
    requests = tuple(
        PeerRequest(found.group("peer"), hear_path(found.group("steps"), vocab)) for found in _THEIRS.finditer(text)
    )
    if not own and not requests:
        raise _unheard("plan")
    return Proposal(own, tuple(sorted(requests, key=lambda request: request.target)))


def say_response(decision: str, fields: dict[str, str], lead: str) -> str:
    if decision == "ACCEPT":
        return f"Okay {lead}, I will do my part."
    if "item" in fields:
        return f"Sorry {lead}, I only have {fields.get('have', '0')} {fields['item']}."
    return f"Sorry {lead}, I cannot use {fields.get('skill', 'that')}."


def hear_response(text: str) -> str:
    """The response in the DSL's one-line form."""
    if text.startswith("Okay "):
        return "ACCEPT reason=CAN_DO"
    short = re.search(r"I only have (?P<have>\d+) (?P<item>\S+)\.", text)
    if short is not None:
        return f"COUNTER reason=SHORT item={short.group('item')} have={short.group('have')}"
    blocked = re.search(r"I cannot use (?P<skill>\S+)\.", text)
    if blocked is not None:
        return f"REJECT reason=BLOCKED_SKILL skill={blocked.group('skill')}"
    raise _unheard("decision")
