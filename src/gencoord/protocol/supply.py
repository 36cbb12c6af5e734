"""The bounded supply exchange of a team task: what a lead may ask a peer, and what it answers.

Private information stays private by default: a lead knows only its own bag. To plan,
it asks each peer one bounded question about the items the goal's recipes can use, and
the peer answers with the counts it holds of *those* items (nothing else) and the
skills it cannot use. Both are one typed line each, counted on the wire like every
other message:

* ``ASK FOR <goal>`` — every item the goal's recipes can use; both sides expand it the same
  way from the shared prior, so the question costs a few bytes however big the recipe tree;
* ``ASK <item> <item> ...`` — an explicit list of at most :data:`MAX_ASKED` distinct item names;
* ``HAVE <item>=<n> ... [CANNOT <skill> ...]`` or ``HAVE -`` — only items that were asked,
  each once, counts positive.

A hostile or broken peer gets a :class:`ParseError` with a stable code, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gencoord.dsl.parse import ATOM, check_size
from gencoord.errors import Location, ParseError
from gencoord.reasons import Reason

MAX_ASKED = 96
"""Items one question may name: a recipe closure rarely has more, and the line stays under the wire cap."""

_WHERE = Location(line=1, section="SUPPLY")


@dataclass(frozen=True, slots=True)
class SupplyQuery:
    items: tuple[str, ...]  # what an answer may name
    goal: str | None = None  # ASK FOR <goal>: ``items`` is the goal's recipe closure in the shared prior

    def serialize(self) -> str:
        return f"ASK FOR {self.goal}" if self.goal is not None else "ASK " + " ".join(self.items)


Expand = Callable[[str], tuple[str, ...]]
"""The shared prior's answer to ``ASK FOR <goal>``: the items the goal's recipes can use."""


@dataclass(frozen=True, slots=True)
class SupplyAnswer:
    holds: tuple[tuple[str, int], ...]  # (item, count), sorted, counts positive
    cannot: tuple[str, ...] = ()  # skills this agent may not use

    def serialize(self) -> str:
        held = " ".join(f"{item}={count}" for item, count in self.holds) or "-"
        cannot = f" CANNOT {' '.join(self.cannot)}" if self.cannot else ""
        return f"HAVE {held}{cannot}"


def _words(message: str | bytes, head: str) -> list[str]:
    text = check_size(message).removesuffix("\n")
    words = text.split(" ")
    if "\n" in text or not words or words[0] != head or any(not word for word in words):
        raise ParseError(Reason.MALFORMED_SUPPLY, f"expected one line '{head} ...' with single spaces", _WHERE)
    return words[1:]


def parse_query(message: str | bytes, expand: Expand) -> SupplyQuery:
    items = _words(message, "ASK")
    if not items:
        raise ParseError(Reason.MALFORMED_SUPPLY, "ASK names no item", _WHERE)
    if items[0] == "FOR":
        if len(items) != 2 or ATOM.fullmatch(items[1]) is None:
            raise ParseError(Reason.MALFORMED_SUPPLY, "expected 'ASK FOR <item>'", _WHERE)
        return SupplyQuery(expand(items[1]), items[1])
    if len(items) > MAX_ASKED:
        raise ParseError(Reason.TOO_MANY_ITEMS, f"ASK names {len(items)} items; at most {MAX_ASKED}", _WHERE)
    if len(set(items)) != len(items):
        raise ParseError(Reason.DUPLICATE_ITEM, "ASK names an item twice", _WHERE)
    bad = next((item for item in items if ATOM.fullmatch(item) is None), None)
    if bad is not None:
        raise ParseError(Reason.MALFORMED_SUPPLY, f"{bad[:40]!r} is not an item name", _WHERE)
    return SupplyQuery(tuple(items))


def parse_answer(message: str | bytes, asked: SupplyQuery) -> SupplyAnswer:
    """An answer to ``asked``: items outside the question are refused, so a peer cannot flood the lead."""
    words = _words(message, "HAVE")
    cannot: list[str] = []
    if "CANNOT" in words:
        split = words.index("CANNOT")
        words, cannot = words[:split], words[split + 1 :]
        if not cannot:
            raise ParseError(Reason.MALFORMED_SUPPLY, "CANNOT names no skill", _WHERE)
    if words == ["-"]:
        words = []
    elif not words:
        raise ParseError(Reason.MALFORMED_SUPPLY, "HAVE needs item=count pairs or '-'", _WHERE)
    holds: dict[str, int] = {}
    for word in words:
        item, sep, count = word.partition("=")
        if not sep or not (count.isascii() and count.isdigit()) or count.startswith("0") or len(count) > 6:
            raise ParseError(
                Reason.MALFORMED_SUPPLY, f"expected item=count with a positive count, found {word[:40]!r}", _WHERE
            )
        if item not in asked.items:
            raise ParseError(Reason.UNASKED_ITEM, f"the answer names {item[:40]!r}, which was not asked", _WHERE)
        if item in holds:
            raise ParseError(Reason.DUPLICATE_ITEM, f"the answer names {item} twice", _WHERE)
        holds[item] = int(count)
    bad = next((skill for skill in cannot if ATOM.fullmatch(skill) is None), None)
    if bad is not None:
        raise ParseError(Reason.MALFORMED_SUPPLY, f"{bad[:40]!r} is not a skill name", _WHERE)
    return SupplyAnswer(tuple(sorted(holds.items())), tuple(cannot))


def answer(query: SupplyQuery, inventory: dict[str, int], blocked: list[str]) -> SupplyAnswer:
    """A truthful peer's answer: its counts of the asked items, and the skills it cannot use."""
    holds = tuple(sorted((item, inventory[item]) for item in query.items if inventory.get(item, 0) > 0))
    return SupplyAnswer(holds, tuple(sorted(blocked)))
