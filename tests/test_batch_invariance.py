"""Which rankers' scores depend on how pairs are batched, and by how much: every built-in ranker
scores the synthetic pairs in one batch and one pair at a time; the two must agree bit for bit,
or within the ranker's declared ``reproduction_tolerance`` (the bound ``sourcesum verify``, sharded
and resumed runs rely on)."""

from __future__ import annotations

import pytest
from sourcesum.data import load_split
from sourcesum.rankers import RANKERS, create_ranker
from sourcesum.rankers.context import BaseScores
from sourcesum.runner.configs import Configuration
from sourcesum.runner.protocols import protocol
from sourcesum.runner.provide import training_data
from sourcesum.runner.run import base_scores
from sourcesum.store.stores import ScoreStore

SPLITS = ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref", "synth_alpha_sys_all")
CHEAP = ["lead", "random", "bm25", "rouge1", "rouge2", "rougeL", "tfidf", "lexrank"]
MODELS = [pytest.param(name, marks=pytest.mark.slow) for name in ("embedding", "bertscore")]


def scored(ranker, pairs, together: bool) -> list[list[float]]:
    if together:
        return [list(s) for s in ranker.score_batch(pairs)]
    return [list(ranker.score_batch([pair])[0]) for pair in pairs]


def largest_difference(a: list[list[float]], b: list[list[float]]) -> float:
    return max(abs(x - y) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True))


@pytest.mark.parametrize("name", CHEAP + MODELS)
def test_scores_do_not_depend_on_batching_beyond_the_declared_tolerance(name):
    for split_name in SPLITS:
        split = load_split(split_name)
        rankers = [create_ranker(name) for _ in range(2)]
        for ranker in rankers:
            ranker.fit(split.pairs)
        difference = largest_difference(
            scored(rankers[0], split.pairs, True), scored(rankers[1], split.pairs, False)
        )
        tolerance = RANKERS.get(name).reproduction_tolerance
        assert difference <= tolerance, (split_name, difference)
        if tolerance == 0:
            assert difference == 0.0


@pytest.mark.parametrize("name", ["fusion", "learned"])
def test_composites_score_each_pair_from_its_own_bases(name, tmp_path):
    config = Configuration.of(name, {"rankers": "bm25,lead"})
    store = ScoreStore(tmp_path / "store")
    split = load_split("synth_alpha_sys")
    names = [split.name] + (
        protocol("cross-corpus").training_splits(config.protocol, split.name) if config.protocol else []
    )
    bases: BaseScores = base_scores(config, names, store)
    results = []
    for together in (True, False):
        ranker = config.create()
        ranker.use_bases(bases)
        if config.protocol:
            [assignment] = protocol(config.protocol.name).assign(config.protocol, split, split.pairs)
            ranker.train(training_data(assignment, bases))
        results.append(scored(ranker, split.pairs, together))
    assert results[0] == results[1]
