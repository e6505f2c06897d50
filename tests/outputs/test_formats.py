"""Every board in every format: a declared board on the synthetic datasets with a supervised row,
a reference, a task board (the transfer summary) and a held-out test, rendered as Markdown, JSON,
CSV and LaTeX. Section by section, every value of the Markdown's board tables (board, row name,
split or Avg, measure) appears with the same four decimals in the other three, and nothing else
does; the main table's groups and the transfer ranks agree too."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from sourcesum.cli import main
from sourcesum.data import split_spec
from sourcesum.evaluation.measures import DEFAULT_MEASURES
from sourcesum.outputs.escape import latex
from support.boards import declaration

MAIN, TASK, HELDOUT = "synthnews", "synthclaims", "heldout"
GROUP_TITLES = {
    "Zero-shot rankers": "zero-shot",
    "Supervised (trained on the votes)": "supervised",
    "Published systems": "published",
    "References": "reference",
}
Key = tuple[str, str, str, str]
"""(board, row name, split name or ``avg``, measure JSON key)."""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, str]:
    """The declared board in each format, by format name."""
    from sourcesum import paths

    root = tmp_path_factory.mktemp("formats")
    scores = root / "scores"
    board = root / "board.toml"
    board.write_text(
        declaration(
            rows=("lead", ("random", "{ seed = 0 }"), "bm25", ("learned", '{ rankers = "bm25,lead" }'))
        )
        + f'\n[[tasks]]\ndataset = "{TASK}"\n'
        + "".join(f'[[tasks.rows]]\nranker = "{r}"\n\n' for r in ("lead", "bm25"))
        + '[[tasks.references]]\nranker = "oracle"\n'
        + '\n[heldout]\nsplits = ["synth_alpha_sys_heldout"]\n'
        + "".join(f'[[heldout.rows]]\nranker = "{r}"\n\n' for r in ("lead", "random", "bm25")),
        encoding="utf-8",
    )
    out: dict[str, str] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCESUM_SCORES_DIR", str(scores))
        patch.setattr(paths, "COMMITTED_SCORES_DIR", root / "committed")
        splits = "synthnews,synth_claims,synth_alpha_sys_heldout"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert (
                main(["run", "--ranker", "lead,random,bm25,oracle", "--split", splits, "--no-progress"]) == 0
            )
            argv = ["run", "--ranker", "learned", "-p", "learned.rankers=bm25,lead", "--split", MAIN]
            assert main([*argv, "--no-progress"]) == 0
        for name, ext in (("markdown", "md"), ("json", "json"), ("csv", "csv"), ("latex", "tex")):
            path = root / f"board.{ext}"
            argv = ["leaderboard", "--declaration", str(board), "--scores-dir", str(scores), "--format", name]
            with contextlib.redirect_stdout(io.StringIO()):
                assert main([*argv, "-o", str(path)]) == 0
            out[name] = Path(path).read_text(encoding="utf-8")
    return out


def _number(value: float | None) -> str | None:
    return None if value is None or not math.isfinite(value) else f"{value:.4f}"


def _shown(text: str) -> str | None:
    """The four-decimal value a table cell shows (None for ``-``)."""
    match = re.search(r"-?\d+\.\d{4}", text)
    return match.group(0) if match else None


MEASURE_KEYS = {m.display_name: m.json_key for m in DEFAULT_MEASURES}


def _column(header: str, titles: dict[str, str]) -> tuple[str, str]:
    """``XSum-PEGASUS NDCG`` -> (split name, measure key); ``Avg NDCG`` -> (``avg``, key)."""
    where, _, measure = header.rpartition(" ")
    return ("avg" if where == "Avg" else titles[where]), MEASURE_KEYS[measure]


def _titles(payload: dict[str, Any]) -> dict[str, str]:
    names = [s for board in payload["boards"] for s in board["splits"]] + payload["heldout"]["splits"]
    return {split_spec(name).title: name for name in names}


def markdown_values(
    text: str, titles: dict[str, str], boards: list[dict[str, Any]]
) -> tuple[dict[Key, str | None], dict[str, str]]:
    """The board tables of the Markdown: every cell by (board, row, split, measure), and the main
    table's group of each row (from its heading); ``boards`` as JSON names them."""
    main_board = boards[0]["board"]
    task_titles = {b["title"]: b["board"] for b in boards[1:]}
    values: dict[Key, str | None] = {}
    groups: dict[str, str] = {}
    board = group = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("## "):
            heading = line[3:]
            board = (
                main_board
                if heading == "Results"
                else task_titles.get(heading, HELDOUT if heading == "Held-out test" else None)
            )
            group = None
            seen_table = False
        elif line.startswith("### "):
            group = GROUP_TITLES.get(line[4:])
        elif line.startswith("| Ranker |") and board is not None and not seen_table:
            headers = [h.strip() for h in line.strip("|").split("|")][1:]
            if not all(h.rpartition(" ")[2] in MEASURE_KEYS for h in headers):
                continue
            columns = [_column(h, titles) for h in headers]
            for row in lines[i + 2 :]:
                if not row.startswith("| "):
                    break
                name, *cells = [c.strip() for c in row.strip().strip("|").split(" | ")]
                name = (
                    name.replace("\\|", "|").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
                )
                for (split, key), cell in zip(columns, cells, strict=True):
                    values[(board, name, split, key)] = _shown(cell)
                if board == main_board:
                    assert group is not None, name
                    groups[name] = group
            seen_table = board == HELDOUT  # the held-out test's first table; then its differences
    return values, groups


