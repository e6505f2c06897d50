"""Runner and score store: validation, cache keys, atomic saves, resuming interrupted runs,
sharing across splits, quick trials, shards and merging, and the training protocols through
which alone a ranker receives labels.

Everything here runs on the synthetic dataset ``synthnews`` (tests/fixtures/synthetic): four
board splits in two corpora whose two splits share their documents, plus the unfiltered
``synth_alpha_sys_all`` (5 pairs on 5 documents, one of them a single sentence)."""

from __future__ import annotations

import json
from contextlib import nullcontext
from typing import Any, ClassVar

import numpy as np
import pytest
from sourcesum.board import collect
from sourcesum.cli import main
from sourcesum.data import Judgment, dataset, load_split
from sourcesum.errors import LabelAccessError, ParameterError, RankerError, ScoreFileError, SourceSumError
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.rankers import RANKERS, Ranker, create_ranker, register
from sourcesum.rankers.baselines import OracleRanker
from sourcesum.rankers.context import ProtocolSpec, TrainingData
from sourcesum.runner.batches import group_batches, group_by_document
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_ranker, run_splits
from sourcesum.runner.selection import Selection, Shard
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.merge import merge_stores
from sourcesum.store.stores import ScoreStore

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


def test_store_round_trip_is_exact_and_one_pair_per_line(split, scores_dir):
    store = ScoreStore(scores_dir)
    entry = run_ranker(create_ranker("random", seed=7), split, store, progress=False)
    path = store.path_for("random", split.name, entry.key)
    text = path.read_text()
    assert (
        text.count("\n") == len(split) + 17
    )  # 14 header lines (provenance and header_sha256 since format 3), braces
    loaded = ScoreEntry.from_json(text, path)
    assert loaded.scores == entry.scores and loaded.to_json() == text
    assert not list(scores_dir.glob("**/*.tmp"))


def test_random_is_reproducible_and_seeded(split):
    pair = split.pairs[0]
    assert create_ranker("random").score(pair) == create_ranker("random").score(pair)
    assert create_ranker("random", seed=1).score(pair) != create_ranker("random").score(pair)
    assert create_ranker("random", seed=3).label == "random(seed=3)"


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


def test_document_groups_are_batched_whole(board_splits):
    groups = [["a"] * 3, ["b"] * 5, ["c"], ["d"] * 2]
    assert [len(b) for b in group_batches(groups, 4)] == [8, 3]
    assert [len(b) for b in group_batches(groups, 1)] == [3, 5, 1, 2]
    grouped = group_by_document([p for s in board_splits for p in s])
    assert [len(g) for g in grouped] == [2] * 6  # each document: its pair in both splits of its corpus
    assert all(len({p.document_key for p in g}) == 1 for g in grouped)


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


