"""Statistics over per-pair metric values: bootstrap CIs, paired tests, Holm correction.

All resampling is vectorized (one ``(resamples, n)`` index matrix) and seeded, so every number
is reproducible. Conventions:

* **Percentile bootstrap CI** of a mean: resample pairs with replacement ``R`` times (default
  10,000, seed 0) and take the 2.5th/97.5th percentiles of the resampled means. With ``groups``
  (e.g. the document of each CNN/DM pair), whole groups are resampled instead, and the
  resampled mean is ``sum of the chosen groups' sums / sum of their sizes``.
* **Paired randomization test** of ``mean(a - b) = 0``: flip the sign of each pair's difference
  at random ``R`` times; two-sided ``p = (1 + #{|mean*| >= |mean|}) / (R + 1)``. With
  ``groups``, one sign per group (its pairs flip together).
* **Paired bootstrap test**: resample pairs (or groups) and take the CI of ``mean(a - b)``;
  two-sided ``p = min(1, 2 * min(P*(d <= 0), P*(d >= 0)))`` over the resampled differences.
* **Holm** step-down adjustment of a family of p-values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
ALPHA = 0.05
"""Significance level of every test the board marks (adjusted p < ALPHA is significant)."""


def _group_index(groups: Sequence[str] | np.ndarray | None, n: int) -> tuple[np.ndarray, int]:
    """Integer group id per item (each item its own group when ``groups`` is None)."""
    if groups is None:
        return np.arange(n), n
    _, index = np.unique(np.asarray(groups), return_inverse=True)
    return index, int(index.max()) + 1 if n else 0


def bootstrap_means(
    values: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    groups: Sequence[str] | None = None,
) -> np.ndarray:
    """Means of ``resamples`` bootstrap resamples of ``values`` (by item or by group).

    ``values`` may be ``(n,)`` or ``(k, n)``; the same resample indices serve every row, which
    is what a *paired* comparison needs. NaN items (undefined metrics) are dropped first.
    """
    values = np.atleast_2d(np.asarray(values, dtype=float))
    keep = np.isfinite(values).all(axis=0)
    values = values[:, keep]
    group_of, n_groups = _group_index(None if groups is None else np.asarray(groups)[keep], values.shape[1])
    rng = np.random.default_rng(seed)
    chosen = rng.integers(0, n_groups, size=(resamples, n_groups))
    sums = np.zeros((values.shape[0], n_groups))
    for row in range(values.shape[0]):
        sums[row] = np.bincount(group_of, weights=values[row], minlength=n_groups)
    sizes = np.bincount(group_of, minlength=n_groups).astype(float)
    totals = sizes[chosen].sum(axis=1)
    # row by row: the same arithmetic (hence bit-identical means) as one call per row
    means: np.ndarray = np.stack([sums[row][chosen].sum(axis=1) / totals for row in range(values.shape[0])])
    return means


def _batches(vectors: Sequence[np.ndarray]) -> list[list[int]]:
    """Indices of ``vectors`` grouped by which items are finite (batched calls must drop the
    same items as one call per vector would)."""
    batches: dict[bytes, list[int]] = {}
    for index, vector in enumerate(vectors):
        batches.setdefault(np.isfinite(np.asarray(vector, dtype=float)).tobytes(), []).append(index)
    return list(batches.values())


def bootstrap_means_each(
    vectors: Sequence[np.ndarray],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    groups: Sequence[str] | None = None,
) -> list[np.ndarray]:
    """``bootstrap_means(v, ...)[0]`` for each vector ``v``, bit for bit, batched for speed."""
    out: list[np.ndarray] = [np.empty(0)] * len(vectors)
    for batch in _batches(vectors):
        means = bootstrap_means(np.vstack([vectors[i] for i in batch]), resamples, seed, groups)
        for i, row in zip(batch, means, strict=True):
            out[i] = row
    return out


def randomization_test_each(
    vectors: Sequence[np.ndarray],
    base: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    groups: Sequence[str] | None = None,
) -> list[float]:
    """``randomization_test(v, base, ...)`` for each vector ``v``, batched for speed."""
    diffs = [np.asarray(v, dtype=float) - np.asarray(base, dtype=float) for v in vectors]
    out = [float("nan")] * len(vectors)
    for batch in _batches(diffs):
        keep = np.isfinite(diffs[batch[0]])
        chosen = np.vstack([diffs[i][keep] for i in batch])
        p = randomization_tests(chosen, resamples, seed, None if groups is None else np.asarray(groups)[keep])
        for i, value in zip(batch, p, strict=True):
            out[i] = float(value)
    return out


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` interval of bootstrap ``samples`` (percentile method)."""
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_ci(
    values: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    groups: Sequence[str] | None = None,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values``."""
    return percentile_interval(bootstrap_means(values, resamples, seed, groups)[0], level)


def randomization_test(
    a: np.ndarray,
    b: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    groups: Sequence[str] | None = None,
) -> float:
    """Two-sided paired sign-flip randomization p-value for ``mean(a - b) = 0``."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    keep = np.isfinite(diff)
    return float(
        randomization_tests(
            diff[keep][None, :], resamples, seed, None if groups is None else np.asarray(groups)[keep]
        )[0]
    )


def randomization_tests(
    diffs: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    groups: Sequence[str] | None = None,
) -> np.ndarray:
    """:func:`randomization_test` p-values for each row of finite paired differences ``diffs``
    ``(k, n)``, all rows with the same sign flips (the draws one call per row would make)."""
    diffs = np.atleast_2d(np.asarray(diffs, dtype=float))
    if not np.isfinite(diffs).all():
        raise ValueError("randomization_tests needs finite differences; drop undefined pairs first")
    group_of, n_groups = _group_index(groups, diffs.shape[1])
    sums = np.stack([np.bincount(group_of, weights=row, minlength=n_groups) for row in diffs])
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(resamples, n_groups))
    observed = np.abs(diffs.mean(axis=1))
    permuted = np.abs(signs @ sums.T) / diffs.shape[1]
    # a tolerance so that float noise in equal sums never counts as "less extreme"
    extreme = np.count_nonzero(permuted >= observed - 1e-12 * np.maximum(1.0, observed), axis=0)
    p_values: np.ndarray = (1 + extreme) / (resamples + 1)
    return p_values


