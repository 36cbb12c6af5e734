"""The team exchange said in controlled free-form sentences: the comparator for team tasks.

The same typed content as the DSL exchange (a supply question, an answer, the n-party
proposal, each peer's decision), said the way people write chat messages, with one
fixed convention so a shared extractor recovers it exactly. Comparing the two on the
same tasks measures what the surface costs on the wire, not how well a parser guesses.
Paths reuse the two-agent dialogue's verbs and prepositions.
"""

from __future__ import annotations

import re

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task
from gencoord.dsl.dialogue import DONE, MORE, hear_path, receiver_turn, say_path, say_task
from gencoord.dsl.vocabulary import Vocabulary
from gencoord.errors import Location, ParseError
from gencoord.reasons import Reason

_WHERE = Location(section="DIALOGUE")
_ASKED = re.compile(r"We need to make (?P<count>\d+) (?P<goal>\S+)\. ")
_HELD = re.compile(r"I have (?P<held>.+?)\.(?: |$)")
_CANNOT = re.compile(r"I cannot use (?P<skills>.+?)\.(?: |$)")
_MINE = re.compile(r"I will (?P<steps>.+?)\.(?: |$)")
_THEIRS = re.compile(r"(?P<peer>[A-Za-z0-9_.:/+-]+), please (?P<steps>.+?)\.(?: |$)")
_NONE = "none of those"
_NOTHING = "I have nothing to do myself."


def _unheard(what: str) -> ParseError:
    return ParseError(Reason.UNHEARD, f"the extractor finds no {what} in the message", _WHERE)


def say_ask(goal: str, count: int, lead: str, peer: str) -> str:
    return (
        f"Hi {peer}, {lead} here. We need to make {count} {goal}. What do you have that its recipes can use? "
        "Tell me how many of each you have, and anything you cannot do."
    )


def hear_ask(text: str) -> str:
    """The goal item the question is about (the hearer expands it with the shared prior)."""
    found = _ASKED.search(text)
    if found is None:
        raise _unheard("question")
    return found.group("goal")


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


def say_proposal(proposal: Proposal, lead: str, peer: str) -> list[str]:
    """The lead's turns to ``peer``, in the two-agent dialogue's convention: one of the peer's steps per round.

    The first turn also says the lead's own path and what every other teammate is asked,
    so the peer hears the whole commitment (as it reads the whole DSL record); the peer
    answers each turn, and its last answer is its decision.
    """
    mine = f"I will {say_path(proposal.self_plan)}." if proposal.self_plan else _NOTHING
    others = " ".join(
        f"{request.target}, please {say_path(request.plan)}."
        for request in proposal.peer_requests
        if request.target != peer
    )
    steps = next(request.plan for request in proposal.peer_requests if request.target == peer)
    turns = []
    for index, step in enumerate(steps):
        ending = DONE if index == len(steps) - 1 else MORE
        if index == 0:
            opening = " ".join(part for part in (mine, others) if part)
            turns.append(
                f"Hi {peer}, {lead} here. Here is the plan. {opening} {peer}, please {say_task(step)}. {ending}"
            )
        else:
            turns.append(f"Next, {peer}, please {say_task(step)}. {ending}")
    return turns


def say_plan(proposal: Proposal, lead: str) -> str:
    """The whole plan in one message, as a speaking lead writes it: its own steps, then each teammate's."""
    mine = f"I will {say_path(proposal.self_plan)}." if proposal.self_plan else _NOTHING
    theirs = [f"{request.target}, please {say_path(request.plan)}." for request in proposal.peer_requests]
    return " ".join([f"Hi team, {lead} here. Here is the plan.", mine, *theirs, DONE])


def say_step(step: Task, lead: str) -> str:
    """The peer's answer to a turn that is not the last: it takes the step on and asks for the next."""
    return receiver_turn((step,), lead, finished=False)


def hear_proposal(text: str, vocab: Vocabulary) -> Proposal:
    """The commitment from the lead's turns, joined: each teammate's steps in the order they were said."""
    mine = _MINE.search(text)
    own = hear_path(mine.group("steps"), vocab) if mine is not None and _NOTHING not in text else ()
    steps: dict[str, Path] = {}
    for found in _THEIRS.finditer(text):
        steps[found.group("peer")] = steps.get(found.group("peer"), ()) + hear_path(found.group("steps"), vocab)
    if not own and not steps:
        raise _unheard("plan")
    return Proposal(own, tuple(PeerRequest(target, plan) for target, plan in sorted(steps.items())))


def say_response(decision: str, fields: dict[str, str], lead: str, last: Task) -> str:
    """The peer's answer to the lead's last turn: it takes the last step on (its whole plan), or says why not."""
    if decision == "ACCEPT":
        return receiver_turn((last,), lead, finished=True)
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