def test_quick_trials_from_the_cli_say_partial_and_stay_off_the_leaderboard(scores_dir, capsys):
    alpha, beta = load_split("synth_alpha_sys"), load_split("synth_beta_sys")
    trial = ["run", "--ranker", "random", "-p", "random.seed=11"]
    assert main([*trial, "--split", f"{alpha.name},{beta.name}", "--limit", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "random(seed=11) on synth_alpha_sys: partial (1 of 3 pairs)" in out
    assert "random(seed=11) on synth_beta_sys: partial (1 of 3 pairs)" in out
    entries = [entry for _, entry in ScoreStore(scores_dir).entries()]
    assert len(entries) == 2 and all(len(e.scores) == 1 and not e.complete for e in entries)
    pair_id = alpha.pairs[2].id
    assert main([*trial, "--split", "synthnews", "--pairs", pair_id, "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)["results"]
    assert record["split"] == "synth_alpha_sys" and record["pairs"] == 1
    assert record["partial"] == "partial (1 of 3 pairs)"
    board = collect(ScoreStore(scores_dir), dataset_name="synthnews")
    assert not [row for row in board.rows if row.ranker == "random"]
    assert sorted(s.rsplit(": ", 1)[1] for s in board.stale if "/random/" in s) == [
        "partial (1/3 pairs)",
        "partial (2/3 pairs)",
    ]
    assert main([*trial, "--split", "synth_alpha_sys", "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)["results"]
    assert record["pairs"] == 3 and "partial" not in record


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--pairs", "no_such_pair"], "--pairs: no_such_pair not in split(s) synth_alpha_sys"),
        (["--limit", "0"], "--limit: 0 is not >= 1"),
        (["--shard", "3/2"], "shard 3/2: K must be between 1 and N"),
        (["--shard", "two"], "--shard 'two': expected K/N"),
    ],
)
def test_bad_selections_are_errors_naming_the_input(scores_dir, capsys, argv, message):
    assert main(["run", "--ranker", "random", "--split", "synth_alpha_sys", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not list(scores_dir.rglob("*.json"))  # nothing scored


# --- sharded runs and merge -----------------------------------------------------------------

SHARD_SPLITS = [*BOARD, "synth_alpha_sys_all"]
SHARD_RANKERS = ["bm25", "random", "tfidf"]  # tfidf overrides fit: its IDF needs the whole split


def _store_files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.glob("*/*.json"))}


def test_shards_merged_equal_an_unsharded_run_bit_for_bit(tmp_path, capsys):
    splits = [load_split(name) for name in SHARD_SPLITS]
    n = 3
    shards = [ScoreStore(tmp_path / f"shard{k}") for k in range(1, n + 1)]
    for k, store in enumerate(shards, start=1):
        for name in SHARD_RANKERS:
            runs = run_splits(
                create_ranker(name), splits, store, Selection(shard=Shard(k, n)), progress=False
            )
            assert all(run.partial for run in runs) and any(run.pairs for run in runs)
            for run in runs:  # a split the shard holds no pair of gets no entry
                assert store.load(name, run.split.name, run.entry.key) is None or run.pairs
    # disjoint, and a document's pairs (in every split) all in one shard
    owner: dict[str, int] = {}
    by_id = {(split.name, p.id): p for split in splits for p in split}
    for k, store in enumerate(shards):
        for _, entry in store.entries():
            assert not entry.complete and entry.scores
            for pid in entry.scores:
                assert owner.setdefault(by_id[(entry.split, pid)].document_key, k) == k
    assert len(owner) == len({p.document_key for p in by_id.values()}) == 8
    assert len(set(owner.values())) == n  # every shard holds a document
    assert main(["merge", *(str(s.root) for s in shards), "-o", str(tmp_path / "merged")]) == 0
    assert "merged 3 store(s)" in capsys.readouterr().out
    whole = ScoreStore(tmp_path / "whole")
    for name in SHARD_RANKERS:
        run_splits(create_ranker(name), splits, whole, progress=False)
    merged, unsharded = _store_files(tmp_path / "merged"), _store_files(whole.root)
    assert len(unsharded) == len(SHARD_RANKERS) * len(SHARD_SPLITS) and merged == unsharded


def test_a_shard_from_the_cli_is_partial(scores_dir, capsys):
    argv = ["run", "--ranker", "random", "-p", "random.seed=11", "--split", "synth_alpha_sys_all"]
    assert main([*argv, "--shard", "2/4", "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)["results"]
    split = load_split("synth_alpha_sys_all")
    expected = [p for p in split if Shard(2, 4).holds(p)]
    assert 0 < record["pairs"] == len(expected) < len(split)
    assert record["partial"] == f"partial ({len(expected)} of 5 pairs)"


def _entry(split_name="synth_alpha_sys_all", scores=None, n_pairs=5):
    return ScoreEntry(
        ranker="lead",
        version="1",
        params={},
        label="lead",
        split=split_name,
        data_sha256="abc",
        n_pairs=n_pairs,
        scores=scores or {},
    )


def test_merge_joins_pairs_and_refuses_conflicting_values(tmp_path):
    a, b, target = (ScoreStore(tmp_path / name) for name in ("a", "b", "target"))
    a.save(_entry(scores={"p1": [1.0, 2.0], "p2": [0.5]}))
    b.save(_entry(scores={"p2": [0.5], "p3": [3.0]}))
    target.save(_entry(scores={"p4": [4.0]}))
    report = merge_stores([a.root, b.root], target.root)
    assert "2 store(s)" in report.summary() and "1 entries (0 complete, 1 partial)" in report.summary()
    merged = target.load("lead", "synth_alpha_sys_all", _entry().key)
    assert merged.scores == {"p1": [1.0, 2.0], "p2": [0.5], "p3": [3.0], "p4": [4.0]}

    # saving into a store merges by the same rule: a different value for a stored pair is refused
    b_file = b.path_for("lead", "synth_alpha_sys_all", _entry().key)
    before = b_file.read_bytes()
    with pytest.raises(
        ScoreFileError, match=f"pair p2 has different scores in {b_file} and the entry being saved"
    ):
        b.save(_entry(scores={"p2": [0.5000001]}))
    assert b_file.read_bytes() == before

    c, d = ScoreStore(tmp_path / "c"), ScoreStore(tmp_path / "d")
    c.save(_entry(scores={"p2": [0.5000001]}))
    with pytest.raises(
        ScoreFileError,
        match="lead on synth_alpha_sys_all: pair p2 has different scores in .*a/lead.* and .*c/lead",
    ):
        merge_stores([a.root, c.root], tmp_path / "other")
    d.save(_entry(scores={"p9": [1.0]}, n_pairs=6))
    with pytest.raises(ScoreFileError, match="n_pairs differs \\(6 vs 5\\)"):
        merge_stores([a.root, d.root], tmp_path / "other")
    assert not (tmp_path / "other").exists() or not list((tmp_path / "other").glob("*/*.json"))
    with pytest.raises(SourceSumError, match="no_such_store is not a score-store folder"):
        merge_stores([tmp_path / "no_such_store"], tmp_path / "other")


# --- labels reach a ranker through its training protocol only ---------------------------------


def test_the_oracle_gets_labels_only_through_its_own_protocol(board_splits, scores_dir, monkeypatch):
    config = Configuration.of("oracle")
    assert config.reference and config.protocol == ProtocolSpec("own")
    alpha = board_splits[:2]
    # the pairs it scores carry no labels, so without training it has nothing to score by
    untrained = create_ranker("oracle")
    with pytest.raises(RankerError, match="no labels for pair alpha__doc0__sys__0; the runner trains it"):
        untrained.score(alpha[0].pairs[0])
    with pytest.raises(LabelAccessError):
        alpha[0].pairs[0].votes  # noqa: B018

    trained: list[TrainingData] = []
    original_train = OracleRanker.train

    def spy(self, data):
        trained.append(data)
        original_train(self, data)

    monkeypatch.setattr(OracleRanker, "train", spy)
    runs = run_splits(create_ranker("oracle"), alpha, ScoreStore(scores_dir), progress=False)
    # one training per split, on exactly that split's pairs and judgments (the own protocol)
    assert [d.trained_on for d in trained] == [(s.name,) for s in alpha]
    for data, split in zip(trained, alpha, strict=True):
        assert data.pairs == split.pairs and data.judgments == split.judgments
        assert data.min_relevant == split.min_relevant == 2 and data.base_scores is None
    for run in runs:
        split = run.split
        assert run.entry.complete
        assert run.entry.scores == {p.id: list(split.graded(p.id)) for p in split}
        evaluation = evaluate_split(split, run.entry.scores, "oracle")
        for measure in (NDCG, AP):  # 1 wherever defined (AP: where a sentence has 2 votes)
            values = evaluation.values(measure)
            assert np.isfinite(values).sum() >= 2 and np.allclose(values[np.isfinite(values)], 1.0)


class _Peeking(Ranker):
    """Not a reference row, yet declares the ``own`` protocol (the labels of its own pairs)."""

    name = "test_peeking"
    reference = False
    trained = 0

    @classmethod
    def training_protocol(cls, params):
        return ProtocolSpec("own")

    def train(self, data):
        type(self).trained += 1
        self._graded = {p.id: j.graded for p, j in zip(data.pairs, data.judgments, strict=True)}

    def score(self, pair):
        return [float(g) for g in self._graded[pair.id]]


@pytest.fixture
def peeking():
    register(_Peeking)
    _Peeking.trained = 0
    try:
        yield _Peeking
    finally:
        RANKERS._classes.pop(_Peeking.name)


def test_a_non_reference_ranker_declaring_own_labels_is_refused(peeking, scores_dir, capsys):
    message = "protocol 'own' reads the labels of the pairs it scores, which only reference rows"
    with pytest.raises(ParameterError, match=message):
        Configuration.of(peeking.name).protocol  # noqa: B018
    with pytest.raises(ParameterError, match=f"ranker {peeking.name}: {message}"):
        run_splits(peeking(), [load_split("synth_alpha_sys")], ScoreStore(scores_dir), progress=False)
    code = main(["run", "--ranker", peeking.name, "--split", "synthnews", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and message in err[0]
    assert peeking.trained == 0 and not list(scores_dir.glob("**/*.json"))  # never trained, nothing stored


class _KFoldSpy(Ranker):
    """A supervised ranker under ``kfold``: records what each training saw."""

    name = "test_kfold_spy"
    seen: ClassVar[list[tuple[tuple[str, ...], frozenset[str]]]] = []

    def __init__(self, folds: int = 3):
        self.folds = folds

    @classmethod
    def training_protocol(cls, params: Any) -> ProtocolSpec:
        return ProtocolSpec("kfold", {"folds": params["folds"], "seed": 0})

    def train(self, data):
        assert all(isinstance(j, Judgment) for j in data.judgments)
        self._trained = frozenset(p.id for p in data.pairs)
        type(self).seen.append((data.trained_on, self._trained))

    def score(self, pair):
        assert pair.id not in self._trained  # never scored after training on its own labels
        return [0.0] * pair.n_sentences


def test_a_supervised_ranker_never_trains_on_the_pairs_it_scores(scores_dir):
    register(_KFoldSpy)
    _KFoldSpy.seen = []
    try:
        assert Configuration.of(_KFoldSpy.name).protocol.name == "kfold"
        split = load_split("synth_alpha_sys_all")
        entry = run_ranker(_KFoldSpy(), split, ScoreStore(scores_dir), progress=False)
    finally:
        RANKERS._classes.pop(_KFoldSpy.name)
    assert entry.complete
    assert 2 <= len(_KFoldSpy.seen) <= 3
    ids = {p.id for p in split}
    for _, training in _KFoldSpy.seen:
        assert training < ids  # a strict subset: the held-out fold's pairs are missing
