"""Display names: declared or default, at most 48 characters, unique on a board, used by every
output and accepted wherever a row is named."""

from __future__ import annotations

from pathlib import Path

import pytest
from sourcesum.board import read_declaration
from sourcesum.board.names import MAX_NAME, default_name, unique_names
from sourcesum.errors import SourceSumError
from sourcesum.runner.configs import Configuration
from support.boards import declaration
from support.cli import run_cli
from support.store import fill

LONG = "attention,attribution,bertscore,bm25,embedding,lead,lexrank,llm_judge,perplexity_gain"


@pytest.mark.parametrize(
    "ranker, params, name",
    [
        ("lead", {}, "lead"),
        ("random", {"seed": 3}, "random(seed=3)"),
        ("perplexity_gain", {"dtype": "float32"}, "perplexity_gain"),  # defaults are not named
        ("learned", {"rankers": "bm25,lead"}, "learned(rankers=bm25+lead)"),
        ("learned", {"rankers": LONG, "protocol": "kfold"}, "learned(rankers=9 rankers, protocol=kfold)"),
        (
            "learned",
            {"rankers": "bm25,rouge1", "C": 1.0, "l1_ratio": 0.0},
            "learned(rankers=bm25+rouge1, C=1.0, …)",
        ),
    ],
)
def test_default_names_name_what_differs_from_the_defaults(ranker, params, name):
    config = Configuration.of(ranker, params)
    assert default_name(config) == name and len(name) <= MAX_NAME
    assert config.label.startswith(ranker)  # the full label is unchanged, and longer
    assert len(config.label) >= len(name)


def test_names_are_unique_and_fit():
    names = unique_names(["bm25", "bm25", "x" * 60, "lead"], ["aaaaaa11", "bbbbbb22", "cccccc33", "dddddd44"])
    assert names[:2] == ["bm25 [aaaaaa]", "bm25 [bbbbbb]"]
    assert len(names[2]) == MAX_NAME and names[2].endswith("…") and names[3] == "lead"
    assert len(set(names)) == 4


@pytest.mark.parametrize(
    "row, message",
    [
        ('name = "' + "n" * 49 + '"', "has 49 characters; at most 48"),
        ('name = ""', "non-empty"),
        ('name = " padded"', "without surrounding spaces"),
        ('name = "tab\\there"', "control characters"),
        ('name = "`bm25` row"', "holds a backtick"),
        ("name = 3", "non-empty string"),
    ],
)
def test_a_bad_declared_name_is_an_error_naming_the_file(tmp_path: Path, row, message):
    path = tmp_path / "board.toml"
    path.write_text(f'dataset = "synthnews"\n[[rows]]\nranker = "lead"\n{row}\n', encoding="utf-8")
    with pytest.raises(SourceSumError, match=message) as error:
        read_declaration(path)
    assert str(path) in str(error.value)


def test_two_rows_with_one_name_are_an_error(tmp_path: Path):
    path = tmp_path / "board.toml"
    path.write_text(
        'dataset = "synthnews"\n[[rows]]\nranker = "lead"\nname = "x"\n[[references]]\nranker = "oracle"\nname = "x"\n',
        encoding="utf-8",
    )
    with pytest.raises(SourceSumError, match="two rows are named 'x'"):
        read_declaration(path)


def test_declared_names_are_shown_and_accepted_by_compare(tmp_path: Path, capsys, scores_dir):
    import json

    from sourcesum.cli import main

    text = declaration(rows=("lead", ("random", "{ seed = 0 }")), references=()).replace(
        'ranker = "lead"', 'ranker = "lead"\nname = "first sentences | lead"'
    )
    path = tmp_path / "board.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["run", "--ranker", "lead,random", "--split", "synthnews", "--no-progress"]) == 0
    out = tmp_path / "board.md"
    argv = ["leaderboard", "--declaration", str(path), "--scores-dir", str(scores_dir)]
    assert main([*argv, "-o", str(out)]) == 0
    board = out.read_text(encoding="utf-8")
    assert "| first sentences \\| lead |" in board  # escaped in the table
    assert "| random |" in board and "`lead`" in board  # its full label in the Rows table
    capsys.readouterr()
    assert main(["compare", "lead", "random", "--split", "synth_alpha_sys", "--json"]) == 0
    assert {c["a"] for c in json.loads(capsys.readouterr().out)["comparisons"]} == {"lead"}


@pytest.mark.parametrize(
    ("name", "fragment"),
    [("bm25", "a ranker's name"), ("bm25(k1=2.0)", "another row's label"), ("lead", "a ranker's name")],
)
def test_a_display_name_cannot_pass_for_another_row(name, fragment, tmp_path, capsys, scores_dir):
    decl = tmp_path / "board.toml"
    decl.write_text(
        f'dataset = "synthnews"\n[[rows]]\nranker = "random"\nname = "{name}"\n'
        '[[rows]]\nranker = "bm25"\nparams = { k1 = 2.0 }\n'
    )
    code, _, err = run_cli(capsys, "leaderboard", "--declaration", str(decl), "-o", str(tmp_path / "b.md"))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "the row random is named" in err and fragment in err and str(decl) in err


def test_a_row_may_keep_its_own_label_as_its_name(tmp_path, capsys, scores_dir):
    fill(scores_dir, ("lead", "bm25"))
    decl = tmp_path / "board.toml"
    decl.write_text(
        'dataset = "synthnews"\n[[rows]]\nranker = "lead"\nname = "lead"\n[[rows]]\nranker = "bm25"\n'
    )
    args = (
        "leaderboard",
        "--declaration",
        str(decl),
        "--scores-dir",
        str(scores_dir),
        "-o",
        str(tmp_path / "b.md"),
    )
    assert run_cli(capsys, *args)[0] == 0
