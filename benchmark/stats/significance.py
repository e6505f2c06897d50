"""Significance marks that the random draw cannot decide: sign-flip p-values with their Monte
Carlo error, Holm on the ends of their intervals, and resampling until each mark is decided.

**The test.** A paired two-sided randomization test of "the mean difference is 0" over clusters
(SourceSum: documents): cluster ``g`` contributes ``c_g`` (its pairs' summed differences, divided
by the number of pairs; for an average over splits, each split's share divided by the number of
splits, so splits that share a cluster flip it together) and the statistic is ``T = |sum_g c_g|``.
Under the null every sign pattern ``s`` is equally likely; the exact p-value is
``p = P(|sum_g s_g c_g| >= T)`` over all ``2^G`` patterns.

**Exact or Monte Carlo.** With at most :data:`EXACT_CLUSTERS` clusters every pattern is
enumerated and ``p`` is exact. Otherwise ``N`` patterns are drawn, ``X`` of them at least as
extreme, ``p^ = (1 + X) / (N + 1)``, with Monte Carlo standard error ``sqrt(p^ (1 - p^) / N)``
and the Clopper-Pearson interval of the exact ``p`` at :data:`LOOK_LEVEL`.

**The decision rule.** In a family of tests (e.g. every row of a column against its best) Holm's
adjustment is applied to the lower ends and, separately, to the upper ends of the intervals
(Holm is monotone, so where every interval holds its exact p, the adjusted ones hold the exact
adjusted p). A mark is *significant* when the adjusted upper end is below ``ALPHA``, *not
significant* when the adjusted lower end is at least ``ALPHA``, and *undecided* otherwise. While
any mark of a family is undecided, every test whose interval contains one of Holm's thresholds
``ALPHA / (m - j)`` doubles the patterns it has drawn (batches of :data:`BATCH_FLIPS`), up to
:data:`MAX_FLIPS`; a mark still undecided there is shown as undecided, never as significant.

**What a decision guarantees.** A test looks at its interval at most :data:`LOOKS` times (after
1, 2, 4, ... batches), each time at level ``LOOK_LEVEL = 1 - (1 - LEVEL) / LOOKS``, so by the
union bound all of its intervals hold the exact p with probability at least :data:`LEVEL`
(99%). A decided mark differs from the one the exact p-values would give only when some
interval of its family misses its p-value.

**Seeds.** Each test draws from its own seed, a digest of its identity (the two rows compared,
the column, the measure), so adding a row changes no other test's draws, and batch ``b`` is the
same whenever it is drawn: the counts are memoised and extended, never redrawn.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from sourcesum.stats.bootstrap import ALPHA

LEVEL = 0.99
"""Probability that every interval a test looks at holds its exact p-value."""
BATCH_FLIPS = 10_000
"""Patterns per batch; every test draws batch 0, and a test still able to move a mark doubles
its batches (1, 2, 4, ... up to :data:`MAX_BATCHES`)."""
MAX_BATCHES = 1_000
MAX_FLIPS = BATCH_FLIPS * MAX_BATCHES
"""The most patterns a test draws (10^7); a mark still undecided there stays undecided."""


def looks_schedule() -> tuple[int, ...]:
    """The numbers of batches at which a test's interval is looked at: 1, 2, 4, ..., MAX_BATCHES."""
    out = [1]
    while out[-1] < MAX_BATCHES:
        out.append(min(MAX_BATCHES, 2 * out[-1]))
    return tuple(out)


LOOKS = len(looks_schedule())
"""The most times a test's interval is looked at (11)."""
LOOK_LEVEL = 1 - (1 - LEVEL) / LOOKS
"""The level of each look's Clopper-Pearson interval (Bonferroni over the looks)."""
EXACT_CLUSTERS = 16
"""Up to this many clusters every sign pattern is enumerated (2^16 = 65,536)."""

Decision = Literal["significant", "not significant", "undecided"]


def seed_for(*identity: str) -> int:
    """A 64-bit seed from a test's identity (stable across processes and machines)."""
    return int.from_bytes(hashlib.sha256("\x1f".join(identity).encode("utf-8")).digest()[:8], "big")


def flips_after(batches: int) -> int:
    """Patterns drawn by the first ``batches`` batches."""
    return max(0, batches) * BATCH_FLIPS


SIGN_BLOCK = 1_000
"""Sign patterns turned into floats at a time (a block stays in the CPU's cache; each pattern's
statistic is the same dot product whatever the block, so counts do not depend on it)."""


