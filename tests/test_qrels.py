"""The typed qrels and runs (sourcesum.qrels) and the Ranker hooks built on one home each."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.data import load_split
from sourcesum.errors import RankerError, ScoreFileError
from sourcesum.evaluation import evaluate
from sourcesum.measures import AP, NDCG
from sourcesum.qrels import BINARY_MIN_VOTES, Qrels, Run, validated_row
from sourcesum.rankers import Ranker
from sourcesum.store import ScoreStore


@pytest.fixture(scope="module")
def split():
    return load_split("xsum_pegasus")


def test_split_qrels_hold_each_pairs_votes_and_the_threshold(split):
    qrels = Qrels.of_split(split)
    assert qrels is Qrels.of_split(split)  # built once per process
    assert qrels.pair_ids == tuple(p.id for p in split)
    for index, pair in enumerate(split):
        votes = [sum(v) for v in pair.votes]
        assert qrels.row(index, "graded").tolist() == votes
        assert qrels.row(index, "binary").tolist() == [float(v >= BINARY_MIN_VOTES) for v in votes]
        assert qrels.mask[index].sum() == pair.n_sentences
    assert not qrels.binary[~qrels.mask].any() and not qrels.graded[~qrels.mask].any()
    one_vote = Qrels.of_split(split, min_votes=1)
    assert one_vote.binary.sum() > qrels.binary.sum()
    assert np.array_equal(one_vote.binary, (qrels.graded >= 1) & qrels.mask)


def test_per_row_thresholds():
    qrels = Qrels.from_graded([[0, 1, 2], [1, 3]], min_votes=[1, 2])
    assert qrels.binary.tolist() == [[0, 1, 1], [0, 1, 0]]
    assert qrels.mask.tolist() == [[True, True, True], [True, True, False]]


def test_runs_name_the_source_and_pair_at_fault(split):
    good = {p.id: list(range(p.n_sentences)) for p in split}
    run = Run.of_split(split, good, "f.json")
    assert run.values.shape == Qrels.of_split(split).graded.shape
    assert [list(r) for r in run.rows] == [good[p.id] for p in split]
    target = split.pairs[3]
    missing = {k: v for k, v in good.items() if k != target.id}
    with pytest.raises(ScoreFileError, match=f"f.json: no scores for pair {target.id} of split xsum_pegasus"):
        Run.of_split(split, missing, "f.json")
    short = {**good, target.id: good[target.id][:-1]}
    n = target.n_sentences
    with pytest.raises(
        ScoreFileError, match=f"f.json: pair {target.id} has {n - 1} scores but {n} sentences"
    ):
        Run.of_split(split, short, "f.json")
    nan = {**good, target.id: [0.0, 1.0, float("nan"), *good[target.id][3:]]}
    with pytest.raises(
        ScoreFileError, match=rf"pair {target.id} has a non-finite score \(nan\) for sentence 2"
    ):
        Run.of_split(split, nan, "f.json")
    with pytest.raises(ScoreFileError, match=f"pair {target.id} has a non-finite"):
        evaluate(split, nan, "x")


def test_validated_row_converts_and_checks_with_the_callers_error(split):
    pair = split.pairs[0]
    assert validated_row(pair, np.arange(pair.n_sentences), "r") == [
        float(i) for i in range(pair.n_sentences)
    ]
    with pytest.raises(RankerError, match=f"ranker x: pair {pair.id} has non-numeric scores"):
        validated_row(pair, ["a"] * pair.n_sentences, "ranker x", RankerError)
    with pytest.raises(RankerError, match="has 1 scores but"):
        validated_row(pair, [1.0], "ranker x", RankerError)
    with pytest.raises(RankerError, match=r"non-finite score \(inf\) for sentence 0"):
        validated_row(pair, [float("inf")] * pair.n_sentences, "ranker x", RankerError)


def test_evaluation_reads_the_qrels(split):
    scores = {p.id: [float(sum(v)) for v in p.votes] for p in split}  # the oracle's order
    result = evaluate(split, scores, "oracle", [NDCG, AP])
    assert result.mean(NDCG) == pytest.approx(1.0) and result.mean(AP) == pytest.approx(1.0)
    lenient = evaluate(
        split, {p.id: [-i for i in range(p.n_sentences)] for p in split}, "lead", [AP], min_votes=1
    )
    strict = evaluate(split, {p.id: [-i for i in range(p.n_sentences)] for p in split}, "lead", [AP])
    assert lenient.mean(AP) != strict.mean(AP)


class _BatchOnly(Ranker):
    name = "batch_only_test"

    def score_batch(self, pairs):
        return [[float(len(s)) for s in p.sentences] for p in pairs]


class _Neither(Ranker):
    name = "neither_test"


def test_score_defaults_to_a_one_pair_batch_and_a_ranker_needs_one_of_them(split):
    pair = split.pairs[0]
    assert _BatchOnly().score(pair) == [float(len(s)) for s in pair.sentences]
    with pytest.raises(TypeError, match="neither score nor score_batch"):
        _Neither()


def test_use_store_is_the_one_store_hook(split, tmp_path):
    from sourcesum.runner import run_splits

    seen = []

    class Recording(_BatchOnly):
        name = "recording_test"

        def use_store(self, store):
            super().use_store(store)
            seen.append(store)

    store = ScoreStore(tmp_path)
    ranker = Recording()
    run_splits(ranker, [split], store, progress=False)
    assert seen == [store] and ranker.store is store