def paired_bootstrap_test(
    a: np.ndarray,
    b: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    groups: Sequence[str] | None = None,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``(p, ci_low, ci_high)`` of ``mean(a - b)`` by paired bootstrap."""
    diff = bootstrap_means(np.vstack([a, b]), resamples, seed, groups)
    d = diff[0] - diff[1]
    p = min(1.0, 2 * min(np.mean(d <= 0), np.mean(d >= 0)))
    low, high = percentile_interval(d, level)
    return float(p), low, high


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (same order as given)."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted.tolist()


@dataclass(frozen=True)
class Comparison:
    """A paired comparison of two systems on one split and measure."""

    a: str
    b: str
    split: str
    measure: str
    mean_a: float
    mean_b: float
    p_randomization: float
    p_bootstrap: float
    ci_low: float
    ci_high: float
    p_holm: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def compare(
    a_name: str,
    b_name: str,
    split: str,
    measure: str,
    a: np.ndarray,
    b: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    groups: Sequence[str] | None = None,
) -> Comparison:
    """Both paired tests for one pair of systems."""
    p_boot, low, high = paired_bootstrap_test(a, b, resamples, seed, groups)
    return Comparison(
        a=a_name,
        b=b_name,
        split=split,
        measure=measure,
        mean_a=float(np.nanmean(a)),
        mean_b=float(np.nanmean(b)),
        p_randomization=randomization_test(a, b, resamples, seed, groups),
        p_bootstrap=p_boot,
        ci_low=low,
        ci_high=high,
    )
