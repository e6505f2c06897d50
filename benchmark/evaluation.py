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
from sourcesum.data import BINARY_MIN_VOTES, Split
from sourcesum.errors import ScoreFileError
from sourcesum.measures import AP, DEFAULT_MEASURES, NDCG, Measure
from sourcesum.metrics import Ranking, TieBreak, pad


def result_key(measure: Measure) -> str:
    """Key of a measure's split mean in results: ``ndcg`` and ``map`` for the paper's two."""
    return {NDCG: "ndcg", AP: "map"}.get(measure, measure.name)


@dataclass
class Evaluation:
    """Per-pair values of some measures for one system (ranker or score field) on one split."""

    system: str
    split: str
    per_pair: pd.DataFrame
    nan_replaced: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def mean(self, measure: Measure) -> float:
        values = self.per_pair[measure.name].to_numpy()
        return float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")

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

    @property
    def measures(self) -> list[Measure]:
        return self.per_pair.attrs["measures"]


_RELEVANCE_CACHE: dict[tuple[str, str, int, tuple[str, ...]], dict[str, np.ndarray]] = {}


def relevance_arrays(split: Split, min_votes: int = BINARY_MIN_VOTES) -> dict[str, np.ndarray]:
    """Padded graded and binary relevance of a split, plus its mask (pairs in file order).

    Memoised per (split, data checksum, threshold, pair ids): evaluation is called in tight
    loops (leaderboard, bootstrap, benchmarks) and the votes never change; the ids keep a
    subset of a split (a partial run) apart from the whole.
    """
    key = (split.name, split.sha256, min_votes, tuple(p.id for p in split))
    if key not in _RELEVANCE_CACHE:
        graded, mask = pad([pair.graded for pair in split])
        _RELEVANCE_CACHE[key] = {
            "graded": graded,
            "binary": (graded >= min_votes).astype(float),
            "mask": mask,
        }
    return _RELEVANCE_CACHE[key]


def ordered_scores(split: Split, scores: Mapping[str, Sequence[float]], source: str) -> list[Sequence[float]]:
    """Scores in split order; a missing pair or a wrong length is an error naming the pair."""
    rows = []
    for pair in split:
        values = scores.get(pair.id)
        if values is None:
            raise ScoreFileError(f"{source}: no scores for pair {pair.id} of split {split.name}")
        if len(values) != pair.n_sentences:
            raise ScoreFileError(
                f"{source}: pair {pair.id} has {len(values)} scores but {pair.n_sentences} sentences"
            )
        rows.append(values)
    return rows


def evaluate(
    split: Split,
    scores: Mapping[str, Sequence[float]],
    system: str,
    measures: Sequence[Measure] = DEFAULT_MEASURES,
    min_votes: int = BINARY_MIN_VOTES,
    tiebreak: TieBreak = "groups",
    source: str = "scores",
) -> Evaluation:
    """Per-pair values of ``measures`` for ``scores`` (pair id -> one score per sentence)."""
    rel = relevance_arrays(split, min_votes)
    values, _ = pad(ordered_scores(split, scores, source))
    if not np.isfinite(values[rel["mask"]]).all():
        raise ScoreFileError(f"{source}: non-finite scores; replace NaN before evaluating")
    rankings: dict[str, Ranking] = {}
    columns = {}
    for measure in measures:
        kind = measure.relevance
        # Rankings that keep tie groups do not depend on relevance; tie bounds do.
        key = kind if tiebreak != "groups" else "shared"
        if key not in rankings:
            rankings[key] = Ranking.from_scores(values, rel["mask"], tiebreak, rel[kind])
        columns[measure.name] = measure.compute(rankings[key], rel[kind])
    frame = pd.DataFrame(columns, index=pd.Index([p.id for p in split], name="pair_id"))
    frame.attrs["measures"] = list(measures)
    return Evaluation(system=system, split=split.name, per_pair=frame)
