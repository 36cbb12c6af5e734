"""Statistics cross-checked against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gencoord.eval.stats import (
    block_bootstrap_mean,
    bootstrap_mean,
    bootstrap_ratio,
    clopper_pearson,
    cluster_means,
    paired_difference,
    percentile,
    strict_successes,
)


def test_repeated_observations_are_averaged_within_cluster() -> None:
    means = cluster_means([("a", 1.0), ("a", 0.0), ("a", 1.0), ("b", 0.0)])
    assert means == {"a": pytest.approx(2 / 3), "b": 0.0}


def test_clopper_pearson_matches_closed_forms() -> None:
    # k = 0 and k = n have closed forms: upper = 1 - (α/2)^(1/n), lower = (α/2)^(1/n)
    none = clopper_pearson(0, 10)
    assert (none.low, none.high) == (0.0, pytest.approx(1 - 0.025 ** (1 / 10)))
    every = clopper_pearson(40, 40)
    assert (every.low, every.high) == (pytest.approx(0.025 ** (1 / 40)), 1.0)
    assert every.low == pytest.approx(0.91190, abs=1e-5)  # the textbook 95% lower bound for 40/40
    half = clopper_pearson(5, 10)
    assert (half.low, half.high) == (pytest.approx(0.18709, abs=1e-5), pytest.approx(0.81291, abs=1e-5))
    with pytest.raises(ValueError):
        clopper_pearson(3, 2)


def test_bootstrap_of_a_constant_is_degenerate() -> None:
    estimate = bootstrap_mean({f"c{i}": 1.0 for i in range(160)})
    assert (estimate.value, estimate.low, estimate.high) == (1.0, 1.0, 1.0)


def test_bootstrap_of_two_clusters_spans_the_enumerable_distribution() -> None:
    # means of 2 draws from {0, 1}: 0 (p=1/4), 1/2 (p=1/2), 1 (p=1/4) → 2.5th pct 0, 97.5th pct 1
    estimate = bootstrap_mean({"a": 0.0, "b": 1.0}, resamples=20_000, seed=1)
    assert (estimate.value, estimate.low, estimate.high) == (0.5, 0.0, 1.0)


def test_bootstrap_interval_matches_the_normal_approximation_for_many_clusters() -> None:
    values = {f"c{i}": float(i % 2) for i in range(160)}  # half succeed
    estimate = bootstrap_mean(values, seed=8901)
    half_width = 1.96 * math.sqrt(0.25 / 160)
    assert estimate.value == 0.5
    assert estimate.low == pytest.approx(0.5 - half_width, abs=0.012)
    assert estimate.high == pytest.approx(0.5 + half_width, abs=0.012)


def test_same_seed_same_interval() -> None:
    values = {f"c{i}": float(i % 3 == 0) for i in range(40)}
    assert bootstrap_mean(values, seed=8901) == bootstrap_mean(values, seed=8901)


def test_paired_difference_is_cluster_aligned() -> None:
    first = {"a": 1.0, "b": 1.0, "c": 0.5}
    second = {"a": 0.5, "b": 0.0, "c": 0.5, "only-here": 1.0}
    estimate = paired_difference(first, second)
    assert estimate.value == pytest.approx(np.mean([0.5, 1.0, 0.0]))
    identical = paired_difference(first, first)
    assert (identical.value, identical.low, identical.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        paired_difference({"x": 1.0}, {"y": 1.0})


def test_block_bootstrap_averages_each_pair_first() -> None:
    per_cluster = {"p1-raw": 1.0, "p1-fin": 0.0, "p2-raw": 1.0, "p2-fin": 0.0}
    blocks = {"p1-raw": "p1", "p1-fin": "p1", "p2-raw": "p2", "p2-fin": "p2"}
    estimate = block_bootstrap_mean(per_cluster, blocks)
    assert (estimate.value, estimate.low, estimate.high) == (0.5, 0.5, 0.5)  # every block averages to 1/2


def test_pooled_ratio_keeps_clusters_without_a_denominator() -> None:
    # escalations per cluster: a 2 of 2 fulfilled, b 0 of 2, c none at all
    estimate = bootstrap_ratio({"a": 2, "b": 0, "c": 0}, {"a": 2, "b": 2, "c": 0})
    assert estimate is not None and estimate.value == 0.5 and (estimate.low, estimate.high) == (0.0, 1.0)
    assert bootstrap_ratio({"a": 0}, {"a": 0}) is None


def test_strict_success_needs_every_repetition() -> None:
    assert strict_successes([("a", True), ("a", True), ("b", True), ("b", False)]) == (1, 2)
    assert percentile([], 50) is None and percentile([1.0, 2.0, 3.0], 50) == 2.0
