"""The held-out test's data and declaration: SourceSum's held-out splits are the unfiltered
splits minus the main pairs (real data), and ``[heldout]`` in a declaration names splits outside
the board and the rows scored on them."""

from __future__ import annotations

from pathlib import Path

import pytest
from sourcesum import paths
from sourcesum.board import read_declaration
from sourcesum.data import dataset, load_split
from sourcesum.errors import SourceSumError

MAIN = ("xsum_pegasus", "xsum_reference", "cnn_pegasus", "cnn_reference")


@pytest.mark.real_data
@pytest.mark.parametrize("main", MAIN)
def test_a_held_out_split_is_the_unfiltered_split_minus_the_main_pairs(main):
    held, unfiltered, board = load_split(f"{main}_heldout"), load_split(f"{main}_all"), load_split(main)
    assert len(held) + len(board) == len(unfiltered)
    assert {p.id for p in held} == {p.id for p in unfiltered} - {p.id for p in board}
    by_id = {p.id: p for p in unfiltered}
    for pair in held:  # the same pair and labels as in the unfiltered file
        original = by_id[pair.id]
        assert (pair.sentences, pair.summary, pair.document_key) == (
            original.sentences,
            original.summary,
            original.document_key,
        )
        assert held.judgment(pair.id).votes == unfiltered.judgment(pair.id).votes
        assert pair.split == held.name
    documents = {p.document_key for p in board}
    outside = sum(p.document_key not in documents for p in held)
    # XSum: none of the held-out documents is in a main pair; CNN/DM: 13 and 14 pairs are outside
    assert (len(held), outside) == {
        "xsum_pegasus": (479, 479),
        "xsum_reference": (479, 479),
        "cnn_pegasus": (36, 13),
        "cnn_reference": (80, 14),
    }[main]
    assert held.name not in dataset("sourcesum").board_splits()


@pytest.mark.real_data
def test_the_two_xsum_held_out_splits_share_their_documents():
    pegasus, reference = load_split("xsum_pegasus_heldout"), load_split("xsum_reference_heldout")
    assert {p.document_key for p in pegasus} == {p.document_key for p in reference}


def test_the_committed_declaration_declares_the_held_out_test():
    declared = read_declaration(paths.DECLARATION_PATH)
    assert declared.heldout is not None
    assert declared.heldout.splits == tuple(f"{m}_heldout" for m in MAIN)
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


