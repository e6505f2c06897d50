"""Statistics over per-pair metric values: bootstrap CIs, the paired bootstrap test, Holm
correction (the randomization tests that decide the board's marks are in
:mod:`sourcesum.stats.significance`).

All resampling is vectorized (one ``(resamples, n)`` index matrix) and seeded, so every number
is reproducible. Conventions:

* **Percentile bootstrap CI** of a mean: resample pairs with replacement ``R`` times (default
  10,000, seed 0) and take the 2.5th/97.5th percentiles of the resampled means. With ``groups``
  (e.g. the document of each CNN/DM pair), whole groups are resampled instead, and the
  resampled mean is ``sum of the chosen groups' sums / sum of their sizes``.
* **Paired bootstrap test**: resample pairs (or groups) and take the CI of ``mean(a - b)``;
  two-sided ``p = min(1, 2 * min(P*(d <= 0), P*(d >= 0)))`` over the resampled differences.
* **Holm** step-down adjustment of a family of p-values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
ALPHA = 0.05
RESAMPLE_BLOCK = 1_000
"""Significance level of every test the board marks (see :mod:`sourcesum.stats.significance`)."""
MIN_RESAMPLES, MAX_RESAMPLES = 1_000, 100_000
"""The bootstrap resample counts a user may ask for: fewer cannot make a p-value below 0.001,
more would hold gigabytes of draws."""


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
    # Row by row, and RESAMPLE_BLOCK resamples at a time (the gathered block stays in the CPU's
    # cache): each resample's sum is the same arithmetic whatever the block, so the means are
    # bit-identical to one call per row.
    means = np.empty((values.shape[0], resamples))
    for row in range(values.shape[0]):
        for start in range(0, resamples, RESAMPLE_BLOCK):
            block = chosen[start : start + RESAMPLE_BLOCK]
            means[row, start : start + len(block)] = (
                sums[row][block].sum(axis=1) / totals[start : start + len(block)]
            )
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
