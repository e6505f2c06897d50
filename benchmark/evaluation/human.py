"""Human agreement: annotators and rankers scored against the same held-out-annotator references.

Definition (leave-one-annotator-out). A pair whose sentences all carry votes from the same
``k >= 2`` annotators yields ``k`` *references*, one per held-out annotator ``a``: the votes of
the other ``k - 1`` annotators, read by the benchmark's rules: graded = their number of 1-votes
(nDCG), binary = at least ``min(t, k - 1)`` of them voted 1 (AP), ``t`` being the dataset's
binary threshold (SourceSum: 2). It needs per-annotator votes (``Judgment.votes``). Against
each reference:

* the **human** system is annotator ``a``'s own 0/1 votes used as scores (two tie groups);
* a **ranker** is its usual scores (the same for every ``a``).

A measure's value on a pair is the mean over the pair's references on which it is defined;
split means are over pairs, as everywhere else. So the question answered is: does the ranker
agree with the other annotators as well as one more annotator does?

Edge cases, all counted by :func:`coverage`:

* pairs with one annotator have no reference and are left out;
* pairs whose sentences have different numbers of votes (6 on CNN/DM-PEGASUS, 4 on
  CNN/DM-Reference) cannot be split by annotator and are left out;
* with ``k = 2`` the reference is a single annotator and the binary threshold is 1 vote
  (instead of the benchmark's 2), so those pairs are easier to be "relevant" in;
* a reference with no relevant sentence (no 1-vote at all; or, for AP, none reaching the
  threshold) leaves the measure undefined for that reference: it is skipped, and a pair whose
  references are all undefined is left out of that measure's mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
from sourcesum.data import Split
from sourcesum.evaluation.evaluate import evaluate
from sourcesum.evaluation.measures import Measure
from sourcesum.evaluation.metrics import pad
from sourcesum.evaluation.qrels import Qrels, Run

HUMAN_LABEL = "human (held-out annotator's votes)"


@dataclass(frozen=True)
class References:
    """The held-out-annotator references of a split, one row per (pair, held-out annotator)."""

    split: Split
    pair_index: np.ndarray
    """Per reference row, the index of its pair in ``split.pairs``."""
    held_out: np.ndarray
    """Per reference row, the held-out annotator (column of the pair's votes)."""
    qrels: Qrels
    """Per reference row, the other annotators' relevance (binary at ``min(2, k - 1)`` votes)."""
    human_scores: np.ndarray
    annotators: np.ndarray
    """Per pair of the split: ``k`` if all its sentences have ``k`` votes, -1 if their counts
    differ, 0 if the dataset has no per-annotator votes."""


@cache
def references(split: Split) -> References:
    """Build the references of ``split`` (memoised; the votes never change)."""
    pair_index, held_out, graded, thresholds, human = [], [], [], [], []
    annotators = np.full(len(split), -1)
    for index, judgment in enumerate(split.judgments):
        if judgment.votes is None:
            annotators[index] = 0  # no per-annotator votes: no reference
            continue
        sizes = {len(v) for v in judgment.votes}
        if len(sizes) != 1:
            continue
        votes = np.array(judgment.votes, dtype=float)  # (sentences, k)
        k = votes.shape[1]
        annotators[index] = k
        if k < 2:
            continue
        total = votes.sum(axis=1)
        for a in range(k):
            others = total - votes[:, a]
            pair_index.append(index)
            held_out.append(a)
            graded.append(others)
            thresholds.append(min(split.min_relevant, k - 1))
            human.append(votes[:, a])
    return References(
        split=split,
        pair_index=np.array(pair_index, dtype=int),
        held_out=np.array(held_out, dtype=int),
        qrels=Qrels.from_graded(graded, np.array(thresholds, dtype=float)),
        human_scores=pad(human)[0],
        annotators=annotators,
    )


def agreement_per_pair(
    split: Split,
    scores: Mapping[str, Sequence[float]] | None,
    measures: Sequence[Measure],
    source: str = "scores",
) -> pd.DataFrame:
    """Per-pair values of ``measures`` against the held-out references (NaN where a pair is
    left out or every reference is undefined); ``scores=None`` scores the held-out annotator."""
    refs = references(split)
    if scores is None:
        values = refs.human_scores
    else:
        rows = Run.of_split(split, scores, source).values
        width = refs.qrels.mask.shape[1]
        values = rows[refs.pair_index, :width] if len(refs.pair_index) else rows[:0, :width]
    columns = {}
    for measure, per_reference in evaluate(refs.qrels, values, measures).items():
        defined = np.isfinite(per_reference)
        sums = np.bincount(refs.pair_index[defined], weights=per_reference[defined], minlength=len(split))
        counts = np.bincount(refs.pair_index[defined], minlength=len(split))
        with np.errstate(invalid="ignore", divide="ignore"):
            columns[measure.name] = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    frame = pd.DataFrame(columns, index=pd.Index([p.id for p in split], name="pair_id"))
    return frame


def coverage(split: Split, measures: Sequence[Measure]) -> dict[str, object]:
    """Counts of every edge case of the definition on ``split`` (see the module docstring)."""
    refs = references(split)
    k = refs.annotators
    report: dict[str, object] = {
        "pairs": len(split),
        "pairs_one_annotator": int((k == 1).sum()),
        "pairs_mixed_annotator_counts": int((k == -1).sum()),
        "pairs_without_votes": int((k == 0).sum()),
        "pairs_two_annotators": int((k == 2).sum()),
        "pairs_three_or_more": int((k >= 3).sum()),
        "pairs_excluded": int((k < 2).sum()),
        "references": int(len(refs.pair_index)),
        "references_without_relevant": {},
        "pairs_left_out": {},
    }
    human = agreement_per_pair(split, None, measures)
    for measure in measures:
        relevance = refs.qrels.relevance(measure.relevance)
        empty = int((np.where(refs.qrels.mask, relevance, 0).sum(axis=1) == 0).sum())
        report["references_without_relevant"][measure.name] = empty  # type: ignore[index]
        report["pairs_left_out"][measure.name] = int(human[measure.name].isna().sum())  # type: ignore[index]
    return report
