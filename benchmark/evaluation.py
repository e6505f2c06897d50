"""Evaluate per-sentence scores against a split's votes: per-pair values and split means.

Means are unweighted over the pairs of a split. A pair on which a measure is undefined (no
relevant sentence: possible only in the ``*_all`` splits) is left out of that measure's mean
and counted in ``undefined``; single-sentence pairs are scored like any other (any ranking of
one sentence is perfect when it is relevant).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sourcesum.data import Split
from sourcesum.measures import AP, DEFAULT_MEASURES, NDCG, Measure
from sourcesum.metrics import Ranking, TieBreak
from sourcesum.qrels import BINARY_MIN_VOTES, Qrels, Run


def result_key(measure: Measure) -> str:
    """Key of a measure's split mean in results: ``ndcg`` and ``map`` for the paper's two."""
    return {NDCG: "ndcg", AP: "map"}.get(measure, measure.name)


@dataclass
class Evaluation:
    """Per-pair values of some measures for one system (ranker or score field) on one split."""

    system: str
    split: str
    per_pair: pd.DataFrame
    measures: list[Measure]
    """The measures of ``per_pair``'s columns, in order."""
    nan_replaced: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    _means: dict[Measure, float] = field(default_factory=dict, repr=False, compare=False)

    def mean(self, measure: Measure) -> float:
        """The split mean of ``measure`` over the pairs where it is defined (memoised)."""
        if measure not in self._means:
            values = self.per_pair[measure.name].to_numpy()
            self._means[measure] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
        return self._means[measure]

    def summary(self, system_key: str = "ranker") -> dict[str, Any]:
        """The JSON record of this evaluation: system, split, example count, means."""
        record: dict[str, Any] = {system_key: self.system, "split": self.split}
        record["examples"] = int(len(self.per_pair))
        undefined = {}
        for name in self.per_pair.columns:
            measure = next(m for m in self.measures if m.name == name)
            record[result_key(measure)] = self.mean(measure)
            missing = int(self.per_pair[name].isna().sum())
            if missing:
                undefined[result_key(measure)] = missing
        if undefined:
            record["undefined"] = undefined
        if self.nan_replaced:
            record["nan_replaced"] = self.nan_replaced
        record.update(self.extra)
        return record


def evaluate(
    split: Split,
    scores: Mapping[str, Sequence[float]],
    system: str,
    measures: Sequence[Measure] = DEFAULT_MEASURES,
    min_votes: int = BINARY_MIN_VOTES,
    tiebreak: TieBreak = "groups",
    source: str = "scores",
) -> Evaluation:
    """Per-pair values of ``measures`` for ``scores`` (pair id -> one score per sentence,
    checked by :class:`~sourcesum.qrels.Run`) against the split's :class:`~sourcesum.qrels.Qrels`."""
    qrels = Qrels.of_split(split, min_votes)
    values = Run.of_split(split, scores, source).values
    rankings: dict[str, Ranking] = {}
    columns = {}
    for measure in measures:
        kind = measure.relevance
        # Rankings that keep tie groups do not depend on relevance; tie bounds do.
        key = kind if tiebreak != "groups" else "shared"
        if key not in rankings:
            rankings[key] = Ranking.from_scores(values, qrels.mask, tiebreak, qrels.relevance(kind))
        columns[measure.name] = measure.compute(rankings[key], qrels.relevance(kind))
    frame = pd.DataFrame(columns, index=pd.Index([p.id for p in split], name="pair_id"))
    return Evaluation(system=system, split=split.name, per_pair=frame, measures=list(measures))
