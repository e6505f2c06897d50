"""Render results for people (Markdown, LaTeX, terminal tables) and machines (JSON, CSV).

Everything here is a pure function of its inputs: no dates or timings, so regenerating an
unchanged leaderboard is byte-identical.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Sequence

from benchmark import __version__
from benchmark.data import manifest, split_info
from benchmark.leaderboard import LEADERBOARD_MEASURES, Leaderboard, Row
from benchmark.measures import AP, NDCG
from benchmark.paths import DATA_ROOT

COLUMN_NAMES = {NDCG: "NDCG", AP: "MAP"}


def fmt(value: float, digits: int = 4) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def format_table(records: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain aligned text table of ``records`` (floats to 4 decimals)."""
    cells = [[fmt(r.get(c)) if isinstance(r.get(c), float) else str(r.get(c, "")) for c in columns] for r in records]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def _columns(board: Leaderboard) -> list[tuple[str, str | None, Any]]:
    """(header, split or None for the average, measure) for every numeric column."""
    columns = [
        (f"{s.title} {COLUMN_NAMES[m]}", s.name, m) for s in board.splits for m in LEADERBOARD_MEASURES
    ]
    columns += [(f"Avg {COLUMN_NAMES[m]}", None, m) for m in LEADERBOARD_MEASURES]
    return columns


def _value(row: Row, split: str | None, measure) -> float:
    return row.average(measure) if split is None else row.mean(split, measure)


def _best(board: Leaderboard) -> dict[tuple[str | None, Any], float]:
    best = {}
    for _, split, measure in _columns(board):
        values = [_value(r, split, measure) for r in board.ranked_rows]
        finite = [round(v, 4) for v in values if math.isfinite(v)]
        best[(split, measure)] = max(finite) if finite else float("nan")
    return best


def records(board: Leaderboard) -> list[dict[str, Any]]:
    """One flat record per (row, split) with full-precision means, for JSON and CSV."""
    out = []
    for row in board.rows:
        for split in board.splits:
            evaluation = row.evaluations.get(split.name)
            if evaluation is None:
                continue
            record = evaluation.summary()
            record["ranker"] = row.label
            record["reference"] = row.reference
            out.append(record)
    return out


def render_json(board: Leaderboard) -> str:
    return json.dumps({"version": __version__, "results": records(board)}, indent=2) + "\n"


def render_csv(board: Leaderboard) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = _columns(board)
    writer.writerow(["ranker", "reference"] + [c[0] for c in columns])
    for row in board.rows:
        writer.writerow([row.label, row.reference] + [repr(_value(row, s, m)) for _, s, m in columns])
    return buffer.getvalue()


def _markdown_table(board: Leaderboard, rows: list[Row], mark_best: bool) -> list[str]:
    columns = _columns(board)
    best = _best(board)
    lines = ["| Ranker | " + " | ".join(c[0] for c in columns) + " |"]
    lines.append("|---|" + "---:|" * len(columns))
    for row in rows:
        cells = []
        for _, split, measure in columns:
            value = _value(row, split, measure)
            text = fmt(value)
            if mark_best and math.isfinite(value) and round(value, 4) == best[(split, measure)]:
                text = f"**{text}**"
            cells.append(text)
        lines.append(f"| {row.label} | " + " | ".join(cells) + " |")
    return lines


def _paper_table() -> list[str]:
    paper = json.loads((DATA_ROOT / "paper_results.json").read_text())
    titles = [split_info(s).title for s in paper["splits"]]
    lines = ["| Method | " + " | ".join(f"{t} NDCG / MAP" for t in titles) + " |"]
    lines.append("|---|" + "---:|" * len(titles))
    for row in paper["rows"]:
        cells = [f"{fmt(n)} / {fmt(m)}" if n is not None else "-" for n, m in zip(row["ndcg"], row["map"])]
        lines.append(f"| {row['method']} | " + " | ".join(cells) + " |")
    return lines


