"""Cluster-level statistics, as the paper does them (S11).

The semantic cluster is the independent unit: role views and seeds are repeated
observations, averaged within cluster before inference. Intervals are percentile
bootstraps over clusters (10,000 resamples, fixed seeds); paired effects use
cluster-aligned differences; the Goal×Capability sensitivity analysis resamples whole
matched pair blocks; all-or-nothing pools get exact two-sided Clopper–Pearson intervals.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float
    low: float
    high: float

    def scaled(self, factor: float) -> Estimate:
        return Estimate(self.value * factor, self.low * factor, self.high * factor)


def cluster_means(observations: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Average the repeated observations (roles, seeds) of each cluster."""
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for cluster, value in observations:
        sums[cluster] += value
        counts[cluster] += 1
    return {cluster: sums[cluster] / counts[cluster] for cluster in sorted(sums)}


def _percentile_ci(values: np.ndarray, resamples: int, seed: int) -> Estimate:
    if values.size == 0:
        raise ValueError("a bootstrap needs at least one cluster")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, values.size, size=(resamples, values.size))
    means = values[draws].mean(axis=1)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(float(values.mean()), float(low), float(high))


def bootstrap_mean(per_cluster: Mapping[str, float], resamples: int = 10_000, seed: int = 8901) -> Estimate:
    """Mean over clusters with a percentile cluster-bootstrap interval."""
    return _percentile_ci(np.fromiter(per_cluster.values(), dtype=float), resamples, seed)


def paired_difference(
    first: Mapping[str, float], second: Mapping[str, float], resamples: int = 10_000, seed: int = 8911
) -> Estimate:
    """first − second over the clusters both measured, resampling clusters together."""
    shared = sorted(set(first) & set(second))
    if not shared:
        raise ValueError("the two conditions share no cluster")
    differences = np.array([first[c] - second[c] for c in shared], dtype=float)
    return _percentile_ci(differences, resamples, seed)


def block_bootstrap_mean(
    per_cluster: Mapping[str, float], blocks: Mapping[str, str], resamples: int = 10_000, seed: int = 8921
) -> Estimate:
    """Average clusters within each block (a matched pair), then resample whole blocks."""
    by_block = cluster_means((blocks[cluster], value) for cluster, value in per_cluster.items())
    return _percentile_ci(np.fromiter(by_block.values(), dtype=float), resamples, seed)


def bootstrap_ratio(
    numerators: Mapping[str, float],
    denominators: Mapping[str, float],
    resamples: int = 10_000,
    seed: int = 8901,
) -> Estimate | None:
    """A pooled rate Σnum / Σden with clusters resampled together (None when Σden is 0).

    For rates whose denominator varies by cluster (escalations, issues), a cluster may
    contribute nothing to the denominator; pooling keeps every cluster in play.
    """
    clusters = sorted(set(numerators) | set(denominators))
    num = np.array([numerators.get(c, 0.0) for c in clusters], dtype=float)
    den = np.array([denominators.get(c, 0.0) for c in clusters], dtype=float)
    if den.sum() == 0:
        return None
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(clusters), size=(resamples, len(clusters)))
    totals = den[draws].sum(axis=1)
    rates = np.divide(num[draws].sum(axis=1), totals, out=np.full(resamples, np.nan), where=totals > 0)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.nanpercentile(rates, [tail, 100 - tail])
    return Estimate(float(num.sum() / den.sum()), float(low), float(high))


def clopper_pearson(successes: int, trials: int) -> Estimate:
    """The exact two-sided binomial interval for successes / trials."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials > 0, got {successes}/{trials}")
    alpha = 1 - LEVEL
    low = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, trials - successes + 1))
    high = 1.0 if successes == trials else float(beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return Estimate(successes / trials, low, high)


def strict_successes(observations: Iterable[tuple[str, bool]]) -> tuple[int, int]:
    """(clusters whose every repetition succeeded, clusters)."""
    every: dict[str, bool] = {}
    for cluster, success in observations:
        every[cluster] = every.get(cluster, True) and success
    return sum(every.values()), len(every)


def percentile(values: Iterable[float], q: float) -> float | None:
    data = np.fromiter(values, dtype=float)
    return None if data.size == 0 else float(np.percentile(data, q))