def json_values(payload: dict[str, Any]) -> tuple[dict[Key, str | None], dict[str, str]]:
    values: dict[Key, str | None] = {}
    results = payload["results"] + payload["heldout"]["results"]
    averages = payload["averages"] + payload["heldout"]["averages"]
    for record in results:
        for key in MEASURE_KEYS.values():
            values[(record["board"], record["name"], record["split"], key)] = _number(record[key])
    for record in averages:
        for key in MEASURE_KEYS.values():
            values[(record["board"], record["name"], "avg", key)] = _number(record[key])
    main_board = payload["boards"][0]["board"]
    groups = {r["name"]: r["group"] for r in payload["results"] if r["board"] == main_board}
    return values, groups


def csv_values(text: str, main_board: str) -> tuple[dict[Key, str | None], dict[str, str]]:
    values: dict[Key, str | None] = {}
    groups: dict[str, str] = {}
    for line in csv.DictReader(io.StringIO(text)):
        board, name = line["board"], line["name"]
        for key in MEASURE_KEYS.values():
            values[(board, name, line["split"], key)] = _number(float(line[key])) if line[key] else None
            if line[f"avg_{key}"]:
                values[(board, name, "avg", key)] = _number(float(line[f"avg_{key}"]))
        if board == main_board:
            groups[name] = line["group"]
    return values, groups


UNLATEX = {escaped: char for char, escaped in ((c, latex(c)) for c in "\\{}$&#^_~%<>|")}


def latex_tables(text: str) -> dict[str, str]:
    """Each ``table`` of the LaTeX by its label."""
    tables = {}
    for block in text.split(r"\begin{table}")[1:]:
        label = re.search(r"\\label\{([^}]*)\}", block)
        assert label is not None
        tables[label.group(1)] = block.split(r"\end{table}")[0]
    return tables


def latex_values(
    text: str, titles: dict[str, str], named: list[dict[str, Any]]
) -> tuple[dict[Key, str | None], dict[str, str]]:
    values: dict[Key, str | None] = {}
    groups: dict[str, str] = {}
    main_board = named[0]["board"]
    boards = {f"tab:{main_board}": main_board, f"tab:{main_board}-heldout": HELDOUT}
    boards |= {f"tab:{main_board}-{b['board']}": b["board"] for b in named[1:]}
    for label, table in latex_tables(text).items():
        board = boards.get(label)
        if board is None:
            continue
        lines = table.splitlines()
        top = next(x for x in lines if r"\multicolumn" in x and "{c}" in x)
        spans = re.findall(r"\\multicolumn\{(\d+)\}\{c\}\{([^}]*)\}", top)
        measures = next(x for x in lines if x.startswith("Ranker & ")).removesuffix(r" \\").split(" & ")[1:]
        splits = [
            ("avg" if title == "Average" else titles[title]) for n, title in spans for _ in range(int(n))
        ]
        columns = [(split, MEASURE_KEYS[m]) for split, m in zip(splits, measures, strict=True)]
        group = None
        for line in lines[lines.index(next(x for x in lines if x.startswith("Ranker & "))) + 1 :]:
            if match := re.fullmatch(r"\\multicolumn\{\d+\}\{l\}\{\\textit\{(.*)\}\} \\\\", line):
                group = GROUP_TITLES[match.group(1)]
            elif line.endswith(r" \\"):
                name, *cells = line.removesuffix(r" \\").split(" & ")
                for escaped, char in UNLATEX.items():
                    name = name.replace(escaped, char)
                for column, cell in zip(columns, cells, strict=True):
                    values[(board, name, *column)] = _shown(cell)
                if board == main_board:
                    assert group is not None, name
                    groups[name] = group
    return values, groups


