"""The runner (sourcesum.runner.run): validation of what a ranker returns (bad scores name the
ranker and the pair, and the rest is kept), cache keys, resuming interrupted runs (under the same
library versions only), batch errors never hidden, sharing across splits, and quick trials
cached in the normal entry.

Everything here runs on the synthetic dataset ``synthnews`` (tests/fixtures/synthetic): four
board splits in two corpora whose two splits share their documents, plus the unfiltered
``synth_alpha_sys_all`` (5 pairs on 5 documents, one of them a single sentence)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from sourcesum.data import dataset, load_split
from sourcesum.errors import RankerError, ScoreFileError
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.rankers import RANKERS, Ranker, create_ranker, register
from sourcesum.runner.run import run_ranker, run_splits
from sourcesum.runner.selection import Selection
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.stores import ScoreStore
from support.cli import one_error_line

BOARD = dataset("synthnews").board_splits()
"""synth_alpha_sys, synth_alpha_ref, synth_beta_sys, synth_beta_ref (3 pairs each)."""


class CountingRanker(Ranker):
    """Scores by sentence length; counts calls; can fail on a chosen pair (not registered)."""

    name = "counting"
    version = "1"
    batch_pairs: ClassVar[int] = 2

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
    """5 pairs on 5 documents: batches of 2 pairs are [0, 1], [2, 3], [4]."""
    return load_split("synth_alpha_sys_all")


@pytest.mark.parametrize(
    "mode,message",
    [
        ("raise", " failed on pair {id}: ValueError: boom"),
        ("short", ": pair {id} has {short} scores but {n} sentences"),
        ("nan", ": pair {id} has a non-finite score \\(nan\\) for sentence 0"),
    ],
)
def test_bad_scores_name_ranker_and_pair_and_keep_the_rest(split, scores_dir, mode, message):
    target = split.pairs[3]  # second pair of the second batch
    store = ScoreStore(scores_dir)
    ranker = CountingRanker()
    ranker.fail_on, ranker.mode = target.id, mode
    # a raising batch is retried pair by pair (with a warning) to name the culprit; invalid
    # scores name their pair directly
    warns = pytest.warns(RuntimeWarning, match="one at a time") if mode == "raise" else nullcontext()
    expected = message.format(id=target.id, short=target.n_sentences - 1, n=target.n_sentences)
    with warns, pytest.raises(RankerError, match="ranker counting" + expected):
        run_ranker(ranker, split, store, progress=False)
    (path,) = list(scores_dir.glob("counting/*.json"))
    saved = ScoreEntry.from_json(path.read_text(), path)
    # the pairs of the earlier batch and the good pair of the failing batch are kept
    assert sorted(saved.scores) == sorted(p.id for p in split.pairs[:3]) and target.id not in saved.scores

    # an interrupted run resumes: only the missing pairs are scored again
    fixed = CountingRanker()
    entry = run_ranker(fixed, split, store, progress=False)
    assert entry.complete and len(fixed.calls) == len(split) - 3
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
    other_split = load_split("synth_alpha_sys")  # the same first 3 pairs (ids and text), other data
    assert other_split.sha256 != split.sha256
    run_ranker(other_data, other_split, store, progress=False)
    assert len(other_data.calls) == len(other_split) == 3
    assert len(list(scores_dir.glob("counting/*.json"))) == 4


# --- explicit fallback after a batch error ------------------------------------------------


class BatchOnlyBug(CountingRanker):
    """Fails whenever handed several pairs at once (or returns too few lists): a batching bug."""

    name = "batchbug"

    def __init__(self, scale: float = 1.0):
        super().__init__(scale)
        self.bug = "raise"

    def score_batch(self, pairs):
        if len(pairs) > 1:
            if self.bug == "raise":
                raise IndexError("padding went wrong")
            return [self.score(p) for p in pairs[:-1]]
        return [self.score(p) for p in pairs]


@pytest.mark.parametrize(
    "bug,original",
    [("raise", "IndexError: padding went wrong"), ("short", "returned 1 score lists for 2 pairs")],
)
def test_a_batch_error_is_not_hidden_when_every_pair_succeeds_alone(split, scores_dir, bug, original):
    ranker = BatchOnlyBug()
    ranker.bug = bug
    with pytest.warns(RuntimeWarning, match="one at a time"), pytest.raises(RankerError) as info:
        run_ranker(ranker, split, ScoreStore(scores_dir), progress=False)
    message = str(info.value)
    assert f"failed on a batch of 2 pairs (first pair {split.pairs[0].id})" in message
    assert original in message and "succeeded when scored alone" in message
    assert info.value.__cause__ is not None and original.split(":")[-1].strip() in str(info.value.__cause__)
    assert ranker.calls[-2:] == [p.id for p in split.pairs[:2]]  # each pair was tried alone
    assert not list(scores_dir.glob("*/*.json"))  # nothing of the failed batch was saved


# --- the runner owns sharing across splits ---------------------------------------------------


class RecordingRanker(CountingRanker):
    """Records every score_batch call (no fit override: gets cross-split document groups)."""

    name = "recording"
    batch_pairs: ClassVar[int] = 3

    def __init__(self, scale: float = 1.0):
        super().__init__(scale)
        self.batches: list[list] = []

    def score_batch(self, pairs):
        self.batches.append(list(pairs))
        return super().score_batch(pairs)


class FittedRanker(RecordingRanker):
    """Overrides fit: must be run split by split, fit seeing the whole split."""

    name = "fitted"

    def __init__(self, scale: float = 1.0):
        super().__init__(scale)
        self.events: list[tuple[str, str, int]] = []

    def fit(self, pairs):
        self.events.append(("fit", pairs[0].split, len(pairs)))

    def score_batch(self, pairs):
        self.events.append(("score", pairs[0].split, len(pairs)))
        return super().score_batch(pairs)


@pytest.fixture
def board_splits():
    """The four board splits: each corpus's two splits share their three documents."""
    return [load_split(name) for name in BOARD]


