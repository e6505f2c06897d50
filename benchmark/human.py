"""The human reference row: how well one annotator's votes predict the other annotators'.

Definition (leave-one-annotator-out). A pair annotated by ``k >= 2`` annotators (the same ``k``
for all its sentences; the few CNN/DM pairs whose sentences have different numbers of votes are
left out) is scored ``k`` times: annotator ``a``'s 0/1 votes are the ranking scores (so ties are
massive and averaged, as for any ranker), and the relevance comes from the *other* ``k - 1``
annotators by the benchmark's own rules: graded = their number of 1-votes (nDCG), binary = at
least ``min(2, k - 1)`` of them voted 1 (AP). The pair's value is the mean over the ``k``
held-out annotators of the defined values; split means are over pairs, as for rankers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sourcesum.data import BINARY_MIN_VOTES, Split
from sourcesum.measures import DEFAULT_MEASURES, Measure
from sourcesum.metrics import Ranking

HUMAN_LABEL = "human (leave-one-annotator-out)"


def human_per_pair(split: Split, measures: tuple[Measure, ...] = DEFAULT_MEASURES) -> pd.DataFrame:
    """Per-pair values of the human row (NaN for pairs it does not cover)."""
    rows: dict[str, dict[str, float]] = {}
    for pair in split:
        sizes = {len(v) for v in pair.votes}
        if len(sizes) != 1 or min(sizes) < 2:
            rows[pair.id] = {m.name: float("nan") for m in measures}
            continue
        votes = np.array(pair.votes, dtype=float)  # (sentences, k)
        k = votes.shape[1]
        scores = votes.T                            # annotator a's votes as scores
        others = votes.sum(axis=1)[None, :] - scores
        binary = (others >= min(BINARY_MIN_VOTES, k - 1)).astype(float)
        mask = np.ones_like(scores, dtype=bool)
        ranking = Ranking.from_scores(scores, mask)
        values = {}
        for measure in measures:
            relevance = others if measure.relevance == "graded" else binary
            per_annotator = measure.compute(ranking, relevance)
            values[measure.name] = float(np.nanmean(per_annotator)) if np.isfinite(per_annotator).any() else float("nan")
        rows[pair.id] = values
    frame = pd.DataFrame.from_dict(rows, orient="index")[[m.name for m in measures]]
    frame.index.name = "pair_id"
    return frame
