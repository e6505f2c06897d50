"""How much a ranker's scores tie, and how far the tie rule alone can move its metrics.

For one ranker on one split: the share of pairs with at least one tie, the share of sentences
whose score equals another sentence's score in the same pair, and per measure four split means:

* ``pessimistic``: ties broken worst-first (relevant sentences last within each tie group);
* ``default``: the measure as reported (nDCG: expectation over tie orderings; AP: scikit-learn's
  block AP, the paper's);
* ``expected``: the expectation over uniform random orderings of tied scores
  (:attr:`Measure.expectation`; equal to ``default`` for nDCG, ``AP(ties=expected)`` for AP);
* ``optimistic``: ties broken best-first.

``pessimistic <= expected <= optimistic`` always; block AP is never below ``pessimistic`` but
can exceed ``expected`` and even ``optimistic``. The spread between the bounds is what an
arbitrary tie-breaking rule could report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sourcesum.data import Split
from sourcesum.evaluation.evaluate import Evaluation, evaluate_split
from sourcesum.evaluation.measures import DEFAULT_MEASURES, Measure
from sourcesum.evaluation.qrels import Run

TIE_RULES = ("pessimistic", "default", "expected", "optimistic")


def tie_shares(split: Split, scores: Mapping[str, Sequence[float]]) -> tuple[float, float]:
    """``(share of pairs with a tie, share of sentences tied with another in their pair)``."""
    pairs_tied = sentences_tied = sentences = 0
    for row in Run.of_split(split, scores, "scores").rows:
        _, counts = np.unique(np.asarray(row, dtype=float), return_counts=True)
        tied = int(counts[counts > 1].sum())
        pairs_tied += tied > 0
        sentences_tied += tied
        sentences += len(row)
    return pairs_tied / len(split), sentences_tied / sentences


def tie_report(
    split: Split,
    scores: Mapping[str, Sequence[float]],
    system: str,
    measures: Sequence[Measure] = DEFAULT_MEASURES,
    evaluation: Evaluation | None = None,
) -> dict[str, Any]:
    """Tie shares plus ``{measure name: {rule: split mean}}`` for the rules of :data:`TIE_RULES`
    (``expected`` only for measures with an :attr:`~Measure.expectation`). ``evaluation``: the
    scores' evaluation under the default rule if already computed (only what it lacks is)."""
    pair_share, sentence_share = tie_shares(split, scores)
    report: dict[str, Any] = {"pairs_with_ties": pair_share, "sentences_tied": sentence_share}
    expectations = [m.expectation for m in measures if m.expectation is not None]
    wanted = list(dict.fromkeys([*measures, *expectations]))
    have = set(evaluation.measures) if evaluation is not None else set()
    missing = [m for m in wanted if m not in have]
    extra = evaluate_split(split, scores, system, missing) if missing else None

    def default_mean(measure: Measure) -> float:
        source = evaluation if measure in have else extra
        assert source is not None  # every wanted measure is in one of the two
        return source.mean(measure)

    bounds = {
        rule: evaluate_split(split, scores, system, measures, tiebreak=rule) for rule in ("worst", "best")
    }
    for measure in measures:
        values = {
            "pessimistic": bounds["worst"].mean(measure),
            "default": default_mean(measure),
            "optimistic": bounds["best"].mean(measure),
        }
        if measure.expectation is not None:
            values["expected"] = default_mean(measure.expectation)
        report[measure.name] = {rule: values[rule] for rule in TIE_RULES if rule in values}
    return report