def test_pairs_of_several_splits_are_handed_over_in_whole_document_groups(board_splits, scores_dir):
    store = ScoreStore(scores_dir)
    ranker = RecordingRanker()
    runs = run_splits(ranker, board_splits, store, progress=False)
    handed = [p for batch in ranker.batches for p in batch]
    assert sorted(p.id for p in handed) == sorted(p.id for s in board_splits for p in s)  # each pair once
    batch_of = {}
    for number, batch in enumerate(ranker.batches):
        for pair in batch:
            assert batch_of.setdefault(pair.document_key, number) == number  # a document is never cut
        assert len(batch) >= ranker.batch_pairs or number == len(ranker.batches) - 1
    # 6 documents of 2 pairs (one per split of its corpus), batches closed at >= 3 pairs
    assert [len(batch) for batch in ranker.batches] == [4, 4, 4]
    assert all(len({p.split for p in batch}) >= 2 for batch in ranker.batches)  # splits share calls
    assert [run.entry.complete for run in runs] == [True] * 4
    for run in runs:  # every split's entry saved, with the scores its pairs got
        saved = store.load("recording", run.split.name, run.entry.key)
        assert saved.scores == run.entry.scores and len(saved.scores) == len(run.split)
        assert saved.scores[run.split.pairs[0].id] == [float(len(s)) for s in run.split.pairs[0].sentences]


def test_a_ranker_that_overrides_fit_is_run_split_by_split_on_whole_splits(board_splits, scores_dir):
    alpha = board_splits[:2]
    ranker = FittedRanker()
    run_splits(ranker, alpha, ScoreStore(scores_dir), progress=False)
    fits = [e for e in ranker.events if e[0] == "fit"]
    assert fits == [("fit", "synth_alpha_sys", 3), ("fit", "synth_alpha_ref", 3)]
    second_fit = ranker.events.index(fits[1])
    assert {e[1] for e in ranker.events[:second_fit]} == {"synth_alpha_sys"}
    assert {e[1] for e in ranker.events[second_fit:]} == {"synth_alpha_ref"}
    assert all(len({p.split for p in batch}) == 1 for batch in ranker.batches)


def test_one_split_of_a_shared_corpus_computes_only_its_own_pairs(board_splits, scores_dir):
    ranker = RecordingRanker()
    (run,) = run_splits(ranker, board_splits[:1], ScoreStore(scores_dir), progress=False)
    assert {p.split for batch in ranker.batches for p in batch} == {"synth_alpha_sys"}
    assert len(ranker.calls) == 3 and run.entry.complete
    assert len(list(scores_dir.glob("recording/*.json"))) == 1