def _packed(seed: int, batch: int, rows: int, clusters: int) -> np.ndarray:
    """``rows`` random bit strings of ``clusters`` bits (packed 8 per byte) of batch ``batch`` of
    the test seeded ``seed``: bit 1 is the sign +1, bit 0 the sign -1."""
    rng = np.random.default_rng([seed, batch])
    return rng.integers(0, 256, size=(rows, (clusters + 7) // 8), dtype=np.uint8)


def _extreme(signs: np.ndarray, contributions: np.ndarray, observed: float) -> int:
    """How many sign patterns (rows) give a statistic at least ``observed`` (with a tolerance so
    float noise in equal sums never counts as less extreme)."""
    statistics = np.abs(signs @ contributions)
    return int(np.count_nonzero(statistics >= observed - 1e-12 * max(1.0, observed)))


def _extreme_of_packed(packed: np.ndarray, contributions: np.ndarray, observed: float) -> int:
    """:func:`_extreme` of the signs in ``packed`` (:func:`_packed`), unpacked :data:`SIGN_BLOCK`
    rows at a time into one reused buffer."""
    clusters = len(contributions)
    signs = np.empty((min(SIGN_BLOCK, len(packed)), clusters))
    extreme = 0
    for start in range(0, len(packed), SIGN_BLOCK):
        bits = np.unpackbits(packed[start : start + SIGN_BLOCK], axis=1)[:, :clusters]
        block = signs[: len(bits)]
        np.multiply(bits, 2.0, out=block)
        block -= 1.0
        extreme += _extreme(block, contributions, observed)
    return extreme


@dataclass(frozen=True)
class SignFlipCount:
    """What a test has drawn: ``extreme`` of ``flips`` patterns (``batches`` batches), or the exact
    count over all ``2^G`` patterns (``exact``)."""

    extreme: int
    flips: int
    batches: int
    exact: bool = False

    @property
    def p(self) -> float:
        """The p-value: exact, or ``(1 + X) / (N + 1)``."""
        return self.extreme / self.flips if self.exact else (1 + self.extreme) / (self.flips + 1)

    @property
    def standard_error(self) -> float:
        """The Monte Carlo standard error of :attr:`p` (0 when exact)."""
        return 0.0 if self.exact else float(np.sqrt(self.p * (1 - self.p) / self.flips))

    def interval(self, level: float = LOOK_LEVEL) -> tuple[float, float]:
        """Where the exact p lies with probability ``level``: Clopper-Pearson on ``X`` of ``N``
        (a point when exact)."""
        if self.exact:
            return self.p, self.p
        return clopper_pearson(self.extreme, self.flips, level)


@lru_cache(maxsize=65536)
def clopper_pearson(x: int, n: int, level: float = LOOK_LEVEL) -> tuple[float, float]:
    """The exact (Clopper-Pearson) ``level`` interval of a binomial proportion from ``x`` of
    ``n``: the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of Beta(x, n - x + 1) and
    Beta(x + 1, n - x)."""
    from scipy.special import betaincinv  # on use: scipy.special takes ~0.2 s to import

    tail = (1 - level) / 2
    low = 0.0 if x == 0 else float(betaincinv(x, n - x + 1, tail))
    high = 1.0 if x == n else float(betaincinv(x + 1, n - x, 1 - tail))
    return low, high


def cluster_contributions(diffs: np.ndarray, clusters: Sequence[str]) -> np.ndarray:
    """``c_g``: the defined paired differences summed per cluster, divided by their number (the
    statistic's mean). Undefined (NaN) differences are left out."""
    diffs = np.asarray(diffs, dtype=float)
    keep = np.isfinite(diffs)
    names, index = np.unique(np.asarray(clusters)[keep], return_inverse=True)
    sums = np.bincount(index, weights=diffs[keep], minlength=len(names))
    return np.asarray(sums / max(1, int(keep.sum())))


def average_contributions(per_split: Sequence[tuple[np.ndarray, Sequence[str]]]) -> np.ndarray:
    """``c_g`` of the mean over splits of each split's mean difference: a cluster present in
    several splits (the two splits of a corpus share their documents) gets one contribution, so
    its sign flips in all of them together."""
    total: dict[str, float] = {}
    for diffs, clusters in per_split:
        diffs = np.asarray(diffs, dtype=float)
        keep = np.isfinite(diffs)
        n = max(1, int(keep.sum()))
        for value, cluster in zip(diffs[keep], np.asarray(clusters)[keep], strict=True):
            total[str(cluster)] = total.get(str(cluster), 0.0) + float(value) / n / len(per_split)
    return np.array([total[name] for name in sorted(total)], dtype=float)


def all_patterns(clusters: int) -> np.ndarray:
    """Every one of the ``2^clusters`` sign patterns, one per row."""
    codes = np.arange(2**clusters, dtype=np.int64)[:, None]
    return ((codes >> np.arange(clusters)) & 1).astype(np.float64) * 2.0 - 1.0


def exact_count(contributions: np.ndarray) -> SignFlipCount:
    """The count over every sign pattern (few clusters)."""
    contributions = np.asarray(contributions, dtype=float)
    patterns = all_patterns(len(contributions))
    observed = float(abs(contributions.sum()))
    return SignFlipCount(_extreme(patterns, contributions, observed), len(patterns), 0, exact=True)


def batch_counts(contributions: np.ndarray, seed: int, first: int, last: int) -> list[int]:
    """The number of extreme patterns in each batch ``first .. last - 1`` of the test seeded
    ``seed`` (a batch is the same whenever it is drawn)."""
    contributions = np.asarray(contributions, dtype=float)
    observed = float(abs(contributions.sum()))
    return [
        _extreme_of_packed(_packed(seed, batch, BATCH_FLIPS, len(contributions)), contributions, observed)
        for batch in range(first, last)
    ]


def from_batches(per_batch: Sequence[int]) -> SignFlipCount:
    """The count of the first ``len(per_batch)`` batches."""
    return SignFlipCount(int(sum(per_batch)), flips_after(len(per_batch)), len(per_batch))


def holm_bounds(intervals: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Holm's adjustment applied to the lower ends and to the upper ends of ``intervals``."""
    from sourcesum.stats.bootstrap import holm

    if not intervals:
        return []
    lows = holm([low for low, _ in intervals])
    highs = holm([high for _, high in intervals])
    return list(zip(lows, highs, strict=True))


def decide(adjusted: tuple[float, float], alpha: float = ALPHA) -> Decision:
    low, high = adjusted
    if high < alpha:
        return "significant"
    if low >= alpha:
        return "not significant"
    return "undecided"


@dataclass(frozen=True)
class Marked:
    """One test of a family after the decision rule: its count, its Holm-adjusted interval and
    the decision; ``p_holm`` is Holm's adjustment of the point p-values (for reports)."""

    count: SignFlipCount
    adjusted: tuple[float, float]
    p_holm: float
    decision: Decision


def decide_family(
    contributions: Sequence[np.ndarray],
    seeds: Sequence[int],
    memo: Callable[[int], list[int]] | None = None,
    remember: Callable[[int, list[int]], None] | None = None,
    alpha: float = ALPHA,
) -> list[Marked]:
    """Apply the decision rule (module docstring) to a family of tests, drawing more batches for
    the tests that can still move a mark. ``memo(i)`` returns the per-batch counts of test ``i``
    drawn before (possibly more than needed; only as many as the rule asks for are used, so a
    decision never depends on what was memoised); ``remember(i, counts)`` memoises them."""
    from sourcesum.stats.bootstrap import holm

    m = len(contributions)
    drawn: list[list[int]] = [list(memo(i)) if memo else [] for i in range(m)]
    exact = [len(c) <= EXACT_CLUSTERS for c in contributions]
    used = [0 if exact[i] else 1 for i in range(m)]

    def count(i: int) -> SignFlipCount:
        if exact[i]:
            return exact_count(contributions[i])
        if len(drawn[i]) < used[i]:
            drawn[i] += batch_counts(contributions[i], seeds[i], len(drawn[i]), used[i])
            if remember:
                remember(i, drawn[i])
        return from_batches(drawn[i][: used[i]])

    current = [count(i) for i in range(m)]
    thresholds = [alpha / (m - j) for j in range(m)]
    while True:
        adjusted = holm_bounds([c.interval() for c in current])
        if all(decide(a, alpha) != "undecided" for a in adjusted):
            break
        refine = [
            i
            for i, c in enumerate(current)
            if not c.exact
            and used[i] < MAX_BATCHES
            and any(c.interval()[0] < t <= c.interval()[1] for t in thresholds)
        ]
        if not refine:
            break
        for i in refine:
            used[i] = min(MAX_BATCHES, 2 * used[i])  # double the patterns drawn
            current[i] = count(i)
    adjusted = holm_bounds([c.interval() for c in current])
    points = holm([c.p for c in current]) if current else []
    return [Marked(c, a, p, decide(a, alpha)) for c, a, p in zip(current, adjusted, points, strict=True)]
