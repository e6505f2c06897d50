"""The Markdown board (sourcesum.outputs.markdown) shows what it is given as text: escape
sequences in a file name, raw HTML in a declared name and a pipe in a label cannot add
structure."""

from __future__ import annotations

from sourcesum.board import build_view, collect
from sourcesum.data import load_split
from sourcesum.outputs.markdown import render_markdown
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore
from support.cli import run_cli
from support.rankers import Piped
from support.store import fill


def test_a_file_name_with_escape_sequences_reaches_the_board_as_visible_text(tmp_path, capsys, scores_dir):
    fill(scores_dir)
    (scores_dir / "lead" / "synth_alpha_sys.\x1b]0;pwned\x07\x1b[2J.json").write_text("{}")
    code, _, err = run_cli(
        capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(tmp_path / "b.md")
    )
    assert code == 0, err
    board = (tmp_path / "b.md").read_text()
    assert "## Skipped score files" in board and "\\x1b]0;pwned\\x07" in board
    assert not any(ord(c) < 32 and c not in "\n" for c in board)
    assert "\x1b" not in err


def test_raw_html_in_a_declared_name_is_text_on_the_markdown_board(tmp_path, capsys, scores_dir):
    fill(scores_dir)
    decl = tmp_path / "board.toml"
    decl.write_text(
        'dataset = "synthnews"\n[[rows]]\nranker = "lead"\nname = "<script>alert(1)</script> & co"\n'
        '[[rows]]\nranker = "bm25"\n'
    )
    out = tmp_path / "b.md"
    args = ("leaderboard", "--declaration", str(decl), "--scores-dir", str(scores_dir), "-o", str(out))
    code, _, err = run_cli(capsys, *args)
    assert code == 0, err
    board = out.read_text()
    assert "<script>" not in board.replace("`<script>alert(1)</script> & co`", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in board


def test_a_pipe_in_a_label_cannot_add_a_table_column(tmp_path):
    root = tmp_path / "store"
    # a label with a pipe (a str parameter may hold one): every table row keeps its columns
    for split in ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"):
        run_ranker(Piped(tag="x | 1.0000 | 1.0000"), load_split(split), ScoreStore(root), progress=False)
    text = render_markdown(build_view(collect(ScoreStore(root), published=False, dataset_name="synthnews")))
    for table in text.split("\n\n"):  # every Markdown table of the board
        lines = table.splitlines()
        if lines and lines[0].startswith("| Ranker |"):
            piped = [line for line in lines if line.startswith("| piped")]
            assert piped and all(line.replace("\\|", "").count("|") == lines[0].count("|") for line in piped)
