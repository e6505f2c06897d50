"""``contextcite``: the surrogate, the masks, and the scores against naive forward passes on tiny
models built from configs (causal and seq2seq)."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.rankers import create_ranker
from sourcesum.rankers.lm.contextcite import draw_masks, fit_surrogate, sequence_logit
from sourcesum.rankers.lm.inputs import (
    DEFAULT_TEMPLATE,
    causal_context,
    causal_summary,
    seq2seq_context,
    seq2seq_summary,
)
from sourcesum.rankers.lm.loading import register_loaded
from sourcesum.runner.run import run_splits
from sourcesum.store.stores import ScoreStore
from support.models import naive_nll, tiny_bart, tiny_llama, tiny_tokenizer
from support.pairs import make_pair, make_split

DOC = [
    "The council voted to build a bridge over the river.",
    "It rained all week.",
    "The bridge will cost forty million dollars.",
    "A bakery opened downtown.",
    "The mayor said work starts in spring.",
    "Local schools closed for the holiday.",
]
SUMMARIES = ["A new bridge costing forty million dollars was approved.", "Schools closed."]


@pytest.fixture(scope="module")
def tiny_causal():
    tok = tiny_tokenizer()
    model = tiny_llama(tok, seed=3)
    register_loaded("tiny-causal-cc", model, tok)
    return model, tok


@pytest.fixture(scope="module")
def tiny_seq2seq():
    tok = tiny_tokenizer()
    model = tiny_bart(tok, attn_implementation="eager", scale_embedding=False)
    register_loaded("tiny-seq2seq-cc", model, tok)
    return model, tok


def _pairs(summaries=SUMMARIES):
    return [make_pair(DOC, s, pair_id=f"doc__{i}") for i, s in enumerate(summaries)]


def test_the_linear_surrogate_recovers_the_weights_of_a_linear_model():
    rng = np.random.default_rng(0)
    masks = rng.random((40, 6)) < 0.5
    weights, bias, tokens = np.array([2.0, 0.0, -1.5, 0.0, 0.5, 3.0]), -4.0, 7
    targets = tokens * (bias + masks @ weights)
    np.testing.assert_allclose(
        fit_surrogate(masks, targets, tokens, "linear", 0.01), tokens * weights, atol=1e-9
    )
    # the lasso keeps the support and the order, shrinking each weight a little
    lasso = fit_surrogate(masks, targets, tokens, "lasso", 0.01)
    assert np.all(lasso[[1, 3]] == 0) and np.all(lasso[[0, 2, 4, 5]] != 0)
    np.testing.assert_array_equal(np.argsort(-lasso, kind="stable"), np.argsort(-weights, kind="stable"))
    np.testing.assert_allclose(lasso, tokens * weights, atol=0.5)


def test_the_sequence_logit_is_log_odds_without_underflow():
    nll, tokens = np.array([0.1, 2.0, 40.0]), 5
    p = np.exp(-tokens * nll)
    np.testing.assert_allclose(sequence_logit(nll, tokens)[:2], np.log(p / (1 - p))[:2], rtol=1e-12)
    assert sequence_logit(nll, tokens)[2] == pytest.approx(-200.0)  # p = e^-200: log(1 - p) = 0
    assert np.isfinite(sequence_logit(np.array([0.0]), tokens)).all()  # p = 1 exactly


def test_masks_depend_on_document_sentences_and_seed_only():
    a = draw_masks("doc", [0, 1, 2, 3], 32, 0.5, 0)
    assert a.shape == (32, 4) and a.dtype == bool
    np.testing.assert_array_equal(a, draw_masks("doc", [0, 1, 2, 3], 32, 0.5, 0))
    others = (
        draw_masks("doc2", [0, 1, 2, 3], 32, 0.5, 0),
        draw_masks("doc", [0, 1, 2, 3], 32, 0.5, 1),
        draw_masks("doc", [0, 1, 2, 4], 32, 0.5, 0),
    )
    for other in others:
        assert not np.array_equal(a, other)
    assert abs(draw_masks("doc", list(range(50)), 400, 0.3, 0).mean() - 0.3) < 0.01


def test_causal_scores_equal_the_surrogate_of_naive_forward_passes(tiny_causal):
    model, tok = tiny_causal
    # a random tiny model's losses barely move: the package's alpha would zero every weight
    ranker = create_ranker("contextcite", model="tiny-causal-cc", ablations=16, alpha=1e-6, batch_size=3)
    pairs = _pairs()
    scores = ranker.score_batch(pairs)
    context = causal_context(tok, DOC, DEFAULT_TEMPLATE)
    for pair, row in zip(pairs, scores, strict=True):
        masks = draw_masks(pair.document_key, list(range(len(DOC))), 16, 0.5, 0)
        target = causal_summary(tok, pair.summary)
        nll = np.array(
            [
                naive_nll(model, False, context.ids(keep=m), [1] * len(context.ids(keep=m)), target)
                for m in masks
            ]
        )
        expected = fit_surrogate(masks, sequence_logit(nll, len(target)), len(target), "lasso", 1e-6)
        np.testing.assert_allclose(row, expected, rtol=0, atol=1e-4)
        assert np.ptp(row) > 1e-3  # the tiny model's weights are not all shrunk to zero


def test_seq2seq_scores_equal_the_surrogate_of_naive_forward_passes(tiny_seq2seq):
    model, tok = tiny_seq2seq
    ranker = create_ranker(
        "contextcite", model="tiny-seq2seq-cc", ablations=12, surrogate="linear", batch_size=4
    )
    pair = _pairs()[0]
    row = ranker.score(pair)
    context = seq2seq_context(tok, DOC)
    target = seq2seq_summary(tok, pair.summary)
    masks = draw_masks(pair.document_key, list(range(len(DOC))), 12, 0.5, 0)
    nll = np.array(
        [naive_nll(model, True, context.ids(keep=m), [1] * len(context.ids(keep=m)), target) for m in masks]
    )
    expected = fit_surrogate(masks, sequence_logit(nll, len(target)), len(target), "linear", 0.01)
    np.testing.assert_allclose(row, expected, rtol=0, atol=1e-4)


def test_one_sentence_ablations_without_sparsity_rank_as_leave_one_out(tiny_causal):
    n = len(DOC)
    design = np.vstack([np.ones(n, dtype=bool), ~np.eye(n, dtype=bool)])  # full document + each deletion
    ranker = create_ranker("contextcite", model="tiny-causal-cc", surrogate="linear")
    pairs = _pairs()
    weights = ranker.score_designs(pairs, [(list(range(n)), design)] * len(pairs))
    loo = create_ranker("perplexity_gain", model="tiny-causal-cc").score_batch(pairs)
    for w, gain in zip(weights, loo, strict=True):
        np.testing.assert_array_equal(np.argsort(w, kind="stable"), np.argsort(gain, kind="stable"))
        assert len(set(np.round(gain, 6))) == n  # no ties to make the comparison vacuous


@pytest.mark.parametrize("shortlist", [0, 3])
def test_scores_do_not_depend_on_the_pairs_scored_together(tiny_causal, shortlist):
    # least squares: the random tiny model's small effects would all be shrunk to 0 by the lasso
    ranker = create_ranker(
        "contextcite", model="tiny-causal-cc", ablations=16, surrogate="linear", shortlist=shortlist
    )
    together = ranker.score_batch(_pairs())
    alone = [ranker.score(p) for p in _pairs()]
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-6)
    assert all(np.ptp(row) > 1e-3 for row in together)


def test_a_shortlist_ablates_only_its_sentences_and_ties_the_rest_below(tiny_causal):
    ranker = create_ranker(
        "contextcite", model="tiny-causal-cc", ablations=16, shortlist=3, surrogate="linear"
    )
    assert "shortlist=3" in ranker.label
    pair = _pairs()[0]
    listed = ranker.ablated(pair)
    assert len(listed) == 3 and 2 in listed  # the sentence the summary repeats
    keeps, _ = ranker.distinct_keeps(len(DOC), ranker.designs([pair])[0])
    assert all(keep[i] for keep in keeps for i in range(len(DOC)) if i not in listed)  # always kept
    assert {keep[i] for keep in keeps for i in listed} == {True, False}
    row = ranker.score(pair)
    rest = [row[i] for i in range(len(DOC)) if i not in listed]
    assert len(set(rest)) == 1 and rest[0] == np.nextafter(min(row[i] for i in listed), -np.inf)


def test_parameters_are_keyed_and_checked(tiny_causal):
    from sourcesum.errors import ParameterError
    from sourcesum.runner.configs import Configuration

    assert "shortlist" not in Configuration.of("contextcite", {"shortlist": 0}).params
    label = create_ranker("contextcite", model="tiny-causal-cc", ablations=64, seed=2).label
    assert "ablations=64" in label and "seed=2" in label
    for bad in ({"keep": 1.0}, {"surrogate": "ridge"}, {"ablations": 1}):
        with pytest.raises(ParameterError):
            Configuration.of("contextcite", bad)


def test_scores_read_no_vote(tiny_causal, tmp_path):
    pairs = _pairs()
    n = len(DOC)
    first = make_split("hand_a", pairs, votes=[[(1, 1)] + [(0, 0)] * (n - 1)] * len(pairs))
    second = make_split("hand_a", pairs, votes=[[(0, 0)] * (n - 1) + [(1, 0)]] * len(pairs))
    ranker = create_ranker("contextcite", model="tiny-causal-cc", ablations=8, surrogate="linear")
    a = run_splits(ranker, [first], ScoreStore(tmp_path / "a"), progress=False)[0].entry.scores
    b = run_splits(ranker, [second], ScoreStore(tmp_path / "b"), progress=False)[0].entry.scores
    assert a == b and len(a) == len(pairs)
    assert all(np.ptp(row) > 1e-3 for row in a.values())
