"""``sourcesum cite``: on a synthetic board (the dataset's BibTeX, the harness's ``@software``
entry with its git commit, the board's inputs digest, plugin rows), an incomplete board, the
transfer tasks' papers, and bad input; every entry key of every declared row (held-out and task
boards included) and each dataset's data at its pinned commit."""

from __future__ import annotations

import json
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from sourcesum import __version__, paths
from sourcesum.board import collect_declared, read_declaration
from sourcesum.board.citation import data_bibtex, harness_revision, software_bibtex
from sourcesum.cli import main
from sourcesum.data import dataset
from sourcesum.paths import PROJECT_ROOT
from sourcesum.store.stores import ScoreStore
from support.boards import declaration
from support.cli import run_cli
from support.rankers import LongestFirst
from support.store import stacked_board

BOARD = dataset("synthnews").board_splits()


def _board(tmp_path: Path, rows) -> Path:
    path = tmp_path / "board.toml"
    path.write_text(declaration(rows=rows), encoding="utf-8")
    return path


def test_cite_a_complete_board_with_a_plugin_row(capsys, scores_dir, tmp_path):
    pytest.importorskip("sourcesum_overlap")  # the example plugin (scripts/test.sh installs it)
    path = _board(tmp_path, ("lead", "random", "overlap"))
    assert (
        main(["run", "--ranker", "lead,random,overlap,oracle", "--split", "synthnews", "--no-progress"]) == 0
    )
    capsys.readouterr()
    cite = ("cite", "--declaration", str(path), "--scores-dir", str(scores_dir))
    code, out, err = run_cli(capsys, *cite)
    assert code == 0 and err == ""

    board = collect_declared(read_declaration(path), ScoreStore(scores_dir, writable=False))
    assert len(board.inputs_sha256) == 64
    revision = harness_revision()
    assert out.startswith("% SynthNews, the dataset of this board: cite its paper\n")
    assert dataset("synthnews").citation in out
    assert software_bibtex(revision) in out
    assert f"board: {path} (entries from {scores_dir} over {paths.COMMITTED_SCORES_DIR})" in out
    assert f"inputs sha256: {board.inputs_sha256} (" in out

    # the JSON carries the same, the digest equal to the board's own JSON
    code, js, _ = run_cli(capsys, *cite, "--json")
    payload = json.loads(js)
    _, board_js, _ = run_cli(
        capsys, "leaderboard", "--declaration", str(path), "--scores-dir", str(scores_dir), "--format", "json"
    )
    assert payload["schema"] == "sourcesum-cite/2"
    assert payload["board"]["inputs_sha256"] == board.inputs_sha256 == json.loads(board_js)["inputs_sha256"]
    assert payload["board"]["incomplete_entries"] == 0
    assert payload["software"]["version"] == __version__ and payload["software"]["commit"] == revision.commit
    if revision.commit is not None:  # tests run from a checkout: its HEAD
        head = subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert revision.commit == head and f"git commit {head}" in out

    # the plugin row: the example package, the ranker's version and each split's entry key
    keys = {p.name.split(".")[0]: p.name.split(".")[1] for p in (scores_dir / "overlap").glob("*.json")}
    (row,) = payload["plugin_rows"]
    assert row == {
        "row": "overlap",
        "ranker": "overlap",
        "ranker_version": "1",
        "package": "sourcesum-overlap",
        "package_version": version("sourcesum-overlap"),
        "entries": {split: keys[split] for split in BOARD},
    }
    assert (
        f"  overlap: package sourcesum-overlap {version('sourcesum-overlap')}, ranker overlap version 1"
        in out
    )
    assert all(f"    {split}: entry {keys[split]}" in out for split in BOARD)


def test_cite_a_board_without_plugin_rows_says_what_to_report(capsys, scores_dir, tmp_path):
    path = _board(tmp_path, ("lead",))
    assert main(["run", "--ranker", "lead,oracle", "--split", "synthnews", "--no-progress"]) == 0
    capsys.readouterr()
    code, out, _ = run_cli(capsys, "cite", "--declaration", str(path), "--scores-dir", str(scores_dir))
    assert code == 0
    assert (
        "plugin rows: none; for a row of your own ranker package, report the package and its version" in out
    )


