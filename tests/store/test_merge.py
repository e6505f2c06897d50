"""Merging score stores (sourcesum.store.merge): pairs are joined, conflicting values refused
(nothing is written when any entry conflicts), other libraries refused but not another harness
version."""

from __future__ import annotations

import pytest
from sourcesum.data import load_split
from sourcesum.errors import ScoreFileError, SourceSumError
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.merge import merge_stores
from sourcesum.store.stores import ScoreStore
from support.store import bm25_entry, forge


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


SPLIT = "synth_alpha_sys"


def test_merge_refuses_other_libraries_but_not_another_harness_version(tmp_path):
    bm25_entry(tmp_path / "a")
    b = bm25_entry(tmp_path / "b")
    forge(b, lambda raw: raw["libraries"].update({"sourcesum-bench": "0.0.1"}))
    assert merge_stores([tmp_path / "a", tmp_path / "b"], tmp_path / "out").entries[0].complete
    forge(b, lambda raw: raw["libraries"].update({"numpy": "0.0.1"}))
    with pytest.raises(ScoreFileError, match="libraries differs"):
        merge_stores([tmp_path / "a", tmp_path / "b"], tmp_path / "out2")
    assert not (tmp_path / "out2").exists() or not any((tmp_path / "out2").rglob("*.json"))  # nothing written


def test_merge_writes_nothing_when_any_entry_conflicts(tmp_path):
    bm25_entry(tmp_path / "a")
    b = bm25_entry(tmp_path / "b")
    run_ranker(create_ranker("lead"), load_split(SPLIT), ScoreStore(tmp_path / "a"), progress=False)
    forge(
        b,
        lambda raw: raw["scores"].update(
            {next(iter(raw["scores"])): [9.0] * len(next(iter(raw["scores"].values())))}
        ),
    )
    with pytest.raises(ScoreFileError, match="different scores"):
        merge_stores([tmp_path / "a", tmp_path / "b"], tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.json"))
