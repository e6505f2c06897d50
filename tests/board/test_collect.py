"""Collecting a board (sourcesum.board.collect): a declared board renders exactly the declared
rows (an incomplete one writes nothing and says how to fix it); with ``--all``, entries of rankers
not installed are marked rows and non-canonical parameters are stale, never merged."""

from __future__ import annotations

from pathlib import Path

import pytest
from sourcesum.board import collect, collect_declared, read_declaration
from sourcesum.data import load_split
from sourcesum.errors import ScoreFileError
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.stores import ScoreStore, read_entry
from support.cli import run_cli
from support.store import bm25_entry


def _declare(path: Path, rows: list[str], references: list[str] = (), dataset: str = "synthnews") -> Path:
    text = f'dataset = "{dataset}"\n\n'
    text += "".join(f'[[rows]]\nranker = "{r}"\n\n' for r in rows)
    text += "".join(f'[[references]]\nranker = "{r}"\n\n' for r in references)
    path.write_text(text)
    return path


def test_declared_board_renders_exactly_the_declared_rows(capsys, scores_dir, tmp_path):
    code, _, err = run_cli(
        capsys, "run", "--ranker", "lead,random,oracle", "--split", "synthnews", "--no-progress"
    )
    assert code == 0, err
    declaration = _declare(tmp_path / "leaderboard.toml", ["lead"], ["oracle"])
    out = tmp_path / "board.md"
    code, _, err = run_cli(
        capsys,
        "leaderboard",
        "--declaration",
        str(declaration),
        "--scores-dir",
        str(scores_dir),
        "-o",
        str(out),
    )
    assert code == 0, err
    text = out.read_text()
    assert "| lead |" in text and "| oracle |" in text and "| random |" not in text
    assert "Alpha-Sys" in text and "Beta-Ref" in text and out.with_suffix(".png").is_file()
    # the Python API gives the same rows, the oracle a reference row with nDCG 1 on every column
    board = collect_declared(read_declaration(declaration), ScoreStore(scores_dir, writable=False))
    assert sorted(row.label for row in board.rows) == ["lead", "oracle"]
    assert [s.name for s in board.splits] == [
        "synth_alpha_sys",
        "synth_alpha_ref",
        "synth_beta_sys",
        "synth_beta_ref",
    ]
    oracle = board.row("oracle")
    assert oracle.reference and all(
        oracle.evaluations[s.name].mean(board.measures[0]) == 1.0 for s in board.splits
    )


def test_incomplete_declared_board_writes_nothing_and_says_how_to_fix(capsys, scores_dir, tmp_path):
    run_cli(capsys, "run", "--ranker", "lead", "--split", "synth_alpha_sys", "--no-progress")
    declaration = _declare(tmp_path / "leaderboard.toml", ["lead", "bm25"])
    out = tmp_path / "board.md"
    code, _, err = run_cli(
        capsys,
        "leaderboard",
        "--declaration",
        str(declaration),
        "--scores-dir",
        str(scores_dir),
        "-o",
        str(out),
    )
    assert code == 2 and not out.exists() and not out.with_suffix(".png").exists()
    assert err.startswith("error: 7 declared entries are not complete and valid; nothing was written")
    assert (
        "lead on synth_alpha_ref: missing" in err
        and "compute: sourcesum run --ranker lead --split synth_alpha_ref" in err
    )
    assert "bm25 on synth_alpha_sys: missing" in err and "lead on synth_alpha_sys" not in err


def test_non_canonical_parameters_are_stale_not_merged(scores_dir, capsys, tmp_path):
    split = load_split("synth_alpha_sys")
    good = run_ranker(create_ranker("random", seed=1), split, ScoreStore(scores_dir), progress=False)
    odd = ScoreEntry(**{**good.__dict__, "params": {"seed": "1"}, "scores": dict(good.scores)})
    ScoreStore(scores_dir).save(odd)
    out = tmp_path / "all.md"
    code, _, err = run_cli(capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(out))
    assert code == 0 and "not in canonical form" in err


SPLIT = "synth_alpha_sys"


def test_entries_of_rankers_not_installed_are_rows_only_under_all_and_marked(tmp_path, capsys):
    root = tmp_path / "store"
    path = bm25_entry(root)
    entry = read_entry(path)
    forged = ScoreEntry(**{**entry.__dict__, "ranker": "gone", "label": "bm25"})
    alien = root / "gone" / f"{SPLIT}.{forged.key}.json"
    alien.parent.mkdir()
    alien.write_text(forged.to_json())
    board = collect(ScoreStore(root), published=False, dataset_name="synthnews")
    assert "gone" not in [r.ranker for r in board.rows] and any("not installed" in s for s in board.stale)
    everything = collect(ScoreStore(root), published=False, dataset_name="synthnews", include_unknown=True)
    [row] = [r for r in everything.rows if r.ranker == "gone"]
    assert row.label.startswith("gone{") and row.label.endswith("(not installed: not re-validated)")
    # the command: `leaderboard --all` shows it, marked, and says nothing about skipping it
    from sourcesum.cli import main

    out = tmp_path / "all.md"
    argv = ["leaderboard", "--all", "--dataset", "synthnews", "--scores-dir", str(root), "-o", str(out)]
    assert main(argv) == 0
    assert "not re-validated" in out.read_text(encoding="utf-8")
    assert "gone" not in capsys.readouterr().err
    # a folder named like no ranker can be is not an entry at all
    weird = root / "bм25" / f"{SPLIT}.{forged.key}.json"
    weird.parent.mkdir()
    weird.write_text(ScoreEntry(**{**entry.__dict__, "ranker": "bм25"}).to_json())
    with pytest.raises(ScoreFileError, match="is not a name"):
        read_entry(weird)
