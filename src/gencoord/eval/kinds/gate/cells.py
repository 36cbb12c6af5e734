"""How the gate's tables write a figure: a rate with its interval, a count, a signed difference, or n/a."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gencoord.eval.stats import Estimate
from gencoord.eval.tables import DASH

Record = Mapping[str, Any]


def per_cluster(records: Sequence[Record], field: str) -> dict[str, float]:
    return {str(r["cluster"]): float(r[field]) for r in records}


NOT_RATED = "n/a"
"""A rate with nothing to rate (UER and ECR of a condition that never escalates), never drawn as zero."""


def pct_cell(estimate: Estimate | None) -> str:
    return (
        NOT_RATED
        if estimate is None
        else f"{100 * estimate.value:.1f}% [{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]"
    )


def count_cell(estimate: Estimate | None) -> str:
    return DASH if estimate is None else f"{estimate.value:.1f} [{estimate.low:.1f}, {estimate.high:.1f}]"


def signed_cell(estimate: Estimate, scale: float = 1.0) -> str:
    return f"{scale * estimate.value:+.1f} [{scale * estimate.low:+.1f}, {scale * estimate.high:+.1f}]"


def point_cell(estimate: Estimate | None) -> str:
    return NOT_RATED if estimate is None else f"{100 * estimate.value:.1f}%"