def test_a_board_with_a_held_out_test_reports_it(tmp_path: Path, capsys, scores_dir):
    """End to end on the synthetic dataset: while a held-out entry is missing or partial, only
    the progress is shown; then the held-out rows' values, their differences to ``lead`` and to
    the best zero-shot row with CIs; an invalid held-out entry is an error."""
    import json

    from helpers import declaration
    from sourcesum.cli import main
    from sourcesum.evaluation.evaluate import evaluate_split
    from sourcesum.evaluation.measures import NDCG

    bases = "bm25,lead"
    path = tmp_path / "board.toml"
    path.write_text(
        declaration(rows=("lead", "random", "bm25", ("learned", f'{{ rankers = "{bases}" }}')))
        + '\n[heldout]\nsplits = ["synth_alpha_sys_heldout"]\n'
        + "".join(f'[[heldout.rows]]\nranker = "{r}"\n\n' for r in ("lead", "random", "bm25"))
        + f'[[heldout.rows]]\nranker = "learned"\nparams = {{ rankers = "{bases}", protocol = "same-corpus" }}\n',
        encoding="utf-8",
    )
    out = tmp_path / "board.md"
    board = ["leaderboard", "--declaration", str(path), "--scores-dir", str(scores_dir), "-o", str(out)]
    splits = "synthnews,synth_alpha_sys_heldout"
    for argv in (
        ["run", "--ranker", "lead,random,bm25,oracle", "--split", splits, "--no-progress"],
        [
            "run",
            "--ranker",
            "learned",
            "-p",
            f"learned.rankers={bases}",
            "--split",
            "synthnews",
            "--no-progress",
        ],
    ):
        assert main(argv) == 0
    capsys.readouterr()
    # the held-out learned row is not computed yet: the board is written, its held-out section
    # says how far the entries are and shows no held-out number; stderr names what computes it
    n = len(load_split("synth_alpha_sys_heldout"))
    assert main(board) == 0
    err = capsys.readouterr().err
    assert "note: the held-out test is not reported until its 4 entries are complete (3 are;" in err
    assert "learned(" in err and "compute: sourcesum run --ranker learned" in err
    section = out.read_text(encoding="utf-8").split("## Held-out test", 1)[1].split("\n## ", 1)[0]
    assert "Declared, not yet reported." in section
    assert f"Entries complete: 3 of 4; pairs scored: {3 * n:,} of {4 * n:,}." in section
    assert "| Ranker |" not in section and "Against `lead`" not in section
    argv = [
        "run",
        "--ranker",
        "learned",
        "-p",
        f"learned.rankers={bases}",
        "-p",
        "learned.protocol=same-corpus",
    ]
    assert main([*argv, "--split", "synth_alpha_sys_heldout", "--limit", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(board) == 0  # a partial entry counts its pairs, and is named with its resume command
    assert "partial (1/" in capsys.readouterr().err
    assert f"pairs scored: {3 * n + 1:,} of {4 * n:,}." in out.read_text(encoding="utf-8")
    assert main([*argv, "--split", "synth_alpha_sys_heldout", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(board) == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    section = text.split("## Held-out test", 1)[1].split("\n## ", 1)[0]
    assert "Alpha-Sys (held out): 2 pairs" in section and "declared" in section
    split = load_split("synth_alpha_sys_heldout")
    lead = evaluate_split(split, {p.id: [float(-i) for i in range(p.n_sentences)] for p in split}, "lead")
    lines = section.splitlines()
    first = lines.index(next(x for x in lines if x.startswith("| Ranker |")))
    lead_row = next(x for x in lines[first:] if x.startswith("| lead |"))
    assert f"{lead.mean(NDCG):.4f}" in lead_row
    # the lead table: lead itself has no difference; every other row has one with a CI
    against_lead = section.split("Against `lead`", 1)[1]
    assert "| lead | - |" in against_lead
    bm25 = next(x for x in against_lead.splitlines() if x.startswith("| bm25 |"))
    assert bm25.count("[") >= 2
    site = tmp_path / "site"
    assert main(["site", *board[1:-2], "-o", str(site)]) == 0
    page = (site / "index.html").read_text(encoding="utf-8")
    assert all(f'id="{table}"' in page for table in ("heldout-rows", "heldout-lead", "heldout-zero-shot"))
    # prose quotes code as Markdown on the board and as plain text on the page
    assert "(the `[heldout]` table of `leaderboard.toml`)" in section
    heldout_section = page.split('<section id="heldout">', 1)[1].split("</section>", 1)[0]
    assert "(the [heldout] table of leaderboard.toml)" in heldout_section and "`" not in heldout_section
    capsys.readouterr()
    assert main([*board[:-2], "-o", "-", "--format", "json"]) == 0
    printed = capsys.readouterr().out
    heldout = json.loads(printed[printed.index("{") :])["heldout"]
    assert heldout["splits"] == ["synth_alpha_sys_heldout"]
    record = next(
        r for r in heldout["against_lead"] if r["ranker"] == "bm25" and r["measure"] == "ndcg" and r["split"]
    )
    low, high = record["ci"]
    assert low <= record["difference"] <= high
    # a damaged held-out entry is an error naming it, never a pending test
    damaged = next((scores_dir / "bm25").glob("synth_alpha_sys_heldout.*.json"))
    damaged.write_text(damaged.read_text(encoding="utf-8").replace("[", "[9, ", 1), encoding="utf-8")
    capsys.readouterr()
    assert main(board) == 2
    assert "held out: bm25 on synth_alpha_sys_heldout: invalid entry" in capsys.readouterr().err
