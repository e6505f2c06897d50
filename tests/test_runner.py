"""Runner and score store: validation, cache keys, atomic saves, resuming interrupted runs."""

from __future__ import annotations

from typing import ClassVar

import pytest

from sourcesum.data import load_split
from sourcesum.errors import RankerError
from sourcesum.runner import run_ranker
from sourcesum.store import ScoreEntry, ScoreStore
from sourcesum.rankers import Ranker, create_ranker


class CountingRanker(Ranker):
    """Scores by sentence length; counts calls; can fail on a chosen pair (not registered)."""

    name = "counting"
    version = "1"
    batch_pairs: ClassVar[int] = 10

    def __init__(self, scale: float = 1.0):
        self.scale = scale
        self.fail_on = ""  # not a parameter: does not change the cache key
        self.mode = "raise"
        self.calls: list[str] = []

    def score(self, pair):
        self.calls.append(pair.id)
        if pair.id == self.fail_on:
            if self.mode == "raise":
                raise ValueError("boom")
            if self.mode == "short":
                return [1.0] * (pair.n_sentences - 1)
            if self.mode == "nan":
                return [float("nan")] * pair.n_sentences
        return [self.scale * len(s) for s in pair.sentences]


@pytest.fixture
def split():
    return load_split("xsum_pegasus")


@pytest.mark.parametrize(
    "mode,message",
    [
        ("raise", "failed on pair {id}: ValueError: boom"),
        ("short", "returned 12 scores for pair {id}, which has 13 sentences"),
        ("nan", "returned a non-finite score \\(nan\\) for sentence 0 of pair {id}"),
    ],
)
def test_bad_scores_name_ranker_and_pair_and_keep_the_rest(split, scores_dir, mode, message):
    target = split.pairs[25]
    store = ScoreStore(scores_dir)
    ranker = CountingRanker()
    ranker.fail_on, ranker.mode = target.id, mode
    with pytest.raises(RankerError, match="ranker counting " + message.format(id=target.id)):
        run_ranker(ranker, split, store, progress=False)
    (path,) = list(scores_dir.glob("counting/*.json"))
    saved = ScoreEntry.from_json(path.read_text(), path)
    # the pairs of earlier batches and the good pairs of the failing batch are kept
    assert len(saved.scores) == 25 and target.id not in saved.scores

    # an interrupted run resumes: only the missing pairs are scored again
    fixed = CountingRanker()
    entry = run_ranker(fixed, split, store, progress=False)
    assert entry.complete and len(fixed.calls) == len(split) - 25
    assert fixed.calls[0] == target.id


def test_cache_is_reused_and_keyed_by_params_version_and_data(split, scores_dir, monkeypatch):
    store = ScoreStore(scores_dir)
    first = CountingRanker()
    run_ranker(first, split, store, progress=False)
    again = CountingRanker()
    run_ranker(again, split, store, progress=False)
    assert len(first.calls) == len(split) and again.calls == []

    other_params = CountingRanker(scale=2.0)
    run_ranker(other_params, split, store, progress=False)
    assert len(other_params.calls) == len(split)

    monkeypatch.setattr(CountingRanker, "version", "2")
    bumped = CountingRanker()
    run_ranker(bumped, split, store, progress=False)
    assert len(bumped.calls) == len(split)

    other_data = CountingRanker()
    run_ranker(other_data, load_split("xsum_reference"), store, progress=False)
    assert len(other_data.calls) == 119
    assert len(list(scores_dir.glob("counting/*.json"))) == 4


def test_store_round_trip_is_exact_and_one_pair_per_line(split, scores_dir):
    store = ScoreStore(scores_dir)
    entry = run_ranker(create_ranker("random", seed=7), split, store, progress=False)
    path = store.path_for("random", split.name, entry.key)
    text = path.read_text()
    assert text.count("\n") == len(split) + 15
    loaded = ScoreEntry.from_json(text, path)
    assert loaded.scores == entry.scores and loaded.to_json() == text
    assert not list(scores_dir.glob("**/*.tmp"))


def test_random_is_reproducible_and_seeded(split):
    pair = split.pairs[0]
    assert create_ranker("random").score(pair) == create_ranker("random").score(pair)
    assert create_ranker("random", seed=1).score(pair) != create_ranker("random").score(pair)
    assert create_ranker("random", seed=3).label == "random(seed=3)"
