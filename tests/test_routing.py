"""Routing controls for a margin-guided upgrade (v2 Tables S38–S39), property-tested against brute force."""

from __future__ import annotations

from itertools import combinations
from statistics import mean

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gencoord.errors import ConfigError
from gencoord.eval.routing_tables import RoutedCase, routing_controls

cases = st.lists(
    st.builds(
        RoutedCase,
        cheap_correct=st.booleans(),
        strong_correct=st.booleans(),
        margin=st.floats(0.0, 1.0),
        score=st.floats(0.0, 1.0),
    ),
    min_size=1,
    max_size=9,
)


@given(group=cases, data=st.data())
def test_each_rule_upgrades_exactly_the_quota_and_random_is_the_exact_expectation(
    group: list[RoutedCase], data: st.DataObject
) -> None:
    quota = data.draw(st.integers(0, len(group)))
    result = routing_controls(group, quota)

    def accuracy(upgraded: set[int]) -> float:
        return mean(c.strong_correct if i in upgraded else c.cheap_correct for i, c in enumerate(group))

    every = [accuracy(set(chosen)) for chosen in combinations(range(len(group)), quota)]
    assert result.random_expected == pytest.approx(mean(every))
    assert min(every) - 1e-9 <= result.margin_guided <= max(every) + 1e-9
    assert min(every) - 1e-9 <= result.score_guided <= max(every) + 1e-9
    lowest_margins = sorted(range(len(group)), key=lambda i: (group[i].margin, i))[:quota]
    assert result.margin_guided == pytest.approx(accuracy(set(lowest_margins)))
    if quota == 0:
        assert result.margin_guided == result.score_guided == result.cheap
    if quota == len(group):
        assert result.margin_guided == pytest.approx(result.strong)


def test_a_margin_that_ranks_every_error_first_routes_them_all() -> None:
    wrong = [RoutedCase(False, True, margin=0.01 * i, score=0.9) for i in range(3)]
    right = [RoutedCase(True, False, margin=0.5 + 0.01 * i, score=0.1) for i in range(5)]
    result = routing_controls(wrong + right, 3)
    assert result.margin_guided == 1.0 and result.score_guided == 2 / 8  # score routes the sure right ones away
    assert result.margin_auroc == 1.0 and result.score_auroc == 0.0
    assert result.random_expected == pytest.approx(5 / 8 + (3 / 8 - 5 / 8) * 3 / 8)


def test_auroc_is_undefined_when_the_cheap_selector_is_always_right() -> None:
    result = routing_controls([RoutedCase(True, True, 0.2, 0.3), RoutedCase(True, False, 0.1, 0.9)], 1)
    assert result.margin_auroc is None and result.score_auroc is None


@pytest.mark.parametrize("quota", [-1, 3])
def test_a_quota_outside_the_cases_is_refused(quota: int) -> None:
    with pytest.raises(ConfigError) as caught:
        routing_controls([RoutedCase(True, True, 0.2, 0.3), RoutedCase(False, True, 0.1, 0.9)], quota)
    assert caught.value.reason == "BAD_QUOTA"
