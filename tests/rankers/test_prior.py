"""``overlap_prior``: summary overlap mixed with a position prior, its weight fixed (zero-shot) or
chosen on the training pairs' votes under a protocol (supervised)."""

from __future__ import annotations

import pytest
from sourcesum.data import load_split
from sourcesum.errors import ParameterError
from sourcesum.rankers import create_ranker
from sourcesum.rankers.context import TrainingData
from sourcesum.rankers.learned import ranking_quality
from sourcesum.rankers.prior import WEIGHT_GRID, overlap, position_prior
from sourcesum.rankers.text import tokenize
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore
from support.pairs import make_pair
from support.votes import ALPHA, BETA, permute_votes

DOC = ["The council approved the new bridge.", "It rained all week.", "Traffic will ease, officials said."]


SUMMARY = "Council approves bridge; traffic to ease."


def test_a_fixed_weight_mixes_recall_of_the_summary_words_with_the_position_prior():
    pair = make_pair(DOC, SUMMARY)
    words = set(tokenize(SUMMARY))
    recall = [len(words & set(tokenize(s))) / len(words) for s in DOC]
    got = create_ranker("overlap_prior", lead_weight=0.3).score(pair)
    assert got == pytest.approx([0.7 * r + 0.3 * (1 - i / 3) for i, r in enumerate(recall)], abs=1e-15)
    assert create_ranker("overlap_prior", lead_weight=1.0).score(pair) == pytest.approx([1.0, 2 / 3, 1 / 3])


def test_the_fixed_weight_reads_no_vote_and_the_unset_one_is_supervised():
    fixed = Configuration.of("overlap_prior", {"lead_weight": 0.3})
    assert (
        fixed.protocol is None
        and fixed.params == {"lead_weight": 0.3}
        and fixed.label == "overlap_prior(lead_weight=0.3)"
    )
    chosen = Configuration.of("overlap_prior", {})
    assert chosen.protocol is not None and chosen.protocol.name == "cross-corpus"
    assert chosen.label == "overlap_prior" and chosen.params == {"lead_weight": None}
    with pytest.raises(ParameterError, match="lead_weight is fixed"):
        Configuration.of("overlap_prior", {"lead_weight": 0.3, "protocol": "kfold"})
    with pytest.raises(ParameterError, match="kfold only"):
        Configuration.of("overlap_prior", {"folds": 3})
    with pytest.raises(ParameterError, match="overlap_prior.protocol"):  # own labels: reference rows only
        Configuration.of("overlap_prior", {"protocol": "own"})


def test_training_picks_the_grid_weight_with_the_best_mean_of_ndcg_and_ap():
    split = load_split("synth_alpha_sys")
    data = TrainingData(tuple(split.pairs), tuple(split.judgments), ("synth_alpha_sys",), split.min_relevant)
    ranker = create_ranker("overlap_prior")
    ranker.train(data)
    graded = [j.graded for j in split.judgments]
    brute = {
        w: sum(
            ranking_quality(
                [
                    (1 - w) * overlap(p.summary, p.sentences) + w * position_prior(p.n_sentences)
                    for p in split.pairs
                ],
                graded,
                split.min_relevant,
            )
        )
        for w in WEIGHT_GRID
    }
    best = max(brute.values())
    assert ranker.weight == min(w for w, v in brute.items() if v == best)
    assert ranker.describe_model()["lead_weight"] == ranker.weight


def test_cross_corpus_scores_never_see_the_scored_corpus_votes(tmp_path, monkeypatch):
    """Permuting every vote of the scored corpus leaves its scores bit-identical; permuting the
    training corpus's changes the chosen weight (the control)."""

    def scores(store: str) -> dict[str, list[float]]:
        runs = [
            run_ranker(
                create_ranker("overlap_prior"), load_split(n), ScoreStore(tmp_path / store), progress=False
            )
            for n in ALPHA
        ]
        return {pid: s for run in runs for pid, s in run.scores.items()}

    before = scores("before")
    with monkeypatch.context() as m:
        assert permute_votes(m, ALPHA, seed=1)
        assert scores("after") == before
    with monkeypatch.context() as m:
        assert permute_votes(m, BETA, seed=3)
        assert scores("control") != before
