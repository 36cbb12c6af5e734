"""The cell list of a build commitment: which block goes where, in which order, as one DSL string.

A ``build.place`` task carries its whole placement order in one quoted ``cells`` value,
so a path stays one task however many blocks it places and the order travels exactly:

    cells="stone,gold_block|0:a0-3.0 a1.1 b2.1|1:b2.1"

First a palette, the block names in order of first use, separated by commas; each is then
written as one letter (``a``–``z``, then ``A``–``Z``: at most 52 blocks in one list). Then
one section per run of cells on one level, ``|<level>:`` and words separated by single
spaces: ``<letter><x>.<z>``, or ``<letter><x1>-<x2>.<z>`` for every x from x1 to x2 at that
z, ascending. Coordinates are offsets from the build site's origin, never negative. A
mixed 168-block pyramid costs about 6 bytes a block. The string is parsed with located
:class:`ParseError` codes, like every other message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from gencoord.errors import Location, ParseError
from gencoord.reasons import Reason

Cell = tuple[int, int, int]
"""(x, level, z): offsets from the build site's origin."""

Placement = tuple[str, Cell]
"""One block to place: its name, and its cell."""

MAX_CELLS = 32768
"""Cells one list may name: /fill's limit, far beyond any blueprint a team builds."""

_BLOCK = re.compile(r"~?[a-z0-9_]+")
TEMPORARY = "~"
"""Marks a palette or share block as scaffolding: placed, then broken again by the same task."""
_NUMBER = re.compile(r"0|[1-9][0-9]{0,4}")
_WHERE = Location(section="CELLS", key="cells")


def _fail(message: str) -> ParseError:
    return ParseError(Reason.MALFORMED_CELLS, message, _WHERE)


def _number(text: str, what: str) -> int:
    if _NUMBER.fullmatch(text) is None:
        raise _fail(f"{what} {text[:20]!r} is not a non-negative whole number")
    return int(text)


LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_WORD = re.compile(r"([a-zA-Z])(0|[1-9][0-9]{0,4})(?:-(0|[1-9][0-9]{0,4}))?\.(0|[1-9][0-9]{0,4})")


def parse_cells(text: str) -> tuple[Placement, ...]:
    """The placements of a ``cells`` string, in order; a cell named twice is refused."""
    palette_text, bar, body = text.partition("|")
    palette = palette_text.split(",")
    if not bar or not body:
        raise _fail("expected '<palette>|<level>:<cells>'")
    if len(palette) > len(LETTERS):
        raise ParseError(Reason.TOO_MANY_BLOCKS, f"a cell list names at most {len(LETTERS)} blocks", _WHERE)
    bad = next((name for name in palette if _BLOCK.fullmatch(name) is None), None)
    if bad is not None:
        raise _fail(f"{bad[:40]!r} is not a block name")
    if len(set(palette)) != len(palette):
        raise _fail("the palette names a block twice")
    placements: list[Placement] = []
    seen: set[Cell] = set()
    for section in body.split("|"):
        level_text, colon, words = section.partition(":")
        if not colon or not words:
            raise _fail(f"expected '<level>:<cells>', found {section[:40]!r}")
        level = _number(level_text, "level")
        for word in words.split(" "):
            match = _WORD.fullmatch(word)
            if match is None:
                raise _fail(f"expected '<letter><x>.<z>' or '<letter><x1>-<x2>.<z>', found {word[:40]!r}")
            letter, first, last, z_text = match.groups()
            index = LETTERS.index(letter)
            if index >= len(palette):
                raise _fail(f"{letter!r} is past the palette's {len(palette)} blocks")
            x0, z = int(first), int(z_text)
            x1 = int(last) if last is not None else x0
            if x1 < x0:
                raise _fail(f"the range {first}-{last} runs backwards")
            if len(placements) + x1 - x0 + 1 > MAX_CELLS:
                raise ParseError(Reason.TOO_MANY_CELLS, f"a cell list names at most {MAX_CELLS} cells", _WHERE)
            for x in range(x0, x1 + 1):
                cell = (x, level, z)
                if cell in seen:
                    raise ParseError(Reason.DUPLICATE_CELL, f"cell {x},{level},{z} is named twice", _WHERE)
                seen.add(cell)
                placements.append((palette[index], cell))
    return tuple(placements)


