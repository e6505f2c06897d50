"""``sourcesum leaderboard`` and ``sourcesum site``: the committed board is written only from the
committed inputs, a personal board gets its own plot and no writer overwrites foreign files,
``--all`` needs an output, a missing store is refused, and ``site`` reports the index page and its
plot apart."""

from __future__ import annotations

import pytest
from sourcesum import paths
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore
from support.boards import declaration
from support.cli import one_error_line, run_cli


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
