"""``sourcesum migrate`` (sourcesum.store.migrate): entries of formats 1 and 2 are rewritten with
their scores and keys unchanged, and two concurrent migrations convert each entry once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sourcesum import paths
from sourcesum.data import load_split
from sourcesum.errors import ScoreFileError
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.store.entry import FORMAT, ScoreEntry
from sourcesum.store.migrate import migrate
from sourcesum.store.stores import ScoreStore, read_entry
from support.data import BOARD_SPLITS
from support.store import bm25_entry, lead_entry


@pytest.fixture
def one_entry(scores_dir) -> tuple[ScoreStore, ScoreEntry, Path]:
    """lead on synth_alpha_sys in the user store: the store, the entry and its file."""
    return lead_entry(scores_dir)


def test_format_1_entries_migrate_without_touching_scores(one_entry):
    store, entry, path = one_entry
    legacy = json.loads(path.read_text())
    for key in ("key", "libraries", "scores_sha256"):
        legacy.pop(key)
    legacy["format"] = "sourcesum-scores/1"
    path.write_text(json.dumps(legacy))
    with pytest.raises(ScoreFileError, match="sourcesum migrate"):
        read_entry(path)
    assert migrate(store.root) == [path]
    assert read_entry(path).scores == entry.scores


def test_migrate_rewrites_format_2_with_scores_and_keys_unchanged(tmp_path):
    path = bm25_entry(tmp_path / "store")
    raw = json.loads(path.read_text())
    raw["format"] = "sourcesum-scores/2"
    for key in ("provenance", "header_sha256"):
        raw.pop(key)
    path.write_text(json.dumps(raw))
    with pytest.raises(ScoreFileError, match="sourcesum migrate"):
        read_entry(path)
    assert migrate(tmp_path / "store") == [path]
    again = json.loads(path.read_text())
    assert again["format"] == FORMAT and again["key"] == raw["key"] and again["scores"] == raw["scores"]
    assert read_entry(path).libraries == raw["libraries"] and migrate(tmp_path / "store") == []


def test_two_concurrent_migrations_convert_each_entry_once(tmp_path):
    import json
    import subprocess
    import sys

    store = tmp_path / "store"
    for split in BOARD_SPLITS:
        for name in ("lead", "bm25", "random"):
            run_ranker(create_ranker(name), load_split(split), ScoreStore(store), progress=False)
    files = sorted(store.glob("*/*.json"))
    for path in files:
        raw = json.loads(path.read_text())
        raw["format"] = "sourcesum-scores/2"
        for key in ("provenance", "header_sha256"):
            raw.pop(key)
        path.write_text(json.dumps(raw))
    script = (
        "import sys; sys.path.insert(0, 'tests/fixtures/synthetic'); import synthetic_datasets; "
        "from sourcesum.store.migrate import migrate; print(len(migrate(sys.argv[1])))"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(store)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=paths.PROJECT_ROOT,
        )
        for _ in range(2)
    ]
    results = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 for run in runs), results
    assert sorted(int(out) for out, _ in results) == [0, len(files)]
