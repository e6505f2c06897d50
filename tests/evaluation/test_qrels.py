"""The typed qrels and runs (sourcesum.evaluation.qrels)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sourcesum.data import dataset, load_split
from sourcesum.errors import RankerError, ScoreFileError
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.qrels import Qrels, Run, validated_row


@pytest.fixture(scope="module")
def split():
    """Five pairs of 5, 4, 6, 2 and 1 sentences (one without a sentence of 2 votes)."""
    return load_split("synth_alpha_sys_all")


def test_split_qrels_hold_each_pairs_votes_and_the_threshold(split):
    assert split.min_relevant == dataset("synthnews").binary_threshold == 2
    qrels = Qrels.of_split(split)
    assert qrels is Qrels.of_split(split)  # built once per process
    assert qrels.pair_ids == tuple(p.id for p in split)
    assert qrels.graded.shape == (5, 6)
    for index, (pair, judgment) in enumerate(zip(split.pairs, split.judgments, strict=True)):
        votes = [sum(v) for v in judgment.votes]
        assert qrels.row(index, "graded").tolist() == votes
        assert qrels.row(index, "binary").tolist() == [float(v >= 2) for v in votes]
        assert qrels.mask[index].sum() == pair.n_sentences
    assert not qrels.binary[~qrels.mask].any() and not qrels.graded[~qrels.mask].any()
    assert qrels.binary.sum(axis=1).tolist() == [2, 1, 2, 0, 1]  # by hand (make_files.py)
    # the threshold is the split's: the same judgments at one vote
    one_vote = Qrels.of_split(dataclasses.replace(split, min_relevant=1))
    assert one_vote is not qrels and one_vote.binary.sum() > qrels.binary.sum()
    assert np.array_equal(one_vote.binary, (qrels.graded >= 1) & qrels.mask)
    assert np.array_equal(one_vote.graded, qrels.graded)


def test_per_row_thresholds():
    qrels = Qrels.from_graded([[0, 1, 2], [1, 3]], [1, 2], pair_ids=["a", "b"])
    assert qrels.binary.tolist() == [[0, 1, 1], [0, 1, 0]]
    assert qrels.mask.tolist() == [[True, True, True], [True, True, False]]
    assert qrels.pair_ids == ("a", "b")
    assert Qrels.from_graded([[0, 1, 2], [1, 3]], 2).binary.tolist() == [[0, 0, 1], [0, 1, 0]]
    with pytest.raises(TypeError):  # no default threshold: the caller names it
        Qrels.from_graded([[0, 1]])  # type: ignore[call-arg]


def test_runs_name_the_source_and_pair_at_fault(split):
    good = {p.id: list(range(p.n_sentences)) for p in split}
    run = Run.of_split(split, good, "f.json")
    assert run.values.shape == Qrels.of_split(split).graded.shape
    assert [list(r) for r in run.rows] == [good[p.id] for p in split]
    target = split.pairs[2]
    missing = {k: v for k, v in good.items() if k != target.id}
    with pytest.raises(
        ScoreFileError, match=f"f.json: no scores for pair {target.id} of split synth_alpha_sys_all"
    ):
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
    with pytest.raises(ScoreFileError, match=f"x.json: pair {target.id} has a non-finite"):
        evaluate_split(split, nan, "x", source="x.json")


def test_validated_row_converts_and_checks_with_the_callers_error(split):
    pair = split.pairs[0]
    assert validated_row(pair, np.arange(pair.n_sentences), "r") == [
        float(i) for i in range(pair.n_sentences)
    ]
    with pytest.raises(
        RankerError, match=f"ranker x: pair {pair.id} has a score .a. of type str, not a real number"
    ):
        validated_row(pair, ["a"] * pair.n_sentences, "ranker x", RankerError)
    with pytest.raises(RankerError, match="has 1 scores but"):
        validated_row(pair, [1.0], "ranker x", RankerError)
    with pytest.raises(RankerError, match=r"non-finite score \(inf\) for sentence 0"):
        validated_row(pair, [float("inf")] * pair.n_sentences, "ranker x", RankerError)
