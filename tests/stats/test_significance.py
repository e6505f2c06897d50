"""The sign-flip tests and their decision rule (sourcesum.stats.significance) against brute-force
enumeration, scipy and the binomial distribution: exact counts, Monte Carlo counts within their
error, Clopper-Pearson intervals, Holm on interval ends, resampling until decided, undecided at
the cap, averages whose shared clusters flip together, seeds that depend on a test's identity
only."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest
from sourcesum import stats
from sourcesum.stats import significance as sig
from sourcesum.stats.cache import StatsCache


def brute_force_p(contributions: np.ndarray) -> float:
    patterns = np.array(list(itertools.product([-1.0, 1.0], repeat=len(contributions))))
    observed = abs(contributions.sum())
    return float(np.mean(np.abs(patterns @ contributions) >= observed - 1e-12))


def uniform_contributions(positive: int, total: int) -> tuple[np.ndarray, float]:
    """``total`` clusters of equal weight, ``positive`` of them +1: ``|sum s_g c_g|`` is
    ``|2B - total|`` with ``B ~ Binomial(total, 1/2)``, so the exact p is a binomial tail."""
    from scipy import stats as scipy_stats  # here, not at collection: a second to import

    c = np.array([1.0] * positive + [-1.0] * (total - positive)) / total
    k = abs(2 * positive - total)
    p = float(
        scipy_stats.binom.sf((total + k) / 2 - 1, total, 0.5)
        + scipy_stats.binom.cdf((total - k) / 2, total, 0.5)
    )
    return c, p


def test_exact_count_is_the_brute_force_enumeration_and_scipys_exact_test():
    from scipy import stats as scipy_stats  # here, not at collection: a second to import

    rng = np.random.default_rng(3)
    a, b = rng.random(10), rng.random(10)
    c = sig.cluster_contributions(a - b, [str(i) for i in range(10)])
    count = sig.exact_count(c)
    assert count.exact and count.flips == 2**10 and count.standard_error == 0.0
    assert count.p == brute_force_p(c)
    assert count.interval() == (count.p, count.p)
    scipy_p = scipy_stats.permutation_test(
        (a, b), lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=np.inf
    ).pvalue
    assert count.p == pytest.approx(scipy_p, abs=1e-12)


def test_clusters_flip_together():
    diffs = np.array([0.3, 0.1, -0.2, 0.4, 0.05])
    clusters = ["a", "a", "b", "c", "c"]
    c = sig.cluster_contributions(diffs, clusters)
    np.testing.assert_allclose(c, [0.4 / 5, -0.2 / 5, 0.45 / 5], atol=1e-15)
    # undefined pairs are left out of both the sums and the count
    c_nan = sig.cluster_contributions(np.array([0.3, np.nan, 0.2]), ["a", "a", "b"])
    np.testing.assert_allclose(c_nan, [0.3 / 2, 0.2 / 2], atol=1e-15)


@pytest.mark.parametrize("positive,total", [(21, 30), (17, 30), (26, 40)])
def test_monte_carlo_p_is_within_its_error_of_the_exact_binomial_p(positive, total):
    c, exact = uniform_contributions(positive, total)
    counts = sig.batch_counts(c, sig.seed_for("mc", str(positive), str(total)), 0, 20)
    count = sig.from_batches(counts)
    assert count.flips == 20 * sig.BATCH_FLIPS
    assert abs(count.p - exact) <= 4 * count.standard_error
    low, high = count.interval()
    assert low <= exact <= high
    assert count.standard_error <= 0.01  # at most 1% for any p


def test_clopper_pearson_is_scipys_exact_binomial_interval():
    from scipy import stats as scipy_stats  # here, not at collection: a second to import

    for x, n in [(0, 10_000), (3, 10_000), (500, 10_000), (10_000, 10_000), (7, 20)]:
        ref = scipy_stats.binomtest(x, n).proportion_ci(confidence_level=sig.LOOK_LEVEL, method="exact")
        low, high = sig.clopper_pearson(x, n)
        assert low == pytest.approx(ref.low, abs=1e-12) and high == pytest.approx(ref.high, abs=1e-12)


def test_each_look_is_bonferroni_corrected_over_the_looks_a_test_can_take():
    assert sig.looks_schedule() == (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000)
    assert sig.LOOKS == 11 and sig.LOOK_LEVEL == pytest.approx(1 - 0.01 / 11)
    c, exact = uniform_contributions(21, 30)
    seen = []
    sig.decide_family(
        [c], [sig.seed_for("looks")], remember=lambda i, counts: seen.append(len(counts)), alpha=exact
    )
    assert tuple(seen) == sig.looks_schedule()  # the batches drawn at each look


def test_batches_are_the_same_whenever_they_are_drawn():
    c = np.random.default_rng(1).normal(size=40)
    seed = sig.seed_for("batches")
    assert sig.batch_counts(c, seed, 0, 6) == sig.batch_counts(c, seed, 0, 2) + sig.batch_counts(
        c, seed, 2, 6
    )
    assert sig.batch_counts(c, seed, 0, 3) != sig.batch_counts(c, sig.seed_for("other"), 0, 3)


def test_identical_systems_have_p_one():
    values = np.random.default_rng(0).random(50)
    c = sig.cluster_contributions(values - values, [str(i) for i in range(50)])
    [marked] = sig.decide_family([c], [sig.seed_for("same")])
    assert marked.count.p == 1.0 and marked.decision == "not significant"


def test_holm_is_applied_to_each_end_of_the_intervals():
    intervals = [(0.001, 0.004), (0.02, 0.03), (0.01, 0.05)]
    bounds = sig.holm_bounds(intervals)
    assert [b[0] for b in bounds] == stats.holm([0.001, 0.02, 0.01])
    assert [b[1] for b in bounds] == stats.holm([0.004, 0.03, 0.05])
    assert sig.decide((0.01, 0.049)) == "significant"
    assert sig.decide((0.05, 0.2)) == "not significant"
    assert sig.decide((0.04, 0.06)) == "undecided"


def test_a_mark_near_the_threshold_is_resampled_until_decided():
    c, exact = uniform_contributions(21, 30)  # p = .0428
    [marked] = sig.decide_family([c], [sig.seed_for("near")], alpha=exact * 1.05)
    assert marked.decision == "significant"
    assert sig.BATCH_FLIPS < marked.count.flips < sig.MAX_FLIPS  # the first batch alone straddled
    assert marked.adjusted[1] < exact * 1.05
    [far] = sig.decide_family([c], [sig.seed_for("near")], alpha=0.5)
    assert far.count.flips == sig.BATCH_FLIPS  # decided by the first batch


def test_a_mark_at_the_threshold_stays_undecided_at_the_cap_never_significant():
    c, exact = uniform_contributions(21, 30)
    [marked] = sig.decide_family([c], [sig.seed_for("at")], alpha=exact)
    assert marked.decision == "undecided"
    assert marked.count.flips == sig.MAX_FLIPS == 10_000_000
    assert marked.adjusted[0] < exact <= marked.adjusted[1]


def test_few_clusters_are_enumerated_exactly():
    c = np.random.default_rng(5).normal(size=sig.EXACT_CLUSTERS)
    [marked] = sig.decide_family([c], [0])
    assert marked.count.exact and marked.count.p == brute_force_p(c)
    [sampled] = sig.decide_family([np.append(c, 0.1)], [0])
    assert not sampled.count.exact


def test_decisions_use_only_the_batches_the_rule_asks_for():
    """A memo holding more batches than needed changes no decision or p-value."""
    rng = np.random.default_rng(7)
    family = [rng.normal(0.02, 0.1, 60) for _ in range(4)]
    seeds = [sig.seed_for("memo", str(i)) for i in range(4)]
    plain = sig.decide_family(family, seeds)
    memo = {i: sig.batch_counts(c, s, 0, 64) for i, (c, s) in enumerate(zip(family, seeds, strict=True))}
    with_memo = sig.decide_family(family, seeds, memo=lambda i: memo[i])
    assert plain == with_memo


def test_adding_a_test_changes_no_other_tests_draws():
    rng = np.random.default_rng(8)
    family = [rng.normal(0.3, 1, 50) for _ in range(3)]
    seeds = [sig.seed_for("row", str(i)) for i in range(3)]
    two = sig.decide_family(family[:2], seeds[:2])
    three = sig.decide_family(family, seeds)
    for a, b in zip(two, three, strict=False):
        n = min(a.count.batches, b.count.batches)
        assert sig.batch_counts(family[0], seeds[0], 0, n) == sig.batch_counts(family[0], seeds[0], 0, n)
        if a.count.batches == b.count.batches:
            assert a.count == b.count


def test_the_average_flips_shared_clusters_together():
    """The Avg test's statistic is the mean of the split means, and a cluster in both splits
    flips in both: the exact p equals brute force over cluster sign patterns."""
    rng = np.random.default_rng(9)
    clusters_a = ["d1", "d1", "d2", "d3", "d4"]  # two splits over the same four documents
    clusters_b = ["d1", "d2", "d3", "d3", "d4"]
    da, db = rng.normal(0.05, 0.1, 5), rng.normal(0.05, 0.1, 5)
    c = sig.average_contributions([(da, clusters_a), (db, clusters_b)])
    assert len(c) == 4
    names = ["d1", "d2", "d3", "d4"]
    flips = []
    for pattern in itertools.product([-1.0, 1.0], repeat=4):
        sign = dict(zip(names, pattern, strict=True))
        mean_a = np.mean([v * sign[g] for v, g in zip(da, clusters_a, strict=True)])
        mean_b = np.mean([v * sign[g] for v, g in zip(db, clusters_b, strict=True)])
        flips.append(abs((mean_a + mean_b) / 2))
    observed = abs((da.mean() + db.mean()) / 2)
    assert abs(c.sum()) == pytest.approx(observed, abs=1e-15)
    assert sig.exact_count(c).p == pytest.approx(np.mean(np.array(flips) >= observed - 1e-12), abs=1e-15)


def test_seeds_come_from_the_identity_alone_and_are_stable_across_processes():
    here = sig.seed_for("best", "bm25|{}", "lead|{}", "xsum_pegasus", "nDCG")
    code = "from sourcesum.stats.significance import seed_for; print(seed_for('best', 'bm25|{}', 'lead|{}', 'xsum_pegasus', 'nDCG'))"
    there = int(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )
    assert here == there
    assert here != sig.seed_for("best", "bm25|{}", "lead|{}", "xsum_pegasus", "AP")
    assert 0 <= here < 2**64


def _marks(seed: int, cache: StatsCache) -> dict[str, object]:
    """Every mark of the committed board with the statistics computed from ``seed`` (values
    ``cache`` holds are read from it)."""
    from sourcesum import paths
    from sourcesum.board import build_view, collect_declared, read_declaration
    from sourcesum.board.statistics import add_all_statistics
    from sourcesum.store.stores import ScoreStore

    board = collect_declared(
        read_declaration(paths.DECLARATION_PATH),
        ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False),
    )
    stats = add_all_statistics(board, cache=cache, seed=seed)
    view = build_view(board, stats)
    tests = [m for r in board.rows for m in (*stats.of(r).vs_best.values(), *stats.of(r).vs_lead.values())]
    assert stats.human is not None
    tests += list(stats.human.vs_human.values())
    assert tests and max(m.count.standard_error for m in tests) <= 0.01  # the stated MC error
    return {
        "cells": {
            (r.label, column.header): cell.mark
            for r in view.ordered
            for column, cell in zip(view.columns, r.cells, strict=True)
        },
        "lead": [(item.title, item.better, item.undecided) for item in view.lead],
        "human": {key: stats.human.versus_human(*key) for key in stats.human.vs_human},
    }


@pytest.mark.real_data
@pytest.mark.slow  # the board's statistics from seed 1 with no memo (seed 0's: the run's render)
def test_the_committed_boards_marks_do_not_depend_on_the_seed(committed_render, monkeypatch):
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(committed_render.cache))
    # seed 0 is the board's: the memo the run's cold render of the committed board filled holds it
    zero, one = _marks(0, StatsCache()), _marks(1, StatsCache(persist=False))
    assert zero == one
    cells = list(zero["cells"].values())
    assert cells.count("tied") > 10 and "best" in cells  # the comparison is not vacuous
