"""Lexical rankers (sourcesum.rankers.lexical): hand-checked scores on small pairs, runs on the
synthetic splits, and the paper's numbers on the real splits (``real_data``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sourcesum.data import dataset, load_split
from sourcesum.errors import ParameterError
from sourcesum.rankers import create_ranker
from support.pairs import make_pair
from support.rankers import split_means

DOC = [
    "The council approved a new budget for city parks on Tuesday.",
    "It was raining in the morning.",
    "Parks will receive ten million dollars under the approved budget.",
    "The and of it was.",
    "Traffic was heavy downtown.",
    "A local bakery opened its doors.",
]


SUMMARY = "City council approves park budget."


def test_bm25_prefers_overlap_and_exposes_parameters():
    pair = make_pair(DOC, SUMMARY)
    scores = create_ranker("bm25").score(pair)
    assert np.argmax(scores) == 0 and scores[1] == 0.0 and scores[3] == 0.0
    assert scores[2] > scores[1]
    assert create_ranker("bm25", k1=0.5).score(pair) != scores
    plus = create_ranker("bm25", variant="plus").score(pair)
    assert np.argmax(plus) == 0
    assert (
        create_ranker("bm25", variant="l").score(pair)[1] < create_ranker("bm25", variant="l").score(pair)[0]
    )
    with pytest.raises(ParameterError, match="bm25.variant=bogus: expected one of okapi, plus, l"):
        create_ranker("bm25", variant="bogus")


def test_rouge_values_by_hand():
    pair = make_pair(["the cat sat", "dogs barked loudly"], "the cats sat on the mat")
    # stemmed unigrams: summary {the x2, cat, sat, on, mat} (6 tokens); sentence "the cat sat"
    # overlap 3 -> P = 3/3, R = 3/6, F = 2/3
    r1 = create_ranker("rouge1").score(pair)
    assert r1[0] == pytest.approx(2 / 3) and r1[1] == 0.0
    assert create_ranker("rouge1", measure="recall").score(pair)[0] == pytest.approx(0.5)
    # bigrams: sentence {the cat, cat sat}, summary has both of its 5 -> P = 1, R = 2/5
    assert create_ranker("rouge2").score(pair)[0] == pytest.approx(2 * 0.4 / 1.4)
    assert create_ranker("rougeL").score(pair)[0] == pytest.approx(2 / 3)


@pytest.mark.real_data
def test_rouge1_matches_the_papers_published_scores_for_a_pair():
    # outputs/xsum_pegasus__rouge1.json of the paper's repository, first pair, first sentences
    pair = load_split("xsum_pegasus").by_id["xsum__train__15555406__pegasus-xsum__0"]
    scores = create_ranker("rouge1").score(pair)
    assert scores[:4] == pytest.approx([0.25, 0.16326530612244897, 0.35, 0.21052631578947367], abs=1e-15)


@pytest.mark.real_data
def test_rouge1_reproduces_the_paper_on_xsum_pegasus():
    ndcg, ap = split_means("rouge1", "xsum_pegasus")
    assert round(ndcg, 4) == 0.8476 and round(ap, 4) == 0.6740


def test_tfidf_identical_sentence_scores_one():
    pair = make_pair(["City council approves park budget.", "Rain fell all day."], SUMMARY)
    for idf in ("document", "split"):
        ranker = create_ranker("tfidf", idf=idf)
        ranker.fit([pair])
        scores = ranker.score(pair)
        assert scores[0] == pytest.approx(1.0) and scores[1] == pytest.approx(0.0)


@pytest.mark.slow  # four rankers on a whole split
@pytest.mark.real_data
def test_lexical_rankers_beat_random_on_cnn_reference():
    random_ndcg = split_means("random", "cnn_reference")[0]
    for name in ("bm25", "tfidf", "rouge2", "rougeL"):
        ndcg, ap = split_means(name, "cnn_reference")
        assert ndcg > random_ndcg + 0.2 and math.isfinite(ap)


@pytest.mark.parametrize("split_name", dataset("synthnews").board_splits())
def test_lexical_rankers_beat_random_on_the_synthetic_splits(split_name):
    """The synthetic summaries reuse their source sentences' words, as real ones do: the lexical
    rankers of the CNN/DM test above (fitted on the split where they fit) rank above random by a
    clear margin on every split."""
    random_ndcg = split_means("random", split_name)[0]
    for name in ("bm25", "tfidf", "rouge2", "rougeL"):
        ndcg, ap = split_means(name, split_name)
        assert ndcg > random_ndcg + 0.1 and 0 < ap <= 1, (name, ndcg, random_ndcg)
