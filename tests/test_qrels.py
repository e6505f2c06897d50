"""The typed qrels and runs (sourcesum.evaluation.qrels) and the Ranker hooks built on one home each."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sourcesum.data import dataset, load_split
from sourcesum.errors import RankerError, ScoreFileError
from sourcesum.evaluation.evaluate import evaluate, evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.evaluation.qrels import Qrels, Run, validated_row
from sourcesum.rankers import RANKERS, Ranker
from sourcesum.store.stores import ScoreStore


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


def test_evaluation_reads_the_qrels(split):
    scores = {p.id: list(j.graded) for p, j in zip(split.pairs, split.judgments, strict=True)}  # oracle
    result = evaluate_split(split, scores, "oracle", [NDCG, AP])
    assert result.mean(NDCG) == pytest.approx(1.0) and result.mean(AP) == pytest.approx(1.0)
    assert result.per_pair[AP.name].isna().tolist() == [False, False, False, True, False]
    lead = {p.id: [-i for i in range(p.n_sentences)] for p in split}
    lenient = evaluate_split(dataclasses.replace(split, min_relevant=1), lead, "lead", [AP])
    strict = evaluate_split(split, lead, "lead", [AP])
    assert lenient.mean(AP) != strict.mean(AP)
    assert lenient.per_pair[AP.name].notna().all()  # at one vote every pair has a relevant sentence
    # the per-pair primitive on the split's qrels and the padded run gives the same values
    values = evaluate(Qrels.of_split(split), Run.of_split(split, lead, "lead").values, [NDCG, AP])
    for measure in (NDCG, AP):
        np.testing.assert_array_equal(values[measure], evaluate_split(split, lead, "lead").values(measure))
    # by hand: pair 1 (graded 2, 1, 0, 0) in lead order: nDCG 1, AP 1; pair 2 (3, 2, 0, 0, 0, 1)
    assert values[NDCG][1] == pytest.approx(1.0) and values[AP][1] == pytest.approx(1.0)
    ideal = 3 + 2 / np.log2(3) + 1 / np.log2(4)
    assert values[NDCG][2] == pytest.approx((3 + 2 / np.log2(3) + 1 / np.log2(7)) / ideal)


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


def test_use_workspace_is_the_one_workspace_hook(split, tmp_path):
    """The runner hands a ranker the store's folder once per run (``use_store`` and the
    ranker's ``store`` attribute are gone: rankers never read the store)."""
    from sourcesum.runner.run import run_splits

    seen = []

    class Recording(_BatchOnly):
        name = "recording_test"

        def use_workspace(self, folder):
            super().use_workspace(folder)
            seen.append(folder)

    store = ScoreStore(tmp_path)
    ranker = Recording()
    RANKERS.register(Recording)  # the runner finds a configuration's class by name
    try:
        runs = run_splits(ranker, [split], store, progress=False)
    finally:
        RANKERS._classes.pop("recording_test")
    assert seen == [store.root] and not hasattr(ranker, "store") and not hasattr(ranker, "use_store")
    assert runs[0].entry.scores == {p.id: [float(len(s)) for s in p.sentences] for p in split}
