"""Paired comparisons of leaderboard rows on the same pairs, Holm-corrected per split and measure."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import pandas as pd
from sourcesum import stats
from sourcesum.board.model import Row
from sourcesum.board.statistics import resampling_clusters
from sourcesum.data import load_split
from sourcesum.evaluation import evaluate_split
from sourcesum.measures import Measure


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


def compare_rows(
    rows: Sequence[Row],
    splits: Sequence[str],
    measures: Sequence[Measure],
    by_document: bool = True,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
) -> list[stats.Comparison]:
    """Every pair of ``rows`` on every split and measure; ``p_holm`` adjusts the randomization
    p-values across the comparisons of one (split, measure)."""
    out: list[stats.Comparison] = []
    for split in splits:
        groups = resampling_clusters(load_split(split)) if by_document else None
        values = [
            (row.label, per_pair_values(row, split, measures)) for row in rows if split in row.evaluations
        ]
        for measure in measures:
            family = [
                stats.compare(
                    a,
                    b,
                    split,
                    measure.name,
                    va[measure.name].to_numpy(),
                    vb[measure.name].to_numpy(),
                    resamples,
                    seed,
                    groups,
                )
                for (a, va), (b, vb) in combinations(values, 2)
            ]
            adjusted = stats.holm([c.p_randomization for c in family])
            out += [
                stats.Comparison(**{**c.as_dict(), "p_holm": p})
                for c, p in zip(family, adjusted, strict=False)
            ]
    return out
