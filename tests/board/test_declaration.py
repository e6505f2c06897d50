"""The board declaration (sourcesum.board.declaration): the committed declaration declares the
held-out test, published methods and transfer tasks are named as declared, and a bad table or a
row declared twice is an error naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from sourcesum import paths
from sourcesum.board import read_declaration
from sourcesum.errors import SourceSumError, UnknownNameError
from sourcesum.store.published import published_methods
from support.boards import declaration
from support.cli import one_error_line
from support.data import SOURCESUM_BOARD


def test_the_committed_declaration_declares_the_held_out_test():
    declared = read_declaration(paths.DECLARATION_PATH)
    assert declared.heldout is not None
    assert declared.heldout.splits == tuple(f"{m}_heldout" for m in SOURCESUM_BOARD)
    rankers = [r.ranker for r in declared.heldout.rows]
    assert "lead" in rankers and "oracle" not in rankers
    protocols = {r.params.get("protocol") for r in declared.heldout.rows if r.ranker == "learned"}
    assert protocols == {"cross-corpus", "same-corpus"}
    # every cross-corpus learned row of the held-out test is a declared board row, as declared
    board = [(r.ranker, r.params) for r in declared.rows]
    for row in declared.heldout.rows:
        if row.params.get("protocol") == "cross-corpus":
            assert (row.ranker, row.params) in board


@pytest.mark.parametrize(
    "table, message",
    [
        ('[heldout]\nsplits = ["synth_alpha_sys"]\n[[heldout.rows]]\nranker = "lead"\n', "is a board split"),
        ('[heldout]\nsplits = ["nope"]\n[[heldout.rows]]\nranker = "lead"\n', "is not a split of dataset"),
        ('[heldout]\nsplits = ["synth_alpha_sys_heldout"]\n', "declares no rows"),
        ("[heldout]\nsplits = []\n", "needs splits"),
        ('[heldout]\nsplits = ["synth_alpha_sys_heldout"]\nmodels = 1\n', "takes splits"),
        (
            '[heldout]\nsplits = ["synth_alpha_sys_heldout"]\n[[heldout.rows]]\nrank = "lead"\n',
            "needs ranker",
        ),
    ],
)
def test_a_bad_held_out_table_is_an_error_naming_the_file(tmp_path: Path, table, message):
    path = tmp_path / "board.toml"
    path.write_text(f'dataset = "synthnews"\n[[rows]]\nranker = "lead"\n{table}', encoding="utf-8")
    with pytest.raises(SourceSumError, match=message) as error:
        read_declaration(path)
    assert str(path) in str(error.value)


def test_a_held_out_table_on_a_split_outside_the_board_is_read(tmp_path: Path):
    path = tmp_path / "board.toml"
    path.write_text(
        'dataset = "synthnews"\n[[rows]]\nranker = "lead"\n[heldout]\nsplits = ["synth_alpha_sys_heldout"]\n'
        '[[heldout.rows]]\nranker = "random"\nparams = { seed = 3 }\n',
        encoding="utf-8",
    )
    declared = read_declaration(path)
    assert declared.heldout is not None and declared.heldout.splits == ("synth_alpha_sys_heldout",)
    assert [(r.ranker, r.params) for r in declared.heldout.rows] == [("random", {"seed": 3})]


def test_a_row_declared_twice_is_an_error(tmp_path, capsys):
    (tmp_path / "decl.toml").write_text(
        declaration(rows=("lead", ("bm25", "{ k1 = 1.5 }"), "bm25"), references=())
    )
    (tmp_path / "store").mkdir()
    line = one_error_line(
        capsys,
        "leaderboard",
        "--declaration",
        str(tmp_path / "decl.toml"),
        "--scores-dir",
        str(tmp_path / "store"),
        "-o",
        str(tmp_path / "b.md"),
    )
    assert "rows #2 and #3 declare the same configuration" in line


def test_a_bad_task_table_is_an_error(tmp_path: Path):
    path = tmp_path / "board.toml"
    base = declaration(rows=("lead",), references=())
    for table, message in (
        ('[[tasks]]\ndataset = "nope"\n[[tasks.rows]]\nranker = "lead"\n', "is not a registered dataset"),
        ('[[tasks]]\ndataset = "synthnews"\n[[tasks.rows]]\nranker = "lead"\n', "already has a board"),
        ('[[tasks]]\ndataset = "synthclaims"\n', "declares no rows"),
    ):
        path.write_text(base + "\n" + table, encoding="utf-8")
        with pytest.raises(SourceSumError, match=message):
            read_declaration(path)


def test_declaration_names_published_methods(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text('[[rows]]\nranker = "lead"\n\n[[published]]\nmethod = "perplexity"\n')
    declaration = read_declaration(good)
    assert declaration.dataset == "sourcesum" and declaration.path == good
    assert [(r.ranker, r.published) for r in declaration.rows] == [("perplexity", True), ("lead", False)]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[published]]\nmethod = "nosuch"\n')
    with pytest.raises(UnknownNameError, match="unknown published method 'nosuch'"):
        read_declaration(bad)
    bad.write_text('[[published]]\nranker = "perplexity"\n')
    with pytest.raises(SourceSumError, match=r"\[\[published\]\] #1 needs exactly method"):
        read_declaration(bad)
    declared = read_declaration(paths.DECLARATION_PATH)
    assert declared.dataset == "sourcesum"
    assert {r.ranker for r in declared.rows if r.published} == {m.key for m in published_methods()}
