"""Evaluating a split's scores (sourcesum.evaluation.evaluate): it reads the typed qrels, and a
memoised evaluation equals the evaluation and follows the scores."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sourcesum.data import load_split
from sourcesum.evaluation.evaluate import evaluate, evaluate_split
from sourcesum.evaluation.measures import AP, NDCG, parse_measure
from sourcesum.evaluation.qrels import Qrels, Run


@pytest.fixture
def cache_dir(monkeypatch, tmp_path):
    """A cache folder (and so a memo) of the test's own."""
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))


def test_a_memoised_evaluation_equals_the_evaluation_and_follows_the_scores(cache_dir, monkeypatch):
    from sourcesum import evaluation
    from sourcesum.store.entry import scores_sha256

    split = load_split("synth_alpha_sys")
    measures = [NDCG, AP, parse_measure("nDCG(gain=binary)")]
    scores = {p.id: [float(-i) for i in range(p.n_sentences)] for p in split}
    direct = evaluation.evaluate_split(split, scores, "x", measures)
    cold = evaluation.memoised_evaluation(split, scores, scores_sha256(scores), "x", measures)
    monkeypatch.setattr(evaluation, "evaluate_split", lambda *a, **k: pytest.fail("not memoised"))
    warm = evaluation.memoised_evaluation(split, scores, scores_sha256(scores), "x", measures)
    for got in (cold, warm):
        assert got.per_pair.equals(direct.per_pair) and got.measures == measures
        assert got.reasons == direct.reasons
    monkeypatch.undo()
    flipped = {pid: row[::-1] for pid, row in scores.items()}
    other = evaluation.memoised_evaluation(split, flipped, scores_sha256(flipped), "x", measures)
    assert other.per_pair.equals(evaluation.evaluate_split(split, flipped, "x", measures).per_pair)
    assert not other.per_pair.equals(direct.per_pair)


@pytest.fixture(scope="module")
def split():
    """Five pairs of 5, 4, 6, 2 and 1 sentences (one without a sentence of 2 votes)."""
    return load_split("synth_alpha_sys_all")


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
