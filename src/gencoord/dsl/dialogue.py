"""Controlled free-form dialogue: a commitment said in plain sentences over several turns.

The paper's free-form comparator (Section 5.3, Table 2) lets the agents talk in natural
language until a *shared extractor* recovers the commitment; wire bytes then count the
whole dialogue. "Controlled" means the sentences follow one fixed convention, so the
extractor is deterministic and exact — the comparison measures what the surface costs
(turns, context growth, output length), not how well a parser guesses:

* Every skill has a verb and every key a preposition: ``craft 1 crafting_table out of
  oak_planks``, ``build 8 oak_planks for SITE_A at site_a`` (``for`` names the binding).
  Steps of one path are joined by ``, then``.
* The sender opens with its own path and the first requested step, then asks for one
  more requested step per round; its last turn ends ``That is everything.``
* The receiver answers every turn with the steps it takes on (``Okay agent_a, I will
  ...``); once the sender is done, the dialogue is over.

A request of *n* steps therefore takes *n* rounds (2·n model calls): 2,400 training
rows for the 960 training views of the paper's suite, as in Table S6.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task, Value
from gencoord.dsl.vocabulary import Vocabulary
from gencoord.errors import Location, ParseError
from gencoord.reasons import Reason

VERBS: dict[str, str] = {
    "control.wait": "wait",
    "resource.obtain": "obtain",
    "resource.deliver": "deliver",
    "craft.item": "craft",
    "transform.supply_input": "load",
    "transform.supply_fuel": "fuel with",
    "transform.collect_output": "collect",
    "build.component": "build",
    "station.place": "place",
}
"""The verb each catalog skill is said with; a skill outside this table is said by its name."""

PREPOSITIONS: dict[str, str] = {
    "bind": "for",
    "input": "out of",
    "to": "to",
    "dst": "into",
    "site": "at",
    "loc": "near",
    "station": "using",
    "from": "taken from",
    "dst_role": "for role",
}
"""The words before each key's value; a key outside this table is said ``with <key> <value>``."""

THEN = ", then "
DONE = "That is everything."
MORE = "Confirm and I will go on."
FINAL = "That is my whole plan."
ASK = "What next?"
_OPENING = re.compile(r"^Hi (?P<peer>\S+), (?P<me>\S+) here\.")
_SELF = re.compile(r"I will (?P<steps>.+?)\.(?: |$)")
_REQUEST = re.compile(r"(?P<peer>\S+), please (?P<steps>.+?)\.(?: |$)")
_NOTHING = "I have nothing to do myself."


@dataclass(frozen=True, slots=True)
class Turn:
    """One thing said: who said it and the exact text that crossed the wire."""

    speaker: str
    text: str

    def line(self) -> str:
        return f"{self.speaker}: {self.text}"


def parse_line(line: str) -> Turn:
    speaker, _, text = line.partition(": ")
    return Turn(speaker, text)


def say_task(task: Task) -> str:
    words = [VERBS.get(task.skill, task.skill), str(task.get("q"))]
    words.append(str(task.get("item")) if task.has("item") else "ticks")
    for key, value in task.args:
        if key not in ("q", "item"):
            words.append(PREPOSITIONS.get(key, f"with {key}"))
            words.append(str(value))
    return " ".join(words)


def say_path(path: Path) -> str:
    return THEN.join(say_task(task) for task in path)


def rounds_for(proposal: Proposal) -> int:
    """How many rounds the sender needs: one requested step per round, at least one."""
    request = proposal.request
    return max(1, len(request.plan) if request else 0)


def sender_turn(proposal: Proposal, sender: str, round_index: int) -> str:
    """What the sender says in round ``round_index`` (1-based) of the dialogue for ``proposal``."""
    request = proposal.request
    assert request is not None and request.plan, "a dialogue carries one non-empty request"
    last = round_index >= rounds_for(proposal)
    step = say_task(request.plan[round_index - 1])
    ending = DONE if last else MORE
    if round_index == 1:
        mine = f"I will {say_path(proposal.self_plan)}." if proposal.self_plan else _NOTHING
        return f"Hi {request.target}, {sender} here. {mine} {request.target}, please {step}. {ending}"
    return f"Next, {request.target}, please {step}. {ending}"


def receiver_turn(steps: Path, sender: str, finished: bool) -> str:
    """What the receiver says after a sender turn: the steps it takes on, and whether it is done."""
    return f"Okay {sender}, I will {say_path(steps)}. {FINAL if finished else ASK}"


