"""``sourcesum verify`` (sourcesum.runner.verify): a forged label never reaches a board and a
forgery of the scores is caught (also on a sample), forged library versions are noted (and fail
``--strict``), and an entry holding a pair its split lacks is named."""

from __future__ import annotations

from sourcesum.board import collect
from sourcesum.data import load_split
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.runner.verify import sample_ids, verify_entry
from sourcesum.store.stores import ScoreStore, read_entry
from support.cli import run_cli
from support.store import bm25_entry, forge, rewrite_entry

SPLIT = "synth_alpha_sys"


def test_a_forged_label_never_reaches_a_board_and_verify_catches_forged_scores(tmp_path, capsys):
    root = tmp_path / "store"
    path = bm25_entry(root)
    for name in ("synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"):
        run_ranker(create_ranker("bm25"), load_split(name), ScoreStore(root), progress=False)
    forge(path, lambda raw: raw.update(label="oracle | 1.0000"))
    board = collect(ScoreStore(root), published=False, dataset_name="synthnews")
    assert [r.label for r in board.rows] == ["bm25"]  # derived, never read from the file
    assert verify_entry(path, [ScoreStore(root)]).ok  # the scores themselves are genuine
    forge(path, lambda raw: raw["scores"].update({k: [1.0] * len(v) for k, v in raw["scores"].items()}))
    result = verify_entry(path, [ScoreStore(root)])
    assert not result.ok and result.identical == 0 and "NOT reproduced" in result.summary()
    code, out, _ = run_cli(capsys, "verify", str(path), "--scores-dir", str(root))
    assert code == 1 and "NOT reproduced" in out
    # --sample N recomputes N pairs (the same N for the same entry), and catches a forgery there
    total = len(load_split(SPLIT))
    assert 2 < total
    sampled = verify_entry(path, [ScoreStore(root)], sample=2)
    assert (sampled.checked, sampled.total) == (2, total) and not sampled.ok
    assert sample_ids(read_entry(path), 2) == sample_ids(read_entry(path), 2)
    code, out, _ = run_cli(capsys, "verify", str(path), "--scores-dir", str(root), "--sample", "2")
    assert code == 1 and f"2 of {total} pairs: " in out and "NOT reproduced" in out


def test_verify_notes_forged_library_versions_and_strict_fails_them(tmp_path, capsys):
    path = bm25_entry(tmp_path / "store")
    rewrite_entry(path, lambda e: e.libraries.update(numpy="0.0.1", **{"rank-bm25": "9.9"}))
    code, out, _ = run_cli(capsys, "verify", str(path))
    assert code == 0 and "reproduced bit for bit" in out
    assert "note: recorded library versions differ" in out and "numpy (recorded 0.0.1, installed 2." in out
    code, out, _ = run_cli(capsys, "verify", "--strict", str(path))
    assert code == 1 and "NOT reproduced: recorded library versions differ" in out and "rank-bm25" in out


def test_verify_and_run_name_the_entry_holding_a_pair_its_split_lacks(tmp_path, capsys, monkeypatch):
    store = tmp_path / "store"
    path = bm25_entry(store)

    def add_bogus(entry):
        first = sorted(entry.scores)[0]
        entry.scores["bogus_pair"] = entry.scores.pop(first)

    rewrite_entry(path, add_bogus)
    code, _, err = run_cli(capsys, "verify", str(path))
    assert code == 2 and str(path) in err and "holds pair bogus_pair" in err and "--pairs" not in err
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(store))
    code, _, err = run_cli(capsys, "run", "--ranker", "bm25", "--split", "synth_alpha_sys", "--no-progress")
    assert code == 2 and str(path) in err and "it holds pair bogus_pair, which split synth_alpha_sys" in err
