"""What a run folder's model calls have cost, against the budget its execution settings allow.

A run against a paid endpoint should stop on its own before it spends more than the user
allowed, and stop as an interruption does: every finished record kept, the same command
(with a larger budget) going on from there. What counts is every record the folder holds,
stale ones too, since their tokens were paid for; a record's cost is the sum over every
message a model wrote in it (``input_tokens``, ``output_tokens``, ``charge``), wherever the
record's kind keeps its generations.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gencoord.errors import BackendError
from gencoord.reasons import Reason


@dataclass(frozen=True)
class Spent:
    """Tokens (input and output) and charge (in the configured price's currency) paid so far."""

    tokens: int = 0
    charge: float = 0.0

    def __add__(self, other: Spent) -> Spent:
        return Spent(self.tokens + other.tokens, self.charge + other.charge)


def _generations(value: Any) -> Iterable[Mapping[str, Any]]:
    """Every dict in ``value`` that records one model message (it names its input and output tokens)."""
    if isinstance(value, Mapping):
        if "input_tokens" in value and "output_tokens" in value:
            yield value
        for child in value.values():
            yield from _generations(child)
    elif isinstance(value, list):
        for child in value:
            yield from _generations(child)


def spent_by(records: Iterable[Mapping[str, Any]]) -> Spent:
    """What ``records`` cost: a rule's message counts nothing (its tokens are None)."""
    tokens, charge = 0, 0.0
    for record in records:
        for generation in _generations(record):
            tokens += (generation.get("input_tokens") or 0) + (generation.get("output_tokens") or 0)
            charge += generation.get("charge") or 0.0
    return Spent(tokens, charge)


def spent_in(lines: bytes) -> Spent:
    """What a chunk of JSON-lines records cost."""
    return spent_by(json.loads(line) for line in lines.splitlines() if line.strip())


@dataclass(frozen=True)
class Budget:
    """At most ``tokens`` tokens and ``charge`` in the prices' currency over a run folder (None: no limit)."""

    tokens: int | None = None
    charge: float | None = None

    def check(self, spent: Spent, where: str) -> None:
        """Raise ``API_BUDGET_SPENT`` once ``spent`` reaches either limit: the run stops, resumably."""
        if self.tokens is not None and spent.tokens >= self.tokens:
            said, option = f"{spent.tokens:,} tokens of a {self.tokens:,}-token budget", "--api-budget-tokens"
        elif self.charge is not None and spent.charge >= self.charge:
            said, option = f"{spent.charge:.4f} of a budget of {self.charge:.4f}", "--api-budget-charge"
        else:
            return
        raise BackendError(
            Reason.API_BUDGET_SPENT,
            f"the model calls recorded in {where} have spent {said}; every finished record is kept. "
            f"Run the same command with a larger {option} to go on",
        )