def scripted(proposal: Proposal, sender: str) -> list[str]:
    """The whole dialogue for ``proposal`` as a faithful pair of agents says it (for rows and examples)."""
    request = proposal.request
    assert request is not None
    said: list[str] = []
    for index in range(1, rounds_for(proposal) + 1):
        text = sender_turn(proposal, sender, index)
        said.append(Turn(sender, text).line())
        said.append(
            Turn(request.target, receiver_turn(request.plan[index - 1 : index], sender, sender_done(text))).line()
        )
    return said


def sender_done(text: str) -> bool:
    return text.rstrip().endswith(DONE)


def turns_said(dialogue: Sequence[str], speaker: str) -> list[str]:
    return [turn.text for turn in map(parse_line, dialogue) if turn.speaker == speaker]


def requested_steps(dialogue: Sequence[str], sender: str, vocab: Vocabulary) -> list[tuple[str, Path]]:
    """(addressee, steps) of every request sentence the sender has said so far."""
    found = []
    for text in turns_said(dialogue, sender):
        for match in _REQUEST.finditer(text):
            found.append((match["peer"], hear_path(match["steps"], vocab)))
    return found


def _unheard(message: str) -> ParseError:
    return ParseError(Reason.EXTRACTION_FAILURE, message, Location(section="DIALOGUE"))


def _value(word: str) -> Value:
    return int(word) if word.isascii() and word.isdigit() else word


def hear_task(phrase: str, vocab: Vocabulary) -> Task:
    """The inverse of :func:`say_task`; anything off-convention is a PARSE_FAILURE."""
    words = phrase.split()
    args: dict[str, Value] = {}
    verbs = {VERBS.get(skill, skill): skill for skill in vocab.skills}
    skill = next((verbs[v] for v in sorted(verbs, key=len, reverse=True) if _starts(words, v)), None)
    if skill is None:
        raise _unheard(f"no skill is said as {' '.join(words[:2])!r}")
    words = words[len(VERBS.get(skill, skill).split()) :]
    if len(words) < 2 or not (words[0].isascii() and words[0].isdigit()):
        raise _unheard(f"{phrase!r} names no quantity and item")
    args["q"] = int(words[0])
    if words[1] != "ticks":
        args["item"] = words[1]
    words = words[2:]
    keys = {**{PREPOSITIONS.get(key, f"with {key}"): key for key in vocab.full_names}, **_inverse(PREPOSITIONS)}
    while words:
        preposition = next((p for p in sorted(keys, key=len, reverse=True) if _starts(words, p)), None)
        width = len(preposition.split()) if preposition else 0
        if preposition is None or len(words) <= width:
            raise _unheard(f"cannot read {' '.join(words)!r}")
        key = keys[preposition]
        if key in args:
            raise _unheard(f"{key} is said twice in {phrase!r}")
        args[key] = _value(words[width])
        words = words[width + 1 :]
    return Task(skill, vocab.canonical_args(skill, args))


def _inverse(table: dict[str, str]) -> dict[str, str]:
    return {words: key for key, words in table.items()}


def _starts(words: list[str], phrase: str) -> bool:
    parts = phrase.split()
    return words[: len(parts)] == parts


def hear_path(text: str, vocab: Vocabulary) -> Path:
    return tuple(hear_task(phrase, vocab) for phrase in text.split(THEN))


def extract(dialogue: Sequence[str], sender: str, receiver: str, vocab: Vocabulary) -> tuple[Proposal, Proposal]:
    """The shared extractor: (the sender's SELF+REQ, the receiver's SELF) from the whole dialogue.

    Every request sentence becomes one REQ step, in the order said; a request addressed
    to someone else becomes its own REQ (which the protocol then rejects by count).
    """
    said = turns_said(dialogue, sender)
    if not said:
        raise _unheard(f"{sender} said nothing")
    opening = said[0]
    mine = None if _NOTHING in opening else _SELF.search(opening)
    if mine is None and _NOTHING not in opening:
        raise _unheard(f"{sender}'s opening states no own plan")
    self_plan = hear_path(mine["steps"], vocab) if mine else ()
    requests: dict[str, list[Task]] = {}
    for peer, steps in requested_steps(dialogue, sender, vocab):
        requests.setdefault(peer, []).extend(steps)
    answered: list[Task] = []
    for text in turns_said(dialogue, receiver):
        found = _SELF.search(text)
        if found is None:
            raise _unheard(f"{receiver} took on no steps in {text!r}")
        answered.extend(hear_path(found["steps"], vocab))
    proposal = Proposal(self_plan, tuple(PeerRequest(peer, tuple(plan)) for peer, plan in requests.items()))
    return proposal, Proposal(tuple(answered), ())
