"""``sourcesum leaderboard`` and ``sourcesum site``: the committed board is written only from the
committed inputs, a personal board gets its own plot and no writer overwrites foreign files,
``--all`` needs an output, a missing store is refused, and ``site`` reports the index page and its
plot apart. A declared board of your own reads your store over the committed one (``site`` and
``cite`` too); the committed board reads the committed store alone; no hint suggests writing into
the committed store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sourcesum import paths
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore
from sourcesum.util.hashing import sha256_bytes
from support.boards import declaration
from support.cli import one_error_line, run_cli
from support.rankers import LongestFirst
from support.store import stacked_board


def test_site_reports_the_page_and_the_plot_apart(capsys, scores_dir, tmp_path):
    assert main(["run", "--ranker", "lead,random,oracle", "--split", "synthnews", "--no-progress"]) == 0
    capsys.readouterr()
    out_dir = tmp_path / "site"
    code, out, _ = run_cli(capsys, "site", "--all", "--dataset", "synthnews", "-o", str(out_dir))
    assert code == 0

    def kb(name: str) -> str:
        return f"{name} {(out_dir / name).stat().st_size / 1024:.0f} KB"

    explorers = [f"explore-{name}.html" for name in dataset("synthnews").board_splits()]  # board order
    assert sorted(explorers) == sorted(p.name for p in out_dir.glob("explore-*.html"))
    sizes = ", ".join([kb("index.html"), kb("plot.png")] + [kb(e) for e in explorers])
    assert out.strip().endswith(f"rows; {sizes})")


def test_leaderboard_refuses_a_missing_store_and_all_needs_an_output(capsys, tmp_path):
    code, _, err = run_cli(capsys, "leaderboard", "--scores-dir", str(tmp_path / "typo"))
    assert code == 2 and "no such folder" in err
    code, _, err = run_cli(capsys, "leaderboard", "--all")
    assert code == 2 and "give -o FILE" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["leaderboard", "--scores-dir", "STORE"],
        ["leaderboard", "--declaration", "DECL"],
        ["leaderboard", "--measures", "nDCG,RR"],
        ["leaderboard", "-o", "COMMITTED", "--scores-dir", "STORE"],
    ],
)
def test_the_committed_board_is_written_only_from_the_committed_inputs(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(paths, "LEADERBOARD_PATH", tmp_path / "leaderboard.md")
    (tmp_path / "store").mkdir()
    (tmp_path / "decl.toml").write_text(declaration())
    names = {
        "STORE": str(tmp_path / "store"),
        "DECL": str(tmp_path / "decl.toml"),
        "COMMITTED": str(tmp_path / "leaderboard.md"),
    }
    line = one_error_line(capsys, *[names.get(a, a) for a in argv])
    assert "written only from leaderboard.toml" in line
    assert not (tmp_path / "leaderboard.md").exists() and not (tmp_path / "leaderboard.png").exists()


def test_a_personal_board_gets_its_own_plot_and_no_writer_overwrites_foreign_files(
    tmp_path, scores_dir, capsys
):
    for split in ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"):
        run_ranker(create_ranker("lead"), load_split(split), ScoreStore(scores_dir), progress=False)
    code, _, err = run_cli(
        capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(tmp_path / "mine.md")
    )
    assert code == 0, err
    assert (tmp_path / "mine.png").is_file() and "[`mine.png`](mine.png)" in (
        tmp_path / "mine.md"
    ).read_text()
    foreign = tmp_path / "notes.md"
    foreign.write_text("my notes")
    assert "not written by sourcesum" in one_error_line(
        capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(foreign)
    )
    assert foreign.read_text() == "my notes"
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("my page")
    line = one_error_line(capsys, "site", "--all", "--dataset", "synthnews", "-o", str(site))
    assert "did not write" in line and (site / "index.html").read_text() == "my page"


# -- which stores a declared board reads --------------------------------------------------------


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): sha256_bytes(p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _results(markdown: str) -> str:
    return markdown.split("## Results")[1].split("## How to read this board")[0]


def test_a_declared_board_reads_your_store_over_the_committed_one(stacked, tmp_path, capsys):
    committed, mine = stacked
    before = {"committed": _snapshot(committed), "mine": _snapshot(mine)}
    tracked = {
        p: p.read_bytes() for p in (paths.LEADERBOARD_PATH, paths.LEADERBOARD_PATH.with_suffix(".png"))
    }
    board = stacked_board(tmp_path / "mine.toml", LongestFirst.name)
    out = tmp_path / "out" / "board.md"
    code, _, err = run_cli(capsys, "leaderboard", "--declaration", str(board), "-o", str(out))
    assert code == 0, err
    text = out.read_text()
    for name in ("lead", "random", "bm25", LongestFirst.name):
        assert f"| {name} |" in _results(text)
    assert "Scores are the files in your score store over the committed `data/scores/`" in text
    assert "## Held-out test" in text and "SynthClaims" in text
    # the same numbers as from one store holding both (a merge), without the merge
    merged = tmp_path / "merged"
    assert main(["merge", str(committed), str(mine), "-o", str(merged)]) == 0
    again = tmp_path / "again" / "board.md"
    argv = ["leaderboard", "--declaration", str(board), "--scores-dir", str(merged), "-o", str(again)]
    assert main(argv) == 0
    assert _results(again.read_text()) == _results(text)
    # the site and cite read the same stores
    site = tmp_path / "site"
    assert main(["site", "--declaration", str(board), "-o", str(site)]) == 0
    assert LongestFirst.name in (site / "index.html").read_text()
    capsys.readouterr()
    code, out_json, _ = run_cli(capsys, "cite", "--declaration", str(board), "--json")
    cited = json.loads(out_json)
    assert code == 0 and cited["board"]["stores"] == [str(mine), str(committed)]
    assert (
        cited["board"]["inputs_sha256"]
        == json.loads(run_cli(capsys, "leaderboard", "--declaration", str(board), "--format", "json")[1])[
            "inputs_sha256"
        ]
    )
    # nothing was written into either store, nor the tracked board
    assert {"committed": _snapshot(committed), "mine": _snapshot(mine)} == before
    assert {p: p.read_bytes() for p in tracked} == tracked


def test_the_committed_board_reads_the_committed_store_alone(stacked, tmp_path, monkeypatch, capsys):
    committed, mine = stacked
    board = stacked_board(tmp_path / "leaderboard.toml", LongestFirst.name)
    monkeypatch.setattr(paths, "DECLARATION_PATH", board)
    monkeypatch.setattr(paths, "LEADERBOARD_PATH", tmp_path / "leaderboard.md")
    code, _, err = run_cli(capsys, "leaderboard")
    assert code == 2
    assert f"{LongestFirst.name} on synth_alpha_sys: missing" in err
    # the hint runs into your store (run's default), never into the committed one
    assert f"compute: sourcesum run --ranker {LongestFirst.name} --split synth_alpha_sys\n" in err
    shown = paths.shown(mine)
    assert (
        f"this board reads the committed data/scores alone; `sourcesum run` writes your store ({shown}): "
        f"render the board over it with `sourcesum leaderboard --scores-dir {shown} -o FILE`"
    ) in err
    assert "--scores-dir data/scores" not in err and f"--scores-dir {committed}" not in err
    assert not (tmp_path / "leaderboard.md").exists()
    # the committed declaration named: still the committed board
    code, _, err = run_cli(capsys, "leaderboard", "--declaration", str(board), "-o", str(tmp_path / "b.md"))
    assert code == 2 and "writes your store" in err
    # over your store, as the note says, it renders
    code, _, err = run_cli(capsys, "leaderboard", "--scores-dir", str(mine), "-o", str(tmp_path / "c.md"))
    assert code == 0, err
    assert f"| {LongestFirst.name} |" in (tmp_path / "c.md").read_text()


def test_a_hint_names_the_store_a_declared_board_reads(stacked, tmp_path, capsys):
    _, mine = stacked
    board = tmp_path / "more.toml"
    board.write_text(declaration(rows=("lead", "tfidf"), references=()))
    # your default store: run writes there without being told
    code, _, err = run_cli(capsys, "leaderboard", "--declaration", str(board), "-o", str(tmp_path / "b.md"))
    assert code == 2
    assert "compute: sourcesum run --ranker tfidf --split synth_alpha_sys\n" in err
    assert "data/scores alone" not in err
    # another store named: the hint names it
    other = tmp_path / "other"
    other.mkdir()
    argv = [
        "leaderboard",
        "--declaration",
        str(board),
        "--scores-dir",
        str(other),
        "-o",
        str(tmp_path / "c.md"),
    ]
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert f"compute: sourcesum run --ranker tfidf --split synth_alpha_sys --scores-dir {other}\n" in err
    assert "lead on" not in err  # lead is found in the committed store below it


def test_all_boards_carry_the_declared_names(capsys, scores_dir, tmp_path, monkeypatch):
    """``leaderboard --all`` names the configurations the committed declaration names as it
    does; the others keep their default names."""
    assert main(["run", "--ranker", "lead,bm25", "--split", "synthnews", "--no-progress"]) == 0
    assert (
        main(["run", "--ranker", "random", "-p", "random.seed=3", "--split", "synthnews", "--no-progress"])
        == 0
    )
    named = tmp_path / "leaderboard.toml"
    named.write_text(
        declaration(rows=["lead", "bm25"])
        + '\n[[rows]]\nranker = "random"\nparams = { seed = 3 }\nname = "random, third seed"\n'
    )
    monkeypatch.setattr(paths, "DECLARATION_PATH", named)
    capsys.readouterr()
    board = tmp_path / "all.md"
    code, _, _ = run_cli(capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(board))
    text = board.read_text()
    assert code == 0 and "| random, third seed | 0." in text and "| bm25 | 0." in text
    assert "| random(seed=3) |" not in text and "`random(seed=3)`" in text  # the Rows table keeps the label
