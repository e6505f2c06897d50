"""Embedding and BERTScore rankers (sourcesum.rankers.embedding) on the offline MiniLM model:
values, caching and batching on the synthetic splits, and the embedding ranker on a real split
(``real_data``)."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.data import dataset, load_split
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.rankers import create_ranker
from support.pairs import make_pair

pytestmark = pytest.mark.slow  # loads the real MiniLM model


PAIR = make_pair(
    [
        "Stock markets fell sharply on Monday after weak factory data.",
        "The zoo welcomed a baby giraffe.",
        "Shares dropped across Europe as manufacturing slowed.",
    ],
    "Share prices tumbled following poor industrial figures.",
)


@pytest.fixture(scope="module")
def embedding():
    return create_ranker("embedding", device="cpu")


def test_embedding_ranks_paraphrases_above_unrelated(embedding):
    scores = embedding.score(PAIR)
    assert scores[1] < 0.2 < min(scores[0], scores[2])
    assert embedding.get_params() == {"model": "all-MiniLM-L6-v2"}


def _synthetic_pairs():
    """Every pair of the synthnews board splits, then the unfiltered alpha split: documents (and
    summaries) recur across splits, so texts repeat within and across calls."""
    names = [*dataset("synthnews").board_splits(), "synth_alpha_sys_all"]
    return [pair for name in names for pair in load_split(name)]


def test_embedding_encodes_each_unique_text_once_and_matches_pairwise(embedding):
    pairs = _synthetic_pairs()
    first, second = pairs[:9], pairs[9:]
    fresh = create_ranker("embedding", device="cpu")
    fresh._encoder = embedding.encoder()
    encoded: list[str] = []
    original = fresh.encoder().encode

    def counting_encode(texts, **kwargs):
        encoded.extend(texts)
        return original(texts, **kwargs)

    fresh._encoder = type("Wrapped", (), {"encode": staticmethod(counting_encode)})()
    batched = fresh.score_batch(first) + fresh.score_batch(second)
    unique = {t for p in pairs for t in (p.summary, *p.sentences)}
    assert len(encoded) == len(unique) == len(set(encoded))
    assert sum(len(p.sentences) + 1 for p in pairs) > len(unique)  # texts did repeat
    assert {t for p in first for t in p.sentences} & {t for p in second for t in p.sentences}
    model = embedding.encoder()
    for pair, scores in zip(pairs[:5], batched, strict=False):
        for sentence, value in zip(pair.sentences, scores, strict=False):
            a, b = model.encode([pair.summary, sentence], normalize_embeddings=True)
            assert value == pytest.approx(float(a @ b), abs=1e-5)


@pytest.mark.real_data
def test_embedding_on_a_real_split(embedding):
    split = load_split("xsum_pegasus")
    scores = dict(zip((p.id for p in split), embedding.score_batch(split.pairs), strict=False))
    evaluation = evaluate_split(split, scores, "embedding", (NDCG, AP))
    ndcg, ap = evaluation.mean(NDCG), evaluation.mean(AP)
    assert ndcg > 0.85 and ap > 0.7


def test_bertscore_identical_text_scores_one_and_paraphrase_beats_unrelated():
    ranker = create_ranker("bertscore", device="cpu")
    pair = make_pair([PAIR.summary, *PAIR.sentences], PAIR.summary)
    scores = ranker.score(pair)
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    assert scores[3] > scores[2] and scores[1] > scores[2]
    assert ranker._layer() == 6
    recall = create_ranker("bertscore", measure="recall", device="cpu").score(pair)
    assert not np.allclose(recall, scores)


def test_bertscore_scores_an_empty_sentence_zero_and_the_others_as_without_it():
    """WiCE has empty candidates: bert-score's rule for an empty candidate is 0 (it warns), and
    the other sentences score as they do without it."""
    ranker = create_ranker("bertscore", device="cpu")
    sentences = list(PAIR.sentences)
    with_empty = ranker.score(make_pair([sentences[0], "", *sentences[1:], "   "], PAIR.summary))
    without = ranker.score(make_pair(sentences, PAIR.summary))
    assert with_empty[1] == 0.0 and with_empty[-1] == 0.0
    assert [with_empty[0], *with_empty[2:-1]] == pytest.approx(without, abs=1e-6)
    assert ranker.score(make_pair(["", " "], PAIR.summary)) == [0.0, 0.0]  # nothing to encode


def test_bertscore_batches_across_pairs_like_one_by_one():
    ranker = create_ranker("bertscore", device="cpu")
    pairs = [*load_split("synth_alpha_ref"), *load_split("synth_beta_sys")]  # 6 pairs, 3-6 sentences
    batched = ranker.score_batch(pairs)
    assert len(batched) == len(pairs)
    for pair, values in zip(pairs, batched, strict=True):
        assert values == pytest.approx(ranker.score(pair), abs=1e-5)
