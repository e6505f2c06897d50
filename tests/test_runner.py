"""Runner and score store: validation, cache keys, atomic saves, resuming interrupted runs,
sharing across splits, quick trials, shards and merging."""

from __future__ import annotations

import json
from contextlib import nullcontext
from typing import ClassVar

import pytest
from sourcesum.cli import main
from sourcesum.data import load_split
from sourcesum.errors import RankerError, ScoreFileError, SourceSumError
from sourcesum.evaluation import evaluate
from sourcesum.leaderboard import collect
from sourcesum.merge import merge_stores
from sourcesum.rankers import Ranker, create_ranker
from sourcesum.runner import Selection, Shard, group_batches, run_ranker, run_splits
from sourcesum.store import ScoreEntry, ScoreStore


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
        ("raise", " failed on pair {id}: ValueError: boom"),
        ("short", ": pair {id} has 12 scores but 13 sentences"),
        ("nan", ": pair {id} has a non-finite score \\(nan\\) for sentence 0"),
    ],
)
def test_bad_scores_name_ranker_and_pair_and_keep_the_rest(split, scores_dir, mode, message):
    target = split.pairs[25]
    store = ScoreStore(scores_dir)
    ranker = CountingRanker()
    ranker.fail_on, ranker.mode = target.id, mode
    # a raising batch is retried pair by pair (with a warning) to name the culprit; invalid
    # scores name their pair directly
    warns = pytest.warns(RuntimeWarning, match="one at a time") if mode == "raise" else nullcontext()
    with warns, pytest.raises(RankerError, match="ranker counting" + message.format(id=target.id)):
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
    [("raise", "IndexError: padding went wrong"), ("short", "returned 9 score lists for 10 pairs")],
)
def test_a_batch_error_is_not_hidden_when_every_pair_succeeds_alone(split, scores_dir, bug, original):
    ranker = BatchOnlyBug()
    ranker.bug = bug
    with pytest.warns(RuntimeWarning, match="one at a time"), pytest.raises(RankerError) as info:
        run_ranker(ranker, split, ScoreStore(scores_dir), progress=False)
    message = str(info.value)
    assert f"failed on a batch of 10 pairs (first pair {split.pairs[0].id})" in message
    assert original in message and "succeeded when scored alone" in message
    assert info.value.__cause__ is not None and original.split(":")[-1].strip() in str(info.value.__cause__)
    assert ranker.calls[-10:] == [p.id for p in split.pairs[:10]]  # each pair was tried alone
    assert not list(scores_dir.glob("*/*.json"))  # nothing of the failed batch was saved


# --- the runner owns sharing across splits ---------------------------------------------------


class RecordingRanker(CountingRanker):
    """Records every score_batch call (no fit override: gets cross-split document groups)."""

    name = "recording"
    batch_pairs: ClassVar[int] = 7

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
def cnn():
    return [load_split("cnn_pegasus"), load_split("cnn_reference")]


def test_pairs_of_several_splits_are_handed_over_in_whole_document_groups(cnn, scores_dir):
    store = ScoreStore(scores_dir)
    ranker = RecordingRanker()
    runs = run_splits(ranker, cnn, store, progress=False)
    handed = [p for batch in ranker.batches for p in batch]
    assert sorted(p.id for p in handed) == sorted(p.id for s in cnn for p in s)  # each pair once
    batch_of = {}
    for number, batch in enumerate(ranker.batches):
        for pair in batch:
            assert batch_of.setdefault(pair.document_key, number) == number  # a document is never cut
        assert len(batch) >= ranker.batch_pairs or number == len(ranker.batches) - 1
    assert sum(len({p.split for p in batch}) == 2 for batch in ranker.batches) == len(ranker.batches)
    assert [run.entry.complete for run in runs] == [True, True]
    for run in runs:  # every split's entry saved, with the scores its pairs got
        saved = store.load("recording", run.split.name, run.entry.key)
        assert saved.scores == run.entry.scores and len(saved.scores) == len(run.split)
        assert saved.scores[run.split.pairs[0].id] == [float(len(s)) for s in run.split.pairs[0].sentences]