def test_cite_an_incomplete_board_still_cites_and_says_why_no_digest(capsys, scores_dir, tmp_path):
    path = _board(tmp_path, ("lead", "random", "bm25"))
    assert main(["run", "--ranker", "lead", "--split", "synthnews", "--no-progress"]) == 0
    assert (
        main(["run", "--ranker", "bm25", "--split", "synth_beta_ref", "--limit", "1", "--no-progress"]) == 0
    )
    capsys.readouterr()
    cite = ("cite", "--declaration", str(path), "--scores-dir", str(scores_dir))
    code, out, err = run_cli(capsys, *cite)
    # random (4 splits), bm25 (3 missing, 1 partial) and the oracle reference (4) are not complete
    assert code == 0
    assert err.strip().splitlines() == [
        "note: the board's inputs are incomplete (12 declared entries missing, partial or invalid; "
        f"`sourcesum leaderboard --declaration {path} --scores-dir {scores_dir}` names them); no inputs digest"
    ]
    assert dataset("synthnews").citation in out and "@software{sourcesum_bench," in out
    assert "inputs sha256" not in out and "plugin rows: not known (the board is incomplete)" in out
    code, js, _ = run_cli(capsys, *cite, "--json")
    board = json.loads(js)["board"]
    assert code == 0 and board["inputs_sha256"] is None and board["incomplete_entries"] == 12


def test_cite_names_the_papers_of_the_transfer_tasks(capsys, scores_dir, tmp_path):
    path = _board(tmp_path, ("lead",))
    path.write_text(
        path.read_text() + '\n[[tasks]]\ndataset = "synthclaims"\n[[tasks.rows]]\nranker = "lead"\n'
    )
    code, out, _ = run_cli(capsys, "cite", "--declaration", str(path), "--scores-dir", str(scores_dir))
    assert code == 0
    claims = dataset("synthclaims")
    assert f"% {claims.title}, a transfer task on this board: cite its paper\n{claims.citation}" in out
    assert out.index(dataset("synthnews").citation) < out.index(claims.citation) < out.index("@software{")
    code, js, _ = run_cli(
        capsys, "cite", "--declaration", str(path), "--scores-dir", str(scores_dir), "--json"
    )
    assert [{k: t[k] for k in ("name", "title", "bibtex")} for t in json.loads(js)["tasks"]] == [
        {"name": "synthclaims", "title": claims.title, "bibtex": claims.citation}
    ]


def test_cite_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    path = _board(tmp_path, ("lead",))
    for argv, fragment in (
        (
            ["--declaration", str(tmp_path / "nope.toml")],
            f"{tmp_path / 'nope.toml'}: cannot read the leaderboard",
        ),
        (
            ["--declaration", str(path), "--scores-dir", str(tmp_path / "nope")],
            f"{tmp_path / 'nope'}: no such",
        ),
    ):
        code, out, err = run_cli(capsys, "cite", *argv)
        assert code == 2 and out == "" and err.startswith("error: ") and fragment in err
        assert len(err.strip().splitlines()) == 1


def test_cite_lists_every_entry_key_of_every_declared_row(stacked, tmp_path, capsys):
    committed, mine = stacked
    board = stacked_board(tmp_path / "mine.toml", LongestFirst.name)
    code, out, _ = run_cli(capsys, "cite", "--declaration", str(board), "--json")
    assert code == 0
    cited = json.loads(out)
    parts = {
        "synthnews board": list(BOARD),
        "synthnews held-out test": ["synth_alpha_sys_heldout"],
        "task synthclaims": ["synth_claims"],
    }
    assert list(dict.fromkeys(r["board"] for r in cited["entries"])) == list(parts)
    for part, splits in parts.items():
        rows = {r["ranker"]: r for r in cited["entries"] if r["board"] == part}
        assert set(rows) == {"lead", "random", "bm25", LongestFirst.name}
        for ranker, row in rows.items():
            assert list(row["entries"]) == splits
            store = mine if ranker == LongestFirst.name else committed
            for split, key in row["entries"].items():  # the file: <store>/<ranker>/<split>.<key>.json
                assert (store / ranker / f"{split}.{key}.json").is_file(), (part, ranker, split)
    # the data each board is computed on, at its pinned commit
    data = cited["dataset"]["data"]
    assert data["repository"] == "sourcesum-bench/tests" and data["commit"] == "fixture"
    assert "sourcesum-bench/tests at commit fixture" in data["bibtex"]
    assert cited["tasks"][0]["data"]["commit"] == "fixture"
    code, text, _ = run_cli(capsys, "cite", "--declaration", str(board))
    assert "entries of the declared rows (split: key), board by board:" in text
    assert data["bibtex"] in text
    assert "  task synthclaims:\n" in text and "  synthnews held-out test:\n" in text
    mine_on_task = next(
        r for r in cited["entries"] if r["ranker"] == LongestFirst.name and r["board"] == "task synthclaims"
    )
    assert f"    {LongestFirst.name}: synth_claims: {mine_on_task['entries']['synth_claims']}" in text


def test_the_sourcesum_citation_carries_its_data_commit():
    source = dataset("sourcesum").sources()["sourcesum"]
    entry = data_bibtex(dataset("sourcesum"))
    assert entry.startswith("@misc{sourcesum_data,")
    assert f"note  = {{suhara/sourcesum at commit {source.commit}, every file pinned by sha256}}" in entry
    assert len(source.commit) == 40
