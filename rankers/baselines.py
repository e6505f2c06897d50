"""Reference rankers: position (lead), chance (random) and the annotators' own votes (oracle)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from sourcesum.data import Pair
from sourcesum.params import Param
from sourcesum.rankers.base import Ranker, register


@register
class LeadRanker(Ranker):
    """Earlier sentences rank higher: score of sentence ``i`` is ``-i``. Costs nothing."""

    name = "lead"
    version = "1"

    def score(self, pair: Pair) -> Sequence[float]:
        return [float(-i) for i in range(pair.n_sentences)]


@register
class RandomRanker(Ranker):
    """Uniform random scores, reproducible per (seed, pair id) whatever the run order."""

    name = "random"
    version = "1"

    param_specs = {"seed": Param(int, "random seed (scores depend on seed and pair id only)")}

    def __init__(self, seed: int = 0):
        self.seed = seed

    def score(self, pair: Pair) -> Sequence[float]:
        digest = hashlib.sha256(f"{self.seed}:{pair.id}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        return rng.random(pair.n_sentences).tolist()


@register
class OracleRanker(Ranker):
    """The graded relevance itself (number of 1-votes): an upper bound and a pipeline check.

    It must score nDCG = AP = 1 on every pair with a relevant sentence: sentences with equal
    votes tie, but ties among equal grades change neither DCG nor AP.
    """

    name = "oracle"
    version = "1"
    reference = True

    def score(self, pair: Pair) -> Sequence[float]:
        return pair.graded.tolist()
