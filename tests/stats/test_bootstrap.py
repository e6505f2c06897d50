"""Bootstrap and Holm (sourcesum.stats.bootstrap) against scipy / slow references; document
resampling on the synthetic splits; lead against random on real XSum (the sign-flip tests are in
tests/stats/test_significance.py)."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum import stats
from sourcesum.data import load_split
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.rankers import create_ranker
from sourcesum.stats.significance import cluster_contributions, decide_family, seed_for


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
    from scipy import stats as scipy_stats  # here, not at collection: a second to import

    ref = scipy_stats.bootstrap(
        (values,), np.mean, n_resamples=20_000, method="percentile", random_state=np.random.default_rng(5)
    ).confidence_interval
    assert low == pytest.approx(ref.low, abs=2e-3) and high == pytest.approx(ref.high, abs=2e-3)


def test_identical_systems_have_bootstrap_p_one():
    values = np.random.default_rng(0).random(50)
    p, low, high = stats.paired_bootstrap_test(values, values)
    assert p == 1.0 and low == high == 0.0


def test_holm_adjustment():
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, 0.2]) == pytest.approx([0.5, 0.4])


def _per_pair(name, split):
    ranker = create_ranker(name)
    return evaluate_split(split, {p.id: ranker.score(p) for p in split}, name).per_pair


@pytest.mark.real_data
def test_lead_beats_random_on_xsum_far_below_001():
    split = load_split("xsum_pegasus")
    lead, random = _per_pair("lead", split), _per_pair("random", split)
    groups = list(split.clusters)
    assert groups == [p.document_key for p in split]
    for measure in (NDCG, AP):
        diffs = lead[measure.name].to_numpy() - random[measure.name].to_numpy()
        [marked] = decide_family([cluster_contributions(diffs, groups)], [seed_for("lead", "random")])
        assert marked.count.p < 0.001 and marked.decision == "significant"
        p_bootstrap, low, _ = stats.paired_bootstrap_test(
            lead[measure.name].to_numpy(), random[measure.name].to_numpy(), groups=groups
        )
        assert p_bootstrap < 0.001 and low > 0


def test_batched_statistics_equal_one_call_per_vector():
    rng = np.random.default_rng(4)
    groups = rng.integers(0, 40, 120)
    vectors = [rng.random(120) for _ in range(5)]
    vectors[3][[2, 7]] = np.nan  # undefined pairs: batched only with vectors missing the same
    each = stats.bootstrap_means_each(vectors, 500, 3, groups)
    for vector, means in zip(vectors, each, strict=True):
        assert np.array_equal(means, stats.bootstrap_means(vector, 500, 3, groups)[0])


@pytest.mark.parametrize(
    "first,second",
    [
        ("synth_alpha_sys", "synth_alpha_ref"),
        ("synth_beta_sys", "synth_beta_ref"),
        pytest.param("xsum_pegasus", "xsum_reference", marks=pytest.mark.real_data),
        pytest.param("cnn_pegasus", "cnn_reference", marks=pytest.mark.real_data),
    ],
)
def test_the_two_splits_of_a_corpus_draw_the_same_documents(first, second):
    """The Avg CI claim: each split is resampled by cluster (its document) from the same seed,
    so the splits of one corpus (same documents) draw the same documents in every resample,
    whatever the order of their pairs."""
    a, b = load_split(first), load_split(second)
    documents = sorted(set(a.clusters))
    assert documents == sorted(set(b.clusters)) and list(a.clusters) == [p.document_key for p in a]

    def drawn(keys, documents=documents):
        indicators = np.array([[float(k == d) for k in keys] for d in documents])
        return stats.bootstrap_means(indicators, 300, stats.DEFAULT_SEED, keys) > 0

    draws = drawn(list(a.clusters))
    assert np.array_equal(draws, drawn(list(b.clusters)))
    assert np.array_equal(draws, drawn(list(b.clusters)[::-1]))  # pair order does not matter
    # each document is drawn in some resamples and left out of others
    assert draws.any(axis=1).all() and not draws.all(axis=1).any()