def test_every_format_holds_every_board_with_the_markdowns_values(rendered):
    payload = json.loads(rendered["json"])
    titles = _titles(payload)
    markdown, md_groups = markdown_values(rendered["markdown"], titles, payload["boards"])
    # the Markdown has every board: the main table's four groups' rows, the task, the held-out test
    assert {board for board, *_ in markdown} == {MAIN, TASK, HELDOUT}
    assert set(md_groups.values()) == {"zero-shot", "supervised", "reference"}
    shown = {k: v for k, v in markdown.items() if v is not None}
    assert len(shown) == (5 * 5 + 3 * 2 + 3 * 2) * 2  # rows x (splits + Avg) x measures, per board
    for name, (values, groups) in {
        "json": json_values(payload),
        "csv": csv_values(rendered["csv"], MAIN),
        "latex": latex_values(rendered["latex"], titles, payload["boards"]),
    }.items():
        assert {k: v for k, v in values.items() if v is not None} == shown, name
        assert groups == md_groups, name


def test_the_transfer_summary_agrees_across_formats(rendered):
    payload = json.loads(rendered["json"])
    section = rendered["markdown"].split("## Transfer across tasks", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| ")]
    header, body = rows[0], rows[1:]
    assert [h.strip() for h in header[1:]] == ["rank on SynthNews", "rank on SynthClaims"]
    markdown = {r[0].strip(): [int(x) for x in r[1:]] for r in body}
    transfer = payload["transfer"]
    assert transfer["boards"] == [MAIN, TASK] and transfer["measure"] == "ndcg"
    assert {r["name"]: [r["ranks"][b] for b in transfer["boards"]] for r in transfer["rows"]} == markdown
    (rho,) = transfer["correlations"]
    assert (rho["a"], rho["b"]) == (
        MAIN,
        TASK,
    ) and f"SynthNews vs SynthClaims {rho['spearman']:.2f}" in section
    assert transfer["left_out"] == [{"reason": "not on SynthClaims", "names": ["random"]}]
    table = latex_tables(rendered["latex"])[f"tab:{MAIN}-transfer"]
    ranks = {
        line.split(" & ")[0]: [int(x) for x in line.removesuffix(r" \\").split(" & ")[1:]]
        for line in table.splitlines()
        if line.endswith(r" \\") and not line.startswith("Ranker")
    }
    assert ranks == markdown and f"SynthNews vs SynthClaims {rho['spearman']:.2f}" in table


def test_the_latex_tables_say_what_their_marks_mean(rendered):
    tables = latex_tables(rendered["latex"])
    assert list(tables) == [
        f"tab:{MAIN}",
        f"tab:{MAIN}-{TASK}",
        f"tab:{MAIN}-transfer",
        f"tab:{MAIN}-heldout",
    ]
    main_table = tables[f"tab:{MAIN}"]
    assert r"\textbf{Bold}: the column's best among the rankers and the published systems" in main_table
    assert r"$^\dagger$: not significantly worse than it; $^?$: undecided." in main_table
    assert "Holm-corrected" in main_table and "\\%" in main_table and "%" not in main_table.replace("\\%", "")
    for label in (f"tab:{MAIN}-{TASK}", f"tab:{MAIN}-heldout"):
        assert rf"as in Table~\ref{{tab:{MAIN}}}" in tables[label]
    # the groups are apart: each group label row follows a \midrule
    lines = main_table.splitlines()
    labels = [i for i, line in enumerate(lines) if r"\textit{" in line]
    assert len(labels) == 3 and all(lines[i - 1] == r"\midrule" for i in labels)
    # every mark of the Markdown's main table is the LaTeX's
    markdown = rendered["markdown"].split("## Results", 1)[1].split("\n## ", 1)[0]
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("| Ranker"):
            name, *cells = line.strip("|").strip().split(" | ")
            row = next(x for x in lines if x.startswith(latex(name) + " & "))
            marks = [("**" in c, "†" in c, " ?" in c) for c in cells]
            assert marks == [
                (r"\textbf{" in c, r"\dagger" in c, "$^?$" in c)
                for c in row.removesuffix(r" \\").split(" & ")[1:]
            ]


def test_the_csv_has_one_header_and_the_json_results_lines(rendered):
    payload = json.loads(rendered["json"])
    lines = list(csv.reader(io.StringIO(rendered["csv"])))
    header, body = lines[0], lines[1:]
    assert header[:8] == ["board", "group", "name", "ranker", "split", "pairs", "reference", "published"]
    assert len(set(header)) == len(header) and all(len(line) == len(header) for line in body)
    expected = [
        (r["board"], r["name"], r["split"]) for r in payload["results"] + payload["heldout"]["results"]
    ]
    assert [(line[0], line[2], line[4]) for line in body] == expected
    # booleans and nulls as JSON writes them
    assert {line[header.index("reference")] for line in body} == {"true", "false"}