def test_a_ranker_that_overrides_fit_is_run_split_by_split_on_whole_splits(cnn, scores_dir):
    ranker = FittedRanker()
    run_splits(ranker, cnn, ScoreStore(scores_dir), progress=False)
    fits = [e for e in ranker.events if e[0] == "fit"]
    assert fits == [("fit", "cnn_pegasus", 468), ("fit", "cnn_reference", 505)]
    second_fit = ranker.events.index(fits[1])
    assert {e[1] for e in ranker.events[:second_fit]} == {"cnn_pegasus"}
    assert {e[1] for e in ranker.events[second_fit:]} == {"cnn_reference"}
    assert all(len({p.split for p in batch}) == 1 for batch in ranker.batches)


def test_one_split_of_a_shared_corpus_computes_only_its_own_pairs(cnn, scores_dir):
    ranker = RecordingRanker()
    (run,) = run_splits(ranker, cnn[:1], ScoreStore(scores_dir), progress=False)
    assert {p.split for batch in ranker.batches for p in batch} == {"cnn_pegasus"}
    assert len(ranker.calls) == 468 and run.entry.complete
    assert len(list(scores_dir.glob("recording/*.json"))) == 1


def test_document_groups_are_batched_whole():
    groups = [["a"] * 3, ["b"] * 5, ["c"], ["d"] * 2]
    assert [len(b) for b in group_batches(groups, 4)] == [8, 3]
    assert [len(b) for b in group_batches(groups, 1)] == [3, 5, 1, 2]


# --- quick trials: --limit, --pairs ----------------------------------------------------------


def test_a_quick_trial_is_cached_in_the_normal_entry_and_a_full_run_resumes(split, scores_dir):
    store = ScoreStore(scores_dir)
    trial = CountingRanker()
    (run,) = run_splits(trial, [split], store, Selection(limit=3), progress=False)
    assert trial.calls == [p.id for p in split.pairs[:3]] and run.partial
    assert run.scored_split().pairs == split.pairs[:3] and list(run.scores()) == trial.calls
    chosen = Selection(pair_ids=frozenset({split.pairs[5].id, split.pairs[1].id}))
    picked = CountingRanker()
    run_splits(picked, [split], store, chosen, progress=False)
    assert picked.calls == [split.pairs[5].id]  # pair 1 was cached by the trial
    full = CountingRanker()
    entry = run_ranker(full, split, store, progress=False)
    assert entry.complete and len(full.calls) == len(split) - 4
    assert len(list(scores_dir.glob("counting/*.json"))) == 1


def test_a_subset_is_evaluated_on_its_own_pairs(split, scores_dir):
    entry = run_ranker(create_ranker("lead"), split, ScoreStore(scores_dir), progress=False)
    whole = evaluate(split, entry.scores, "lead")
    (run,) = run_splits(
        create_ranker("lead"), [split], ScoreStore(scores_dir), Selection(limit=5), progress=False
    )
    part = evaluate(run.scored_split(), run.scores(), "lead")
    assert len(part.per_pair) == 5 and len(whole.per_pair) == len(split)
    assert part.per_pair.equals(whole.per_pair.iloc[:5])


