"""Score entries (sourcesum.store.entry): an entry records its key, checksums and library
versions; every header field is under the checksum; an entry under another name, edited scores
or headers, and garbage are errors naming the file (``--all`` skips them)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from sourcesum.errors import ScoreFileError
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.stores import ScoreStore, read_entry
from support.cli import run_cli
from support.store import bm25_entry, lead_entry


@pytest.fixture
def one_entry(scores_dir) -> tuple[ScoreStore, ScoreEntry, Path]:
    """lead on synth_alpha_sys in the user store: the store, the entry and its file."""
    return lead_entry(scores_dir)


def test_entry_records_key_checksum_and_library_versions(one_entry):
    _, entry, path = one_entry
    header = json.loads(path.read_text())
    assert header["format"] == "sourcesum-scores/3" and header["key"] == entry.key
    assert {"python", "numpy", "sourcesum-bench"} <= set(header["libraries"])
    assert read_entry(path).scores == entry.scores


def test_entry_under_another_name_is_rejected(one_entry):
    store, _, path = one_entry
    wrong = store.root / "bm25" / path.name
    wrong.parent.mkdir()
    shutil.copy(path, wrong)
    with pytest.raises(ScoreFileError, match=r"holds lead on synth_alpha_sys .* belongs at lead/"):
        read_entry(wrong)


def test_edited_scores_and_headers_are_rejected(one_entry):
    _, _, path = one_entry
    text = path.read_text()
    first_value = text.split('": [', 2)[2].split(",")[0]  # first score of a pair
    edited = text.replace(f'": [{first_value},', '": [99.0,', 1)
    assert edited != text
    path.write_text(edited)
    with pytest.raises(ScoreFileError, match="do not match their scores_sha256"):
        read_entry(path)
    path.write_text(text.replace('"version": "1"', '"version": "2"'))
    with pytest.raises(ScoreFileError, match="header key .* does not match"):
        read_entry(path)


def test_garbage_is_an_error_naming_the_file_and_all_mode_skips_it(one_entry, capsys, tmp_path):
    store, _, path = one_entry
    garbage = store.root / "lead" / "synth_alpha_ref.000000000000.json"
    garbage.write_bytes(os.urandom(256) + b"\xff")
    with pytest.raises(ScoreFileError, match="synth_alpha_ref.000000000000.json: not UTF-8"):
        read_entry(garbage)
    out = tmp_path / "all.md"
    code, _, err = run_cli(capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(out))
    assert code == 0 and "synth_alpha_ref.000000000000.json: invalid" in err
    assert "| lead |" in out.read_text()  # the valid entry still makes its row


@pytest.mark.parametrize(
    "field,value",
    [
        ("label", "bm25 | 1.0000 | 1.0000"),
        ("n_pairs", 1),
        ("libraries", {"numpy": "0.0"}),
        ("provenance", {"weights": "x"}),
        ("fits", {"a+b": {"weights": [1.0]}}),
    ],
)
def test_every_header_field_is_under_the_checksum(tmp_path, field, value):
    path = bm25_entry(tmp_path / "store")
    raw = json.loads(path.read_text())
    raw[field] = value
    path.write_text(json.dumps(raw))
    with pytest.raises(ScoreFileError, match="header_sha256|more than its n_pairs"):
        read_entry(path)


def test_merging_one_read_entry_keeps_its_verified_checksum(one_entry, monkeypatch):
    """A store layer's entry passes through :func:`merge_entries` alone: its copy keeps the
    checksum verified on read (no recomputation); a copy that gains a pair recomputes it."""
    from sourcesum.store import entry as entry_module
    from sourcesum.store.entry import merge_entries, scores_sha256

    _, _, path = one_entry
    read = read_entry(path)
    merged = merge_entries([(str(path), read)])
    calls: list[int] = []
    monkeypatch.setattr(entry_module, "scores_sha256", lambda s: calls.append(1) or scores_sha256(s))
    assert merged.scores == read.scores and merged.scores is not read.scores
    assert merged.scores_checksum() == read.verified[2] and calls == []
    merged.scores["another pair"] = [0.0]
    assert merged.scores_checksum() == scores_sha256(merged.scores) and calls == [1]


def test_a_fit_is_stored_read_back_and_merged_only_with_the_same_fit(tmp_path):
    """``fits`` round-trips through the file and the memoised read; an entry without fits has
    no such header field (so entries written before it keep their checksums); merging unites
    fits of distinct assignments and refuses two fits of one."""
    from sourcesum.errors import StoreConflict
    from sourcesum.store.entry import merge_entries
    from sourcesum.store.stores import read_entry_memoised

    path = bm25_entry(tmp_path / "store")
    plain = read_entry(path)
    assert "fits" not in json.loads(path.read_text()) and plain.fits == {}
    fit = {"trained_on": ["a", "b"], "pairs": 3, "weights": [0.25, -0.75, 1e-17]}
    plain.fits["a+b"] = fit
    path.write_text(plain.to_json())  # (saving it over the fitless file is a conflict)
    assert json.loads(path.read_text())["fits"] == {"a+b": fit}
    for read in (read_entry(path), read_entry_memoised(path), read_entry_memoised(path)):
        assert read.fits == {"a+b": fit}
    other = ScoreEntry(**{**plain.__dict__, "fits": {"c": {"weights": [1.0]}}, "verified": None})
    assert merge_entries([("x", plain), ("y", other)]).fits == {"a+b": fit, "c": {"weights": [1.0]}}
    changed = ScoreEntry(**{**plain.__dict__, "fits": {"a+b": {**fit, "weights": [0.25, -0.75, 0.0]}}})
    with pytest.raises(StoreConflict, match=r"cannot merge y into x: the fit on a\+b differs"):
        merge_entries([("x", plain), ("y", changed)])
