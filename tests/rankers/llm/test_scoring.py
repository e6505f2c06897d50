"""Expected ratings (sourcesum.rankers.llm.scoring): the rating tree against brute-force
enumeration, pruning counted and bounded, and every fallback counted."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from sourcesum.rankers.llm.scale import Scale
from sourcesum.rankers.llm.scoring import Diagnostics, Dist, Rating, rating_distributions

TOKENS = ["0", "1", "5", "7", "10", "00", " 3", "\n", ".", ".5", "x", " "]


def _toy_dist(path: tuple) -> list[tuple[str, float, str]]:
    """A deterministic pseudo-random next-token distribution over TOKENS for each path."""
    seed = int(hashlib.sha256("|".join(path).encode()).hexdigest()[:8], 16)
    weights = np.random.default_rng(seed).random(len(TOKENS)) ** 3
    weights /= weights.sum()
    return [(t, float(w), t) for t, w in zip(TOKENS, weights, strict=True)]


def _brute_force(scale: Scale, depth: int) -> tuple[dict[str, float], float]:
    """P(rating) by enumerating every token sequence until the reading rule stops."""
    ratings: dict[str, float] = {}
    invalid = 0.0
    stack = [((), "", 1.0)]
    while stack:
        path, text, mass = stack.pop()
        assert len(path) <= depth
        for token, prob, _ in _toy_dist(path):
            read, stopped = scale.extend(text, token, first=not path)
            if stopped:
                if scale.value(read) is None:
                    invalid += mass * prob
                else:
                    ratings[read] = ratings.get(read, 0.0) + mass * prob
            else:
                stack.append((path + (token,), read, mass * prob))
    return ratings, invalid


@pytest.mark.parametrize("spec", ["0-9", "0-100", "1-5", "0-1.00"])
def test_rating_tree_equals_brute_force_enumeration(spec):
    scale = Scale.parse(spec)
    expected, invalid = _brute_force(scale, depth=8)
    [got] = rating_distributions(scale, 1, lambda nodes: [Dist(_toy_dist(p)) for _, p in nodes], min_prob=0.0)
    assert set(got.ratings) == set(expected)
    for key, value in expected.items():
        assert got.ratings[key] == pytest.approx(value, rel=1e-12)
    assert got.invalid == pytest.approx(invalid, rel=1e-12)
    assert got.valid + got.invalid == pytest.approx(1.0)
    mean = sum(p * scale.ratings[r] for r, p in expected.items()) / sum(expected.values())
    assert got.expected(scale) == pytest.approx(mean, rel=1e-12)


def test_pruning_is_counted_and_bounded():
    scale = Scale.parse("0-100")
    oracle = lambda nodes: [Dist(_toy_dist(p)) for _, p in nodes]  # noqa: E731
    [exact] = rating_distributions(scale, 1, oracle, min_prob=0.0)
    [pruned] = rating_distributions(scale, 1, oracle, min_prob=0.05)
    assert pruned.pruned > 0 and pruned.nodes < exact.nodes
    assert pruned.valid + pruned.invalid + pruned.pruned == pytest.approx(1.0)
    bound = pruned.pruned / pruned.valid * 100
    assert abs(pruned.expected(scale) - exact.expected(scale)) <= bound


def test_diagnostics_count_every_fallback():
    scale, diag = Scale.parse("0-9"), Diagnostics()
    assert diag.score(scale, Rating(ratings={"4": 0.5, "6": 0.5}), None) == 5.0
    assert diag.score(scale, Rating(invalid=1.0), "6 out of 9") == 6.0
    assert diag.score(scale, None, "I think 5") == 0.0  # not a rating by the reading rule
    report = diag.report()
    assert report["expected"] == 1 and report["greedy_fallback"] == 1 and report["unrated"] == 1
    assert report["sentences"] == 3 and report["mean_valid_mass"] == 0.5
    assert diag.rate(scale, Rating(invalid=1.0), "no") is None  # unrated: the ranker decides
    assert diag.report()["unrated"] == 2
