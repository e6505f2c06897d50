"""How much a ranker's scores tie, and how far the tie rule alone can move its metrics.

For one ranker on one split: the share of pairs with at least one tie, the share of sentences
whose score equals another sentence's score in the same pair, and the pessimistic / optimistic
values of each measure (ties broken worst-first / best-first) around the default tie-averaged
value. The spread between the bounds is what an arbitrary tie-breaking rule could report.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from sourcesum.data import Split
from sourcesum.evaluation import evaluate, ordered_scores
from sourcesum.measures import DEFAULT_MEASURES, Measure


def tie_shares(split: Split, scores: Mapping[str, Sequence[float]]) -> tuple[float, float]:
    """``(share of pairs with a tie, share of sentences tied with another in their pair)``."""
    pairs_tied = sentences_tied = sentences = 0
    for row in ordered_scores(split, scores, "scores"):
        _, counts = np.unique(np.asarray(row, dtype=float), return_counts=True)
        tied = int(counts[counts > 1].sum())
        pairs_tied += tied > 0
        sentences_tied += tied
        sentences += len(row)
    return pairs_tied / len(split), sentences_tied / sentences


def tie_report(split: Split, scores: Mapping[str, Sequence[float]], system: str,
               measures: Sequence[Measure] = DEFAULT_MEASURES) -> dict[str, Any]:
    """Tie shares plus ``{measure: {"average", "pessimistic", "optimistic"}}`` split means."""
    pair_share, sentence_share = tie_shares(split, scores)
    report: dict[str, Any] = {"pairs_with_ties": pair_share, "sentences_tied": sentence_share}
    by_rule = {rule: evaluate(split, scores, system, measures, tiebreak=rule)
               for rule in ("average", "worst", "best")}
    for measure in measures:
        report[measure.name] = {
            "average": by_rule["average"].mean(measure),
            "pessimistic": by_rule["worst"].mean(measure),
            "optimistic": by_rule["best"].mean(measure),
        }
    return report
