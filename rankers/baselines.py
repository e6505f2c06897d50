"""Reference rankers: position (lead), chance (random) and the annotators' own votes (oracle)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sourcesum.data.pairs import Pair
from sourcesum.errors import RankerError
from sourcesum.params import Param
from sourcesum.rankers.base import Ranker, register
from sourcesum.rankers.context import ProtocolSpec, TrainingData


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
        scores: list[float] = rng.random(pair.n_sentences).tolist()
        return scores


@register
class OracleRanker(Ranker):
    """The graded relevance itself (number of 1-votes): an upper bound and a pipeline check.

    It must score nDCG = AP = 1 on every pair with a relevant sentence: sentences with equal
    votes tie, but ties among equal grades change neither DCG nor AP. A reference row: it reads
    the labels of the very pairs it scores, under the ``own`` protocol, which the harness allows
    for reference rows only.
    """

    name = "oracle"
    version = "1"
    reference = True

    @classmethod
    def training_protocol(cls, params: Mapping[str, Any]) -> ProtocolSpec:
        return ProtocolSpec("own")

    def train(self, data: TrainingData) -> None:
        self._graded = {p.id: j.graded for p, j in zip(data.pairs, data.judgments, strict=True)}

    def score(self, pair: Pair) -> Sequence[float]:
        graded = self.__dict__.get("_graded", {}).get(pair.id)
        if graded is None:
            raise RankerError(f"ranker {self.name}: no labels for pair {pair.id}; the runner trains it first")
        return [float(g) for g in graded]
