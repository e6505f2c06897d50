"""Paired comparisons of leaderboard rows, or of any score sets (:func:`compare_values`), on the
same pairs: the mean difference with its paired bootstrap CI and p-value, and the sign-flip
randomization test decided under Holm per split and measure by the rule of
:mod:`sourcesum.stats.significance` (Monte Carlo error, resampling until decided, exact
enumeration for few clusters)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from sourcesum import stats
from sourcesum.board.model import Row
from sourcesum.board.statistics import resampling_clusters, row_identity, tested_family
from sourcesum.data import Split, load_split
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import Measure
from sourcesum.stats.cache import StatsCache
from sourcesum.stats.significance import LOOK_LEVEL, cluster_contributions


@dataclass(frozen=True)
class Comparison:
    """A paired comparison of rows ``a`` and ``b`` (display names; ``a_label``/``b_label`` their
    full labels) on one split and measure.

    ``p_randomization`` is the sign-flip p-value with its Monte Carlo standard error
    ``p_mc_se`` over ``flips`` patterns (``exact``: all of them enumerated, error 0);
    ``p_holm`` its Holm adjustment within the (split, measure) family and ``p_holm_interval``
    the adjusted interval (each end at :data:`~sourcesum.stats.significance.LOOK_LEVEL`) the
    ``decision`` is read from.
    ``p_bootstrap`` and ``ci_low``/``ci_high`` come from the paired bootstrap of the mean
    difference over ``resamples`` resamples."""

    a: str
    b: str
    a_label: str
    b_label: str
    split: str
    measure: str
    mean_a: float
    mean_b: float
    ci_low: float
    ci_high: float
    p_bootstrap: float
    resamples: int
    p_randomization: float
    p_mc_se: float
    flips: int
    exact: bool
    p_holm: float
    p_holm_interval: tuple[float, float]
    decision: str

    def as_dict(self) -> dict[str, Any]:
        record = dict(self.__dict__)
        record["p_holm_interval"] = list(self.p_holm_interval)
        record["p_holm_interval_level"] = LOOK_LEVEL
        return record


def per_pair_values(row: Row, split: str, measures: Sequence[Measure]) -> pd.DataFrame:
    """Per-pair values of ``measures`` for a row: the leaderboard's own when it has them all,
    else recomputed from the row's scores."""
    frame = row.evaluations[split].per_pair
    missing = [m.name for m in measures if m.name not in frame]
    if not missing:
        return frame
    entry = row.entries.get(split)
    if entry is None:  # reference rows without scores (human)
        raise ValueError(f"{row.label} has no per-pair values for {missing}")
    return evaluate_split(load_split(split), entry.scores, row.label, measures).per_pair


@dataclass(frozen=True)
class Compared:
    """One score set in a comparison: its display ``name``, full ``label``, the ``identity``
    its tests are seeded by (rows: :func:`~sourcesum.board.statistics.row_identity`) and its
    per-pair values (pairs in split order, a column per measure name)."""

    name: str
    label: str
    identity: str
    per_pair: pd.DataFrame


def compare_rows(
    rows: Sequence[Row],
    splits: Sequence[str],
    measures: Sequence[Measure],
    by_document: bool = True,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    cache: StatsCache | None = None,
) -> list[Comparison]:
    """Every pair of ``rows`` on every split and measure (:func:`compare_values` per split;
    rows without the split are left out of it)."""
    cache = StatsCache.default() if cache is None else cache
    out: list[Comparison] = []
    for split in splits:
        compared = [
            Compared(
                row.name or row.label, row.label, row_identity(row), per_pair_values(row, split, measures)
            )
            for row in rows
            if split in row.evaluations
        ]
        out += compare_values(compared, load_split(split), measures, by_document, resamples, seed, cache)
    cache.save()
    return out


def compare_values(
    compared: Sequence[Compared],
    split: Split,
    measures: Sequence[Measure],
    by_document: bool = True,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    cache: StatsCache | None = None,
) -> list[Comparison]:
    """Every pair of ``compared`` on ``split``, per measure. Each measure is one Holm family;
    each test draws from a seed derived from ``seed``, the two identities, the split and the
    measure (so the score sets named beside them change no test's draws); the bootstrap
    resamples clusters (``by_document``, the split's documents) or pairs with ``seed``."""
    cache = StatsCache.default() if cache is None else cache
    groups = resampling_clusters(split) if by_document else [p.id for p in split]
    out: list[Comparison] = []
    for measure in measures:
        pairs = list(combinations(compared, 2))
        vectors = [
            (a.per_pair[measure.name].to_numpy(dtype=float), b.per_pair[measure.name].to_numpy(dtype=float))
            for a, b in pairs
        ]
        family = tested_family(
            f"compare/{'document' if by_document else 'pair'}",
            [(a.identity, b.identity, split.name, measure.name) for a, b in pairs],
            [cluster_contributions(x - y, groups) for x, y in vectors],
            cache,
            seed,
        )
        for (a, b), (x, y), marked in zip(pairs, vectors, family, strict=True):
            p_boot, low, high = stats.paired_bootstrap_test(x, y, resamples, seed, groups)
            out.append(
                Comparison(
                    a=a.name,
                    b=b.name,
                    a_label=a.label,
                    b_label=b.label,
                    split=split.name,
                    measure=measure.name,
                    mean_a=float(np.nanmean(x)),
                    mean_b=float(np.nanmean(y)),
                    ci_low=low,
                    ci_high=high,
                    p_bootstrap=p_boot,
                    resamples=resamples,
                    p_randomization=marked.count.p,
                    p_mc_se=marked.count.standard_error,
                    flips=marked.count.flips,
                    exact=marked.count.exact,
                    p_holm=marked.p_holm,
                    p_holm_interval=marked.adjusted,
                    decision=marked.decision,
                )
            )
    return out