def _lead_note(board: Leaderboard) -> str:
    lead = next((r for r in board.rows if r.ranker == "lead" and r.label == "lead"), None)
    if lead is None:
        return ""
    xsum = [s.name for s in board.splits if s.name.startswith("xsum")]
    beat = [
        r.label
        for r in board.ranked_rows
        if r is not lead
        and all(r.mean(s, m) > lead.mean(s, m) for s in xsum for m in LEADERBOARD_MEASURES)
    ]
    names = ", ".join(f"`{b}`" for b in beat) if beat else "none"
    return (
        "- The `lead` baseline is strong on XSum. Rankers that beat it on both XSum splits in "
        f"both NDCG and MAP: {names}."
    )


def render_markdown(board: Leaderboard) -> str:
    data = manifest()
    lines = [
        "# SourceSum leaderboard",
        "",
        "Source sentence detection on SourceSum (Suhara & Alikaniotis, EACL 2024): rank each "
        "document sentence by how much it contributed to the summary.",
        "",
        "- **Relevance**: graded = number of annotators who voted the sentence a source (NDCG); "
        "binary = at least 2 such votes (MAP).",
        "- **Metrics**: full-list NDCG with linear gain and discount 1/log2(rank+1), ideal DCG "
        "over all sentences of the pair; AP as scikit-learn's `average_precision_score`. "
        "**Tied scores are averaged** (expected value over orderings of ties, as scikit-learn's "
        "`ndcg_score`). Means are unweighted over the pairs of a split; Avg is the mean of the "
        "four splits. Best value per column in bold (reference rows excluded).",
        f"- **Data**: `{data['repository']}` at commit `{data['commit'][:10]}` (sha256-pinned); "
        f"sourcesum-bench {__version__}. Scores are the committed files in `data/scores/`.",
        "- **Regenerate**: `bash scripts/leaderboard.sh` (or `sourcesum leaderboard`).",
    ]
    note = _lead_note(board)
    if note:
        lines.append(note)
    lines += ["", "## Results", ""]
    lines += _markdown_table(board, board.ranked_rows, mark_best=True)
    if board.reference_rows:
        lines += ["", "## Reference rows", "", "Not rankers: `oracle` scores each sentence by "
                  "its own votes (a pipeline check, 1.0 by construction).", ""]
        lines += _markdown_table(board, board.reference_rows, mark_best=False)
    lines += [
        "",
        "## Numbers reported in the paper (for comparison)",
        "",
        "From the main results table of Suhara & Alikaniotis (2024), "
        "\"Source Identification in Abstractive Summarization\", EACL 2024 "
        "(arXiv:2402.04677). Not recomputed here.",
        "",
    ]
    lines += _paper_table()
    if board.stale:
        lines += ["", "## Skipped score files", ""] + [f"- `{s}`" for s in board.stale]
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    return text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("&", r"\&").replace("%", r"\%")


def render_latex(board: Leaderboard) -> str:
    """A booktabs table: one NDCG/MAP column pair per split plus the average, best in bold."""
    columns = _columns(board)
    best = _best(board)
    groups = [s.title for s in board.splits] + ["Average"]
    lines = [
        r"% Generated by sourcesum-bench; requires \usepackage{booktabs}",
        r"\begin{tabular}{l" + "cc" * len(groups) + "}",
        r"\toprule",
        " & " + " & ".join(rf"\multicolumn{{2}}{{c}}{{{_latex_escape(g)}}}" for g in groups) + r" \\",
        " ".join(rf"\cmidrule(lr){{{2 + 2 * i}-{3 + 2 * i}}}" for i in range(len(groups))),
        "Ranker & " + " & ".join(["NDCG & MAP"] * len(groups)) + r" \\",
        r"\midrule",
    ]
    for row in board.ranked_rows + board.reference_rows:
        cells = []
        for _, split, measure in columns:
            value = _value(row, split, measure)
            text = fmt(value)
            if not row.reference and math.isfinite(value) and round(value, 4) == best[(split, measure)]:
                text = rf"\textbf{{{text}}}"
            cells.append(text)
        lines.append(_latex_escape(row.label) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


RENDERERS = {"markdown": render_markdown, "json": render_json, "csv": render_csv, "latex": render_latex}
