"""The held-out test (sourcesum.board.heldout): a board with a held-out test reports it, and the
facts about documents shared with the main splits are counted."""

from __future__ import annotations

from pathlib import Path

from sourcesum.data import load_split


def test_a_board_with_a_held_out_test_reports_it(tmp_path: Path, capsys, scores_dir):
    """End to end on the synthetic dataset: while a held-out entry is missing or partial, only
    the progress is shown; then the held-out rows' values, their differences to ``lead`` and to
    the best zero-shot row with CIs; an invalid held-out entry is an error."""
    import json

    from sourcesum.cli import main
    from sourcesum.evaluation.evaluate import evaluate_split
    from sourcesum.evaluation.measures import NDCG
    from support.boards import declaration

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


def test_the_held_out_facts_on_shared_documents_are_counted():
    from types import SimpleNamespace

    from sourcesum.board.heldout import main_documents, shared_documents

    scored = load_split("synth_alpha_sys_all")
    main = {p.document_key for name in ("synth_alpha_sys", "synth_alpha_ref") for p in load_split(name)}
    assert main_documents(scored) == main
    (facts,) = shared_documents(SimpleNamespace(splits=[scored]))
    documents = {p.document_key for p in scored}
    assert (facts.documents, facts.shared_documents) == (len(documents), len(documents & main))
    assert (facts.pairs, facts.shared_pairs) == (len(scored), sum(p.document_key in main for p in scored))