def format_cells(placements: Sequence[Placement]) -> str:
    """The string this codec writes for ``placements``, order kept (``parse_cells`` inverts it).

    Raises ValueError for more than 52 distinct blocks (the caller splits the list).
    """
    palette = list(dict.fromkeys(block for block, _ in placements))
    if len(palette) > len(LETTERS):
        raise ValueError(f"{len(palette)} blocks; a cell list names at most {len(LETTERS)}")
    letter = {block: LETTERS[index] for index, block in enumerate(palette)}
    sections: list[tuple[int, list[str]]] = []
    index = 0
    while index < len(placements):
        block, (x, level, z) = placements[index]
        end = index
        while end + 1 < len(placements):
            after, (nx, nlevel, nz) = placements[end + 1]
            if (after, nlevel, nz, nx) != (block, level, z, placements[end][1][0] + 1):
                break
            end += 1
        word = f"{letter[block]}{x}.{z}" if end == index else f"{letter[block]}{x}-{placements[end][1][0]}.{z}"
        if sections and sections[-1][0] == level:
            sections[-1][1].append(word)
        else:
            sections.append((level, [word]))
        index = end + 1
    return ",".join(palette) + "".join(f"|{level}:" + " ".join(words) for level, words in sections)


def is_temporary(block: str) -> bool:
    """Whether a palette or share name is scaffolding (``~dirt``)."""
    return block.startswith(TEMPORARY)


def block_of(block: str) -> str:
    """The block an item places: ``~dirt`` places dirt."""
    return block.removeprefix(TEMPORARY)


def block_counts(placements: Iterable[Placement]) -> dict[str, int]:
    """How many of each block the placements use, scaffolding included (its drops are not counted back)."""
    counts: dict[str, int] = {}
    for block, _ in placements:
        counts[block_of(block)] = counts.get(block_of(block), 0) + 1
    return counts


ShareRange = tuple[str, int, int]
"""One item of a share: a block (``~`` for scaffolding), and the first and last of its cells, inclusive."""

_SHARE_ITEM = re.compile(r"(~?[a-z0-9_]+):(0|[1-9][0-9]{0,4})(?:-(0|[1-9][0-9]{0,4}))?")
_SHARE_WHERE = Location(section="CELLS", key="share")


def parse_share(text: str) -> tuple[ShareRange, ...]:
    """The ranges of a ``share`` string, in order; overlapping ranges of one block are refused."""
    ranges: list[ShareRange] = []
    taken: dict[str, list[tuple[int, int]]] = {}
    for item in text.split(","):
        match = _SHARE_ITEM.fullmatch(item)
        if match is None:
            raise ParseError(
                Reason.MALFORMED_SHARE, f"expected '<block>:<first>[-<last>]', found {item[:40]!r}", _SHARE_WHERE
            )
        block, first_text, last_text = match.groups()
        first = int(first_text)
        last = int(last_text) if last_text is not None else first
        if last < first:
            raise ParseError(Reason.MALFORMED_SHARE, f"the range {first}-{last} runs backwards", _SHARE_WHERE)
        if any(first <= b and a <= last for a, b in taken.get(block, [])):
            raise ParseError(Reason.DUPLICATE_CELL, f"{block} cells {first}-{last} are named twice", _SHARE_WHERE)
        taken.setdefault(block, []).append((first, last))
        ranges.append((block, first, last))
        if sum(b - a + 1 for _, a, b in ranges) > MAX_CELLS:
            raise ParseError(Reason.TOO_MANY_CELLS, f"a share names at most {MAX_CELLS} cells", _SHARE_WHERE)
    return tuple(ranges)


def format_share(indices: Mapping[str, Iterable[int]]) -> str:
    """The share string for cell indices by block (``~`` names scaffolding); runs become ranges."""
    items: list[str] = []
    for block in sorted(indices, key=lambda name: (is_temporary(name), name)):
        ordered = sorted(set(indices[block]))
        start = 0
        while start < len(ordered):
            end = start
            while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
                end += 1
            first, last = ordered[start], ordered[end]
            items.append(f"{block}:{first}" if first == last else f"{block}:{first}-{last}")
            start = end + 1
    return ",".join(items)


def share_counts(ranges: Iterable[ShareRange]) -> dict[str, int]:
    """How many of each block a share places, scaffolding included."""
    counts: dict[str, int] = {}
    for block, first, last in ranges:
        counts[block_of(block)] = counts.get(block_of(block), 0) + last - first + 1
    return counts


def placed_counts(cells: object, share: object) -> dict[str, int] | None:
    """What a build task places by block, from its ``cells`` or its ``share``; None when it names neither."""
    if isinstance(cells, str):
        return block_counts(parse_cells(cells))
    if isinstance(share, str):
        return share_counts(parse_share(share))
    return None
