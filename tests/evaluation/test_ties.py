"""The tie report (sourcesum.evaluation.ties): bounds and shares on the synthetic splits."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.data import load_split
from sourcesum.evaluation.ties import tie_report, tie_shares
from sourcesum.rankers import create_ranker


@pytest.mark.parametrize("name", ["synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"])
def test_ties_report_bounds_and_shares(name):
    split = load_split(name)
    lead = create_ranker("lead")
    assert tie_shares(split, {p.id: lead.score(p) for p in split}) == (0.0, 0.0)
    constant = {p.id: [0.0] * p.n_sentences for p in split}
    report = tie_report(split, constant, "constant")
    assert report["pairs_with_ties"] == 1.0 and report["sentences_tied"] == 1.0
    ndcg, ap = report["nDCG"], report["AP"]
    assert (
        ndcg["pessimistic"] < ndcg["default"] == ndcg["expected"] < ndcg["optimistic"] == pytest.approx(1.0)
    )
    assert ap["pessimistic"] < ap["expected"] < ap["optimistic"] == pytest.approx(1.0)
    # all sentences tie, so scikit-learn's block AP is the share of relevant sentences (over the
    # pairs that have one: AP is undefined on the others, e.g. Alpha-Ref's one-annotator pair)
    shares = [split.binary(p.id).mean() for p in split if split.binary(p.id).any()]
    assert ap["default"] == pytest.approx(np.mean(shares), abs=1e-12)
    # and tie-averaged nDCG is the mean over orderings: equal gains per rank, graded sum * mean weight
    weights = [np.mean(1 / np.log2(np.arange(2, p.n_sentences + 2))) for p in split]
    ideal = [
        np.sum(np.sort(split.graded(p.id))[::-1] / np.log2(np.arange(2, p.n_sentences + 2))) for p in split
    ]
    expected_ndcg = [split.graded(p.id).sum() * w / i for p, w, i in zip(split, weights, ideal, strict=True)]
    assert ndcg["default"] == pytest.approx(np.mean(expected_ndcg), abs=1e-12)
