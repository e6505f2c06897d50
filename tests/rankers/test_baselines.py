"""The reference rankers (sourcesum.rankers.baselines): random is reproducible and seeded."""

from __future__ import annotations

import pytest
from sourcesum.data import load_split
from sourcesum.rankers import create_ranker


@pytest.fixture
def split():
    """5 pairs on 5 documents: batches of 2 pairs are [0, 1], [2, 3], [4]."""
    return load_split("synth_alpha_sys_all")


def test_random_is_reproducible_and_seeded(split):
    pair = split.pairs[0]
    assert create_ranker("random").score(pair) == create_ranker("random").score(pair)
    assert create_ranker("random", seed=1).score(pair) != create_ranker("random").score(pair)
    assert create_ranker("random", seed=3).label == "random(seed=3)"
