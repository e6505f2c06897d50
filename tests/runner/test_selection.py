"""Selections (sourcesum.runner.selection): quick trials (``--limit``, ``--pairs``) say partial and
stay off the leaderboard, bad selections are errors naming the input, and shards merged equal an
unsharded run bit for bit."""

from __future__ import annotations

import json

import pytest
from sourcesum.board import collect
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_splits
from sourcesum.runner.selection import Selection, Shard
from sourcesum.store.stores import ScoreStore

BOARD = dataset("synthnews").board_splits()
"""synth_alpha_sys, synth_alpha_ref, synth_beta_sys, synth_beta_ref (3 pairs each)."""


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
