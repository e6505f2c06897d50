"""Bootstrap, randomization test and Holm against scipy / slow references; real-split checks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as scipy_stats

from sourcesum import stats
from sourcesum.data import load_split
from sourcesum.evaluation import evaluate
from sourcesum.human import human_per_pair
from sourcesum.measures import AP, NDCG
from sourcesum.ties import tie_report, tie_shares
from sourcesum.rankers import create_ranker


def test_vectorized_bootstrap_equals_a_slow_loop_with_the_same_draws():
    rng = np.random.default_rng(1)
    values = rng.random(30)
    means = stats.bootstrap_means(values, resamples=500, seed=7)[0]
    draws = np.random.default_rng(7).integers(0, 30, size=(500, 30))
    slow = np.array([values[row].mean() for row in draws])
    np.testing.assert_allclose(means, slow, atol=1e-12)


def test_grouped_bootstrap_equals_a_slow_loop_over_groups():
    values = np.array([0.1, 0.5, 0.9, 0.3, 0.7, 0.2])
    groups = ["a", "a", "b", "c", "c", "c"]
    means = stats.bootstrap_means(values, resamples=300, seed=3, groups=groups)[0]
    members = {0: [0, 1], 1: [2], 2: [3, 4, 5]}
    draws = np.random.default_rng(3).integers(0, 3, size=(300, 3))
    slow = [np.mean([values[i] for g in row for i in members[g]]) for row in draws]
    np.testing.assert_allclose(means, slow, atol=1e-12)


def test_bootstrap_ci_agrees_with_scipy_percentile_bootstrap():
    values = np.random.default_rng(2).normal(0.7, 0.1, 119)
    low, high = stats.bootstrap_ci(values, resamples=20_000, seed=0)
    ref = scipy_stats.bootstrap((values,), np.mean, n_resamples=20_000, method="percentile",
                                random_state=np.random.default_rng(5)).confidence_interval
    assert low == pytest.approx(ref.low, abs=2e-3) and high == pytest.approx(ref.high, abs=2e-3)


def test_randomization_test_matches_exact_enumeration():
    a = np.array([0.9, 0.8, 0.75, 0.6, 0.95, 0.7, 0.85, 0.65, 0.8, 0.9])
    b = np.array([0.7, 0.82, 0.6, 0.5, 0.9, 0.72, 0.6, 0.66, 0.7, 0.8])
    diff = a - b
    flips = np.array(list(itertools.product([-1, 1], repeat=len(diff))))
    exact = np.mean(np.abs(flips @ diff) >= abs(diff.sum()) - 1e-12)
    ours = stats.randomization_test(a, b, resamples=200_000, seed=0)
    assert ours == pytest.approx(exact, abs=0.005)
    scipy_p = scipy_stats.permutation_test((a, b), lambda x, y: np.mean(x - y), permutation_type="samples",
                                           n_resamples=np.inf).pvalue
    assert ours == pytest.approx(scipy_p, abs=0.005)


def test_identical_systems_have_p_one():
    values = np.random.default_rng(0).random(50)
    assert stats.randomization_test(values, values) == 1.0
    p, low, high = stats.paired_bootstrap_test(values, values)
    assert p == 1.0 and low == high == 0.0


def test_holm_adjustment():
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, 0.2]) == pytest.approx([0.5, 0.4])


def _per_pair(name, split):
    ranker = create_ranker(name)
    return evaluate(split, {p.id: ranker.score(p) for p in split}, name).per_pair


def test_lead_beats_random_on_xsum_far_below_001():
    split = load_split("xsum_pegasus")
    lead, random = _per_pair("lead", split), _per_pair("random", split)
    groups = [p.document_key for p in split]
    for measure in (NDCG, AP):
        comparison = stats.compare("lead", "random", split.name, measure.name, lead[measure.name].to_numpy(),
                                   random[measure.name].to_numpy(), groups=groups)
        assert comparison.p_randomization < 0.001 and comparison.p_bootstrap < 0.001
        assert comparison.ci_low > 0


def test_ties_report_bounds_and_shares():
    split = load_split("xsum_reference")
    lead = create_ranker("lead")
    assert tie_shares(split, {p.id: lead.score(p) for p in split}) == (0.0, 0.0)
    constant = {p.id: [0.0] * p.n_sentences for p in split}
    report = tie_report(split, constant, "constant")
    assert report["pairs_with_ties"] == 1.0 and report["sentences_tied"] == 1.0
    ndcg = report["nDCG"]
    assert ndcg["pessimistic"] < ndcg["average"] < ndcg["optimistic"] == pytest.approx(1.0)


def test_human_row_definition_on_real_data():
    split = load_split("cnn_pegasus")
    frame = human_per_pair(split)
    assert frame["nDCG"].isna().sum() == 6  # pairs with varying annotator counts are left out
    assert 0.8 < frame["nDCG"].mean() < 1.0 and 0.6 < frame["AP"].mean() < 1.0
    # a hand check on one pair: annotator 0's votes against the others'
    pair = next(p for p in split if len({len(v) for v in p.votes}) == 1)
    votes = np.array(pair.votes)
    from sourcesum.metrics import average_precision, ndcg

    k = votes.shape[1]
    expected = np.nanmean([ndcg(votes.sum(1) - votes[:, a], votes[:, a]) for a in range(k)])
    assert frame.loc[pair.id, "nDCG"] == pytest.approx(expected, abs=1e-12)
    aps = [average_precision(((votes.sum(1) - votes[:, a]) >= min(2, k - 1)).astype(float), votes[:, a])
           for a in range(k)]
    assert frame.loc[pair.id, "AP"] == pytest.approx(np.nanmean(aps), abs=1e-12)
