"""Metric kernels (sourcesum.evaluation.metrics) against scikit-learn, scipy and brute-force
enumeration of tie orderings."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sourcesum.evaluation import metrics
from sourcesum.evaluation.measures import parse_measure
from sourcesum.evaluation.metrics import Ranking, pad
from support.properties import examples


# The references, imported when a test first calls them: scikit-learn and SciPy cost 1.5 s to
# import, which collecting the suite need not pay.
def ndcg_score(*args, **kwargs) -> float:
    from sklearn.metrics import ndcg_score

    return float(ndcg_score(*args, **kwargs))


def average_precision_score(*args, **kwargs) -> float:
    from sklearn.metrics import average_precision_score

    return float(average_precision_score(*args, **kwargs))


def spearmanr(*args, **kwargs):
    from scipy.stats import spearmanr

    return spearmanr(*args, **kwargs)


TOL = 1e-12


def test_worked_example_ndcg_at_5():
    # Grades 0,3,1,0,2 ranked first, then 2 and 1; ideal 3,2,2,1,1.
    relevance = [0, 3, 1, 0, 2, 2, 1]
    scores = [7, 6, 5, 4, 3, 2, 1]
    dcg = 3 / math.log2(3) + 1 / math.log2(4) + 2 / math.log2(6)
    idcg = 3 + 2 / math.log2(3) + 2 / math.log2(4) + 1 / math.log2(5) + 1 / math.log2(6)
    assert dcg == pytest.approx(3.1665, abs=1e-4) and idcg == pytest.approx(6.0794, abs=1e-4)
    assert metrics.ndcg(relevance, scores, k=5) == pytest.approx(0.5209, abs=5e-5)
    assert metrics.ndcg(relevance, scores, k=5) == pytest.approx(dcg / idcg, abs=TOL)


def tie_heavy_lists(min_n: int, max_n: int, max_relevance: int, max_score: int, k_past_end: int):
    """(relevance, scores, k) triples whose integer scores take very few values (heavy ties)."""
    return st.integers(min_value=min_n, max_value=max_n).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, max_relevance), min_size=n, max_size=n),
            st.lists(st.integers(0, max_score), min_size=n, max_size=n),
            st.integers(1, n + k_past_end),
        )
    )


lists = tie_heavy_lists(2, 14, max_relevance=4, max_score=3, k_past_end=2)


@settings(max_examples=examples(3000), deadline=None)
@given(lists)
def test_ndcg_matches_sklearn_tie_averaged(case):
    relevance, raw_scores, k = case
    if sum(relevance) == 0:
        assert math.isnan(metrics.ndcg(relevance, raw_scores))
        return
    scores = np.array(raw_scores, dtype=float) * 0.37
    rel = np.array(relevance, dtype=float)
    for cutoff in (None, k):
        expected = ndcg_score([rel], [scores], k=cutoff, ignore_ties=False)
        assert abs(metrics.ndcg(rel, scores, k=cutoff) - expected) <= TOL
    exp_expected = ndcg_score([2**rel - 1], [scores], k=k, ignore_ties=False)
    assert abs(metrics.ndcg(rel, scores, k=k, gain="exponential") - exp_expected) <= TOL
    bin_expected = ndcg_score([(rel > 0).astype(float)], [scores], k=k, ignore_ties=False)
    assert abs(metrics.ndcg(rel, scores, k=k, gain="binary") - bin_expected) <= TOL


@settings(max_examples=examples(3000), deadline=None)
@given(lists)
def test_average_precision_matches_sklearn(case):
    relevance, raw_scores, _ = case
    binary = (np.array(relevance) >= 2).astype(float)
    if binary.sum() == 0:
        assert math.isnan(metrics.average_precision(binary, raw_scores))
        return
    expected = average_precision_score(binary, np.array(raw_scores, dtype=float))
    assert abs(metrics.average_precision(binary, raw_scores) - expected) <= TOL


@settings(max_examples=examples(1000), deadline=None)
@given(lists)
def test_spearman_matches_scipy(case):
    relevance, raw_scores, _ = case
    ours = metrics.spearman(relevance, raw_scores)
    if len(set(relevance)) < 2 or len(set(raw_scores)) < 2:
        assert math.isnan(ours)
        return
    assert abs(ours - spearmanr(raw_scores, relevance).statistic) <= 1e-12


def _tie_orderings(scores):
    """Every ordering of item indices consistent with descending scores."""
    n = len(scores)
    for perm in itertools.permutations(range(n)):
        if all(scores[perm[i]] >= scores[perm[i + 1]] for i in range(n - 1)):
            yield perm


def _brute(relevance, scores, per_ordering):
    values = [per_ordering([relevance[i] for i in perm]) for perm in _tie_orderings(scores)]
    return np.mean(values), min(values), max(values)


def _p_at_k(ranked, k):
    return sum(1 for r in ranked[:k] if r > 0) / k


def _rr(ranked):
    return next(1 / (i + 1) for i, r in enumerate(ranked) if r > 0)


small_lists = tie_heavy_lists(1, 6, max_relevance=1, max_score=2, k_past_end=1)


@settings(max_examples=examples(400), deadline=None)
@given(small_lists)
def test_cutoff_measures_and_rr_match_enumeration_of_ties(case):
    relevance, scores, k = case
    if sum(relevance) == 0:  # nothing relevant: P@k is 0, R@k and RR are undefined
        assert metrics.precision_at_k(relevance, scores, k) == 0.0
        assert math.isnan(metrics.recall_at_k(relevance, scores, k))
        assert math.isnan(metrics.reciprocal_rank(relevance, scores))
        return
    mean_p, _, _ = _brute(relevance, scores, lambda r: _p_at_k(r, k))
    assert abs(metrics.precision_at_k(relevance, scores, k) - mean_p) <= TOL
    assert abs(metrics.recall_at_k(relevance, scores, k) - mean_p * k / sum(relevance)) <= TOL
    mean_rr, _, _ = _brute(relevance, scores, _rr)
    assert abs(metrics.reciprocal_rank(relevance, scores) - mean_rr) <= TOL


def _ap(ranked):
    hits, total = 0, 0.0
    for i, r in enumerate(ranked):
        if r > 0:
            hits += 1
            total += hits / (i + 1)
    return total / hits


@settings(max_examples=examples(1500), deadline=None)
@given(tie_heavy_lists(1, 7, max_relevance=1, max_score=2, k_past_end=0))
def test_expected_ap_equals_mean_over_tie_orderings(case):
    relevance, scores, _ = case
    if sum(relevance) == 0:
        assert math.isnan(metrics.expected_average_precision(relevance, scores))
        return
    mean, low, high = _brute(relevance, scores, _ap)
    assert abs(metrics.expected_average_precision(relevance, scores) - mean) <= TOL
    rel, mask = pad([relevance])
    sc, _ = pad([scores])
    for tiebreak, expected in (("worst", low), ("best", high)):
        ranking = Ranking.from_scores(sc, mask, tiebreak, rel)
        assert abs(metrics.average_precision_batch(ranking, rel)[0] - expected) <= TOL
        # with ties broken the expectation is the ordinary AP of that ordering
        assert abs(metrics.expected_average_precision_batch(ranking, rel)[0] - expected) <= TOL
    # scikit-learn's block AP is never below worst-first (but may exceed the expectation)
    assert metrics.average_precision(relevance, scores) >= low - TOL
    if len(set(scores)) == len(scores):
        assert (
            abs(
                metrics.expected_average_precision(relevance, scores)
                - metrics.average_precision(relevance, scores)
            )
            <= TOL
        )


def test_block_ap_can_exceed_every_ordering():
    relevance, scores = [0, 0, 0, 0, 1, 1], [5, 4, 3, 2, 1, 1]
    assert metrics.average_precision(relevance, scores) == pytest.approx(1 / 3, abs=TOL)
    assert metrics.expected_average_precision(relevance, scores) == pytest.approx(4 / 15, abs=TOL)
    assert _brute(relevance, scores, _ap)[2] == pytest.approx(4 / 15, abs=TOL)


def _dcg(ranked):
    return sum(r / math.log2(i + 2) for i, r in enumerate(ranked))


@settings(max_examples=examples(300), deadline=None)
@given(small_lists)
def test_tie_averaging_equals_mean_over_orderings_and_bounds_are_extremes(case):
    relevance, scores, _ = case
    grades = [r * 2 + (i % 2) for i, r in enumerate(relevance)]  # graded, with some zeros
    if sum(grades) == 0:  # no gain anywhere: IDCG = 0, nDCG undefined
        assert math.isnan(metrics.ndcg(grades, scores))
        return
    ideal = _dcg(sorted(grades, reverse=True))
    mean, low, high = _brute(grades, scores, lambda r: _dcg(r) / ideal)
    assert abs(metrics.ndcg(grades, scores) - mean) <= TOL
    rel, mask = pad([grades])
    sc, _ = pad([scores])
    for tiebreak, expected in (("worst", low), ("best", high)):
        ranking = Ranking.from_scores(sc, mask, tiebreak, rel)
        assert abs(metrics.ndcg_batch(ranking, rel)[0] - expected) <= TOL


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(lists, min_size=1, max_size=20))
def test_batch_equals_per_list(cases):
    relevance = [c[0] for c in cases]
    scores = [c[1] for c in cases]
    rel, mask = pad(relevance)
    sc, _ = pad(scores)
    ranking = Ranking.from_scores(sc, mask)
    binary = (rel >= 2).astype(float)
    batch_ndcg = metrics.ndcg_batch(ranking, rel, k=3)
    batch_ap = metrics.average_precision_batch(ranking, binary)
    batch_eap = parse_measure("AP(ties=expected)").compute(ranking, binary)
    for i, (r, s, _) in enumerate(cases):
        np.testing.assert_allclose(batch_ndcg[i], metrics.ndcg(r, s, k=3), atol=TOL, equal_nan=True)
        b = (np.array(r) >= 2).astype(float)
        np.testing.assert_allclose(batch_ap[i], metrics.average_precision(b, s), atol=TOL, equal_nan=True)
        np.testing.assert_allclose(
            batch_eap[i], metrics.expected_average_precision(b, s), atol=TOL, equal_nan=True
        )


def test_input_errors_are_clear():
    with pytest.raises(ValueError, match="3 items but scores has 2"):
        metrics.ndcg([1, 0, 1], [0.5, 0.2])
    with pytest.raises(ValueError, match="finite"):
        metrics.ndcg([1, 0], [float("nan"), 1])
    with pytest.raises(ValueError, match="binary"):
        metrics.average_precision([2, 0], [1, 0])
    with pytest.raises(ValueError, match="k must be"):
        metrics.ndcg([1, 0], [1, 0], k=0)
