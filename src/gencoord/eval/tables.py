r"""The report's shared types: a table, its cells, and the paper's figures printed beside ours.

Every experiment kind's tables are :class:`Table`\ s of cells made here. Every number in them
is computed from our records; the "paper" column is read from ``data/paper.toml`` and only
printed, never used. A cell the paper does not report is "–".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from gencoord._config import package_text, parse_toml
from gencoord.errors import ConfigError
from gencoord.eval.stats import (
    Estimate,
)

Record = Mapping[str, Any]
DASH = "–"


@dataclass
class Table:
    key: str
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    caption: str = ""
    differences: list[str] = field(default_factory=list)
    """How our rows are computed differently from the paper's figures printed beside them (once per table)."""

    def markdown(self, level: int = 2) -> str:
        """The table as Markdown under a heading of ``level``: what report.md and the results page show."""
        lines = [f"{'#' * level} {self.title}", "", "| " + " | ".join(self.columns) + " |"]
        lines.append("|" + "".join(" --- |" if text else " ---: |" for text in self.text_columns()))
        lines += ["| " + " | ".join(_markdown_cell(cell) for cell in row) + " |" for row in self.rows]
        if self.caption:
            lines += ["", self.caption]
        if self.differences:
            lines += ["", "*Computed differently from the paper:* " + " ".join(self.differences)]
        return "\n".join(lines)

    def compacted(self) -> Table:
        """This table without the columns no row has a value in (a rule row has no tokens), saying which went."""
        if not self.rows:
            return self
        empty = [i for i in range(1, len(self.columns)) if all(row[i] == DASH for row in self.rows)]
        if not empty:
            return self
        kept = [i for i in range(len(self.columns)) if i not in empty]
        note = "Left out as no row has a value: " + ", ".join(self.columns[i] for i in empty) + "."
        return replace(
            self,
            columns=[self.columns[i] for i in kept],
            rows=[[row[i] for i in kept] for row in self.rows],
            caption=f"{self.caption} {note}".strip(),
        )

    def text_columns(self) -> list[bool]:
        """Which columns hold words rather than figures (set left, where figures are set right)."""
        return [
            index == 0 or not all(_is_figure(row[index]) for row in self.rows) for index in range(len(self.columns))
        ]


_UNITS = re.compile(r"\b(n/a|of|vs|steps|episode|pp|ms|s|B)\b")


def _is_figure(cell: object) -> bool:
    """A number, interval, fraction or dash, perhaps with a unit: no words left once units are taken out."""
    rest = _UNITS.sub("", str(cell))
    return not any(ch.isalpha() for ch in rest) and (any(ch.isdigit() for ch in rest) or str(cell) in (DASH, "n/a"))


def _markdown_cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


@cache
def paper_figures() -> dict[str, Any]:
    return parse_toml(package_text("gencoord.eval", "paper.toml"), "paper.toml", ConfigError)


def counted(count: int, noun: str) -> str:
    """``1 agent``, ``3 agents``: a count with its noun in the number it takes."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def percent_cell(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else f"{100 * value:.{digits}f}%"


def ci_cell(estimate: Estimate, scale: float = 100.0, digits: int = 1) -> str:
    return f"[{estimate.low * scale:.{digits}f}, {estimate.high * scale:.{digits}f}]"


def mean_of(values: Iterable[float]) -> float | None:
    data = list(values)
    return sum(data) / len(data) if data else None


def number_cell(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else f"{value:.{digits}f}"
