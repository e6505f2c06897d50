"""Measures and paired tests of score sets (:class:`~sourcesum.api.scores.Scores`) for notebooks:
the per-pair table of any measures (:func:`evaluate`) and the comparison ``sourcesum compare``
prints (:func:`compare`), both from the functions the harness itself uses."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from sourcesum import stats
from sourcesum.api.scores import Scores
from sourcesum.board.compare import Compared, compare_values
from sourcesum.data import load_split
from sourcesum.errors import SourceSumError
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import Measure, parse_measure, parse_measures
from sourcesum.stats.cache import StatsCache

MeasureSpec = str | Measure | Sequence[str | Measure]
"""Measures as ``"nDCG,AP"``, one :class:`~sourcesum.evaluation.measures.Measure` or name, or a
sequence of them."""


def measures_of(spec: MeasureSpec) -> tuple[Measure, ...]:
    """The measures ``spec`` names (:data:`MeasureSpec`), parsed as the CLI's ``--measures``."""
    if isinstance(spec, Measure):
        return (spec,)
    if isinstance(spec, str):
        return parse_measures(spec)
    return tuple(m if isinstance(m, Measure) else parse_measure(m) for m in spec)


def evaluate(scores: Scores, measures: MeasureSpec = "nDCG,AP") -> pd.DataFrame:
    """The per-pair table of ``measures`` for ``scores`` on its split: one row per pair (index
    ``pair_id``, split order), one column per measure's canonical name; NaN where a measure is
    undefined (e.g. a pair without a relevant sentence). Its column means (``.mean()``, NaN
    left out) are the split means ``sourcesum run`` and ``evaluate`` print."""
    split = load_split(scores.split)
    return evaluate_split(split, scores.by_pair, scores.label, measures_of(measures)).per_pair


def compare(
    a: Scores,
    b: Scores,
    *more: Scores,
    measures: MeasureSpec = "nDCG,AP",
    by: str = "document",
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
) -> pd.DataFrame:
    """Every pair of the score sets ``a``, ``b``, ``*more`` (all on one split) compared per
    measure as ``sourcesum compare`` does, with the same defaults: the mean difference with
    its paired bootstrap CI (``resamples``, ``seed``) and p-value, and the sign-flip test with
    its Monte Carlo error, Holm-corrected within each measure and decided by the harness's rule
    (:mod:`sourcesum.stats.significance`). ``by``: the resampling unit, ``document`` (the
    split's clusters) or ``pair``. One row per comparison, the columns of ``sourcesum compare
    --json``'s records; stored scores (:func:`~sourcesum.api.scores.load_scores`) give the
    numbers the command prints for those rows."""
    sets = (a, b, *more)
    splits = {s.split for s in sets}
    if len(splits) != 1:
        raise SourceSumError(f"compare: the score sets are on different splits ({', '.join(sorted(splits))})")
    names = [s.name for s in sets]
    if len(set(names)) != len(names):
        raise SourceSumError(f"compare: two score sets share a name ({', '.join(names)}); name them apart")
    if by not in ("document", "pair"):
        raise SourceSumError(f"compare: by={by!r}; use 'document' or 'pair'")
    if not stats.MIN_RESAMPLES <= resamples <= stats.MAX_RESAMPLES:
        raise SourceSumError(
            f"compare: resamples={resamples} is not between {stats.MIN_RESAMPLES:,} and {stats.MAX_RESAMPLES:,}"
        )
    parsed = measures_of(measures)
    split = load_split(splits.pop())
    compared = [
        Compared(s.name, s.label, s.identity, evaluate_split(split, s.by_pair, s.label, parsed).per_pair)
        for s in sets
    ]
    cache = StatsCache.default()
    results = compare_values(compared, split, parsed, by == "document", resamples, seed, cache)
    cache.save()
    return pd.DataFrame([c.as_dict() for c in results])
