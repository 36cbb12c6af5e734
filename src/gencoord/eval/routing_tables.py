"""Is the margin a good reason to upgrade? Routing controls for a cheap selector (v2 Tables S38–S39).

A margin-guided upgrade sends the cheap selector's least certain cases to a stronger one.
Whether the *margin* earns that, rather than any upgrade at that rate, is what the paper's
controls ask: at the same upgrade quota, upgrading cases chosen at random (its expectation,
computed exactly) or the cases with the lowest top score instead. And how well does each
signal rank the cheap selector's own errors (AUROC of correctness)?

Everything here is computed from per-case facts (was the cheap choice right, was the strong
one, the cheap selector's margin and top score), so each control sees the same cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import roc_auc_score

from gencoord.errors import ConfigError
from gencoord.reasons import Reason


@dataclass(frozen=True, slots=True)
class RoutedCase:
    """One description as both selectors saw it."""

    cheap_correct: bool
    strong_correct: bool
    margin: float  # the cheap selector's margin
    score: float  # the cheap selector's top score


@dataclass(frozen=True, slots=True)
class RoutingControls:
    """Accuracy at one upgrade quota under each routing rule, and how well each signal ranks errors."""

    cases: int
    upgraded: int  # the quota: how many cases every rule upgrades
    cheap: float  # nothing upgraded
    strong: float  # everything upgraded
    margin_guided: float
    random_expected: float
    score_guided: float
    margin_auroc: float | None  # None where the cheap selector is always right or always wrong
    score_auroc: float | None


def _upgraded_accuracy(cases: Sequence[RoutedCase], chosen: Sequence[int]) -> float:
    upgraded = set(chosen)
    right = sum(c.strong_correct if i in upgraded else c.cheap_correct for i, c in enumerate(cases))
    return right / len(cases)


def _lowest(values: Sequence[float], count: int) -> list[int]:
    """Indices of the ``count`` lowest values (ties broken by position, so the rule is deterministic)."""
    return sorted(range(len(values)), key=lambda i: (values[i], i))[:count]


def _auroc(correct: Sequence[bool], signal: Sequence[float]) -> float | None:
    """How well a higher signal ranks a correct choice above a wrong one (0.5: no better than chance)."""
    if len(set(correct)) < 2:
        return None
    return float(roc_auc_score(np.array(correct, dtype=int), np.array(signal, dtype=float)))


def routing_controls(cases: Sequence[RoutedCase], upgraded: int) -> RoutingControls:
    """The three routing rules at a quota of ``upgraded`` cases, and the two signals' AUROC."""
    if not cases:
        raise ConfigError(Reason.NO_CASES, "routing controls need at least one case")
    if not 0 <= upgraded <= len(cases):
        raise ConfigError(Reason.BAD_QUOTA, f"the upgrade quota must lie in [0, {len(cases)}], got {upgraded}")
    n = len(cases)
    cheap = sum(c.cheap_correct for c in cases) / n
    strong = sum(c.strong_correct for c in cases) / n
    gain = strong - cheap  # a uniformly random quota upgrades each case with chance upgraded / n
    correct = [c.cheap_correct for c in cases]
    return RoutingControls(
        cases=n,
        upgraded=upgraded,
        cheap=cheap,
        strong=strong,
        margin_guided=_upgraded_accuracy(cases, _lowest([c.margin for c in cases], upgraded)),
        random_expected=cheap + gain * upgraded / n,
        score_guided=_upgraded_accuracy(cases, _lowest([c.score for c in cases], upgraded)),
        margin_auroc=_auroc(correct, [c.margin for c in cases]),
        score_auroc=_auroc(correct, [c.score for c in cases]),
    )