def test_quick_trials_from_the_cli_say_partial_and_stay_off_the_leaderboard(split, scores_dir, capsys):
    trial = ["run", "--ranker", "random", "-p", "random.seed=11"]  # no committed entry for seed 11
    assert main([*trial, "--split", "xsum_pegasus,cnn_pegasus", "--limit", "4", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "random(seed=11) on xsum_pegasus: partial (4 of 119 pairs)" in out
    assert "random(seed=11) on cnn_pegasus: partial (4 of 468 pairs)" in out
    entries = [entry for _, entry in ScoreStore(scores_dir).entries()]
    assert len(entries) == 2 and all(len(e.scores) == 4 and not e.complete for e in entries)
    pair_id = split.pairs[10].id
    assert main([*trial, "--split", "all", "--pairs", pair_id, "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)["results"]
    assert record["split"] == "xsum_pegasus" and record["examples"] == 1
    assert record["partial"] == "partial (1 of 119 pairs)"
    board = collect(ScoreStore(scores_dir), with_stats=False)
    assert not [row for row in board.rows if row.ranker == "random"]
    assert sorted(s.rsplit(": ", 1)[1] for s in board.stale if "/random/" in s) == [
        "partial (4/468 pairs)",
        "partial (5/119 pairs)",
    ]
    assert main([*trial, "--split", "xsum_pegasus", "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)["results"]
    assert record["examples"] == 119 and "partial" not in record


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--pairs", "no_such_pair"], "--pairs: no_such_pair not in split(s) xsum_pegasus"),
        (["--limit", "0"], "--limit: 0 is not >= 1"),
        (["--shard", "3/2"], "shard 3/2: K must be between 1 and N"),
        (["--shard", "two"], "--shard 'two': expected K/N"),
    ],
)
def test_bad_selections_are_errors_naming_the_input(scores_dir, capsys, argv, message):
    assert main(["run", "--ranker", "random", "--split", "xsum_pegasus", *argv]) == 2
    assert message in capsys.readouterr().err


# --- sharded runs and merge -----------------------------------------------------------------

SHARD_SPLITS = ["xsum_pegasus", "cnn_pegasus", "cnn_reference"]
SHARD_RANKERS = ["bm25", "random", "tfidf"]  # tfidf overrides fit: its IDF needs the whole split


def _store_files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.glob("*/*.json"))}


@pytest.mark.slow  # three rankers on three whole splits, sharded and not
def test_shards_merged_equal_an_unsharded_run_bit_for_bit(tmp_path, capsys):
    splits = [load_split(name) for name in SHARD_SPLITS]
    n = 3
    shards = [ScoreStore(tmp_path / f"shard{k}") for k in range(1, n + 1)]
    for k, store in enumerate(shards, start=1):
        for name in SHARD_RANKERS:
            runs = run_splits(
                create_ranker(name), splits, store, Selection(shard=Shard(k, n)), progress=False
            )
            assert all(run.partial and run.pairs for run in runs)
    # disjoint, and a document's pairs (in every split) all in one shard
    owner: dict[str, int] = {}
    by_id = {p.id: p for split in splits for p in split}
    for k, store in enumerate(shards):
        for _, entry in store.entries():
            assert not entry.complete and entry.scores
            for pid in entry.scores:
                assert owner.setdefault(by_id[pid].document_key, k) == k
    assert len(owner) == len({p.document_key for p in by_id.values()})
    assert main(["merge", *(str(s.root) for s in shards), "-o", str(tmp_path / "merged")]) == 0
    assert "merged 3 store(s)" in capsys.readouterr().out
    whole = ScoreStore(tmp_path / "whole")
    for name in SHARD_RANKERS:
        run_splits(create_ranker(name), splits, whole, progress=False)
    merged, unsharded = _store_files(tmp_path / "merged"), _store_files(whole.root)
    assert len(unsharded) == 9 and merged == unsharded


def test_a_shard_from_the_cli_is_partial(scores_dir, capsys):
    assert (
        main(
            [
                "run",
                "--ranker",
                "random",
                "-p",
                "random.seed=11",
                "--split",
                "xsum_pegasus",
                "--shard",
                "2/4",
                "--json",
            ]
        )
        == 0
    )
    (record,) = json.loads(capsys.readouterr().out)["results"]
    split = load_split("xsum_pegasus")
    expected = [p for p in split if Shard(2, 4).holds(p)]
    assert 0 < record["examples"] == len(expected) < len(split)
    assert record["partial"] == f"partial ({len(expected)} of 119 pairs)"


def _entry(split_name="xsum_pegasus", scores=None, n_pairs=119):
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
    merged = target.load("lead", "xsum_pegasus", _entry().key)
    assert merged.scores == {"p1": [1.0, 2.0], "p2": [0.5], "p3": [3.0], "p4": [4.0]}

    b.save(_entry(scores={"p2": [0.5000001]}))
    with pytest.raises(
        ScoreFileError, match="lead on xsum_pegasus: pair p2 has different scores in .*a/lead"
    ):
        merge_stores([a.root, b.root], tmp_path / "other")
    b.save(_entry(scores={"p9": [1.0]}, n_pairs=120))
    with pytest.raises(ScoreFileError, match="n_pairs differs \\(120 vs 119\\)"):
        merge_stores([a.root, b.root], tmp_path / "other")
    with pytest.raises(SourceSumError, match="no_such_store is not a score-store folder"):
        merge_stores([tmp_path / "no_such_store"], tmp_path / "other")