# --- quick trials: --limit, --pairs ----------------------------------------------------------


def test_a_quick_trial_is_cached_in_the_normal_entry_and_a_full_run_resumes(split, scores_dir):
    store = ScoreStore(scores_dir)
    trial = CountingRanker()
    (run,) = run_splits(trial, [split], store, Selection(limit=2), progress=False)
    assert trial.calls == [p.id for p in split.pairs[:2]] and run.partial
    assert run.scored_split().pairs == split.pairs[:2] and list(run.scores()) == trial.calls
    chosen = Selection(pair_ids=frozenset({split.pairs[3].id, split.pairs[1].id}))
    picked = CountingRanker()
    run_splits(picked, [split], store, chosen, progress=False)
    assert picked.calls == [split.pairs[3].id]  # pair 1 was cached by the trial
    full = CountingRanker()
    entry = run_ranker(full, split, store, progress=False)
    assert entry.complete and full.calls == [split.pairs[2].id, split.pairs[4].id]
    assert len(list(scores_dir.glob("counting/*.json"))) == 1


def test_a_subset_is_evaluated_on_its_own_pairs(split, scores_dir):
    entry = run_ranker(create_ranker("lead"), split, ScoreStore(scores_dir), progress=False)
    whole = evaluate_split(split, entry.scores, "lead")
    (run,) = run_splits(
        create_ranker("lead"), [split], ScoreStore(scores_dir), Selection(limit=3), progress=False
    )
    part = evaluate_split(run.scored_split(), run.scores(), "lead")
    assert len(part.per_pair) == 3 and len(whole.per_pair) == len(split)
    assert part.per_pair.equals(whole.per_pair.iloc[:3])


SPLIT = "synth_alpha_sys"


def test_resuming_under_other_library_versions_stops_naming_both(tmp_path, monkeypatch):
    split = load_split(SPLIT)
    store = ScoreStore(tmp_path / "store")
    ranker = create_ranker("bm25")
    run_splits(
        ranker,
        [split],
        store,
        __import__("sourcesum.runner.run", fromlist=["Selection"]).Selection(limit=1),
        progress=False,
    )
    real = type(ranker).library_versions
    monkeypatch.setattr(
        type(ranker), "library_versions", classmethod(lambda cls: {**real(), "numpy": "9.9.9"})
    )
    with pytest.raises(ScoreFileError, match=r"numpy: .* in the entry, 9\.9\.9 here"):
        run_ranker(create_ranker("bm25"), split, store, progress=False)
    # the harness's own version is not part of the agreement
    monkeypatch.setattr(
        type(ranker), "library_versions", classmethod(lambda cls: {**real(), "sourcesum-bench": "9"})
    )
    entry = run_ranker(create_ranker("bm25"), split, store, progress=False)
    assert entry.complete


@pytest.mark.parametrize(
    "returned,message",
    [
        (lambda n: {i: 1.0 for i in range(n)}, "type dict"),
        (lambda n: "1" * n, "type str"),
        (lambda n: [True] * n, "type bool"),
        (lambda n: [10**400] * n, "too large for a float"),
        (lambda n: np.zeros((n, 1)), "shape"),
    ],
)
def test_ranker_outputs_must_be_sequences_of_real_numbers(returned, message, scores_dir, capsys):
    class Loose(Ranker):
        name = "loose"

        def score(self, pair):
            return returned(pair.n_sentences)

    register(Loose)
    try:
        line = one_error_line(capsys, "run", "--ranker", "loose", "--split", SPLIT, "--no-progress")
        assert "ranker loose: pair" in line and message in line
        assert not list(Path(scores_dir).rglob("*.json"))
    finally:
        RANKERS.unregister("loose")


def test_a_plugin_calling_sys_exit_is_an_error_not_a_silent_exit(scores_dir, capsys):
    class Quitter(Ranker):
        name = "quitter"

        def score(self, pair):
            raise SystemExit(0)

    register(Quitter)
    try:
        assert "SystemExit" in one_error_line(
            capsys, "run", "--ranker", "quitter", "--split", SPLIT, "--no-progress"
        )
    finally:
        RANKERS.unregister("quitter")
