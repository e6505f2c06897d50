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

from sourcesum import __version__
from sourcesum.data import manifest, split_info
from sourcesum.human import HUMAN_LABEL
from sourcesum.leaderboard import ALPHA, LEADERBOARD_MEASURES, Leaderboard, Row
from sourcesum.measures import AP, NDCG, Measure
from sourcesum.paths import DATA_ROOT

COLUMN_NAMES = {NDCG: "NDCG", AP: "MAP"}
PLOT_NAME = "leaderboard.png"


def fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def format_table(records: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain aligned text table of ``records`` (floats to 4 decimals)."""
    cells = [[fmt(r.get(c)) if isinstance(r.get(c), float) else str(r.get(c, "")) for c in columns] for r in records]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def _columns(board: Leaderboard) -> list[tuple[str, str | None, Measure]]:
    """(header, split or None for the average, measure) for every numeric column."""
    columns = [(f"{s.title} {COLUMN_NAMES[m]}", s.name, m) for s in board.splits for m in LEADERBOARD_MEASURES]
    columns += [(f"Avg {COLUMN_NAMES[m]}", None, m) for m in LEADERBOARD_MEASURES]
    return columns


def records(board: Leaderboard) -> list[dict[str, Any]]:
    """One flat record per (row, split): means, CIs, p vs best, ties; for JSON output."""
    out = []
    for row in board.rows:
        for split in board.splits:
            evaluation = row.evaluations.get(split.name)
            if evaluation is None:
                continue
            record = evaluation.summary()
            record["ranker"] = row.label
            record["reference"] = row.reference
            for measure in LEADERBOARD_MEASURES:
                key = "ndcg" if measure == NDCG else "map"
                if (split.name, measure) in row.ci:
                    record[f"{key}_ci"] = list(row.ci[(split.name, measure)])
                if (split.name, measure) in row.p_vs_best:
                    record[f"{key}_p_vs_best"] = row.p_vs_best[(split.name, measure)]
            if split.name in row.ties:
                record["ties"] = row.ties[split.name]
            out.append(record)
    return out


def render_json(board: Leaderboard) -> str:
    return json.dumps({"version": __version__, "results": records(board)}, indent=2) + "\n"


def render_csv(board: Leaderboard) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = _columns(board)
    header = ["ranker", "reference"]
    for name, _, _ in columns:
        header += [name, f"{name} CI low", f"{name} CI high"]
    writer.writerow(header)
    for row in board.rows:
        cells: list[Any] = [row.label, row.reference]
        for _, split, measure in columns:
            low, high = row.ci.get((split, measure), (float("nan"), float("nan")))
            cells += [repr(row.value(split, measure)), repr(low), repr(high)]
        writer.writerow(cells)
    return buffer.getvalue()


def cell_mark(board: Leaderboard, row: Row, split: str | None, measure: Measure) -> str:
    """``"best"`` (the column's best ranked row), ``"tied"`` (not significantly worse than the
    best, split columns only) or ``""``; reference rows and missing values are never marked."""
    if row.reference or not math.isfinite(row.value(split, measure)):
        return ""
    if board.best.get((split, measure)) == row.label:
        return "best"
    if split is not None and row.not_worse_than_best(split, measure):
        return "tied"
    return ""


def _cell(board: Leaderboard, row: Row, split: str | None, measure: Measure, ci: bool, bold: str, mark: str) -> str:
    value = row.value(split, measure)
    text = fmt(value)
    if not math.isfinite(value):
        return text
    status = cell_mark(board, row, split, measure)
    if status == "best":
        text = f"{bold[0]}{text}{bold[1]}"
    elif status == "tied":
        text += mark
    if ci and (split, measure) in row.ci:
        low, high = row.ci[(split, measure)]
        text += f" [{fmt(low, 3)}, {fmt(high, 3)}]"
    return text


def _markdown_table(board: Leaderboard, rows: list[Row]) -> list[str]:
    columns = _columns(board)
    lines = ["| Ranker | " + " | ".join(c[0] for c in columns) + " |"]
    lines.append("|---|" + "---:|" * len(columns))
    for row in rows:
        cells = [_cell(board, row, s, m, True, ("**", "**"), " †") for _, s, m in columns]
        lines.append(f"| {row.label} | " + " | ".join(cells) + " |")
    return lines


def _ties_table(board: Leaderboard) -> list[str]:
    lines = [
        "| Ranker | Split | Pairs with ties | Sentences tied | NDCG pessimistic / averaged / optimistic | MAP pessimistic / averaged / optimistic |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in board.ranked_rows + [r for r in board.reference_rows if r.ties]:
        for split in board.splits:
            report = row.ties.get(split.name)
            if report is None:
                continue
            bounds = [
                " / ".join(fmt(report[m.name][k]) for k in ("pessimistic", "average", "optimistic"))
                for m in LEADERBOARD_MEASURES
            ]
            lines.append(
                f"| {row.label} | {split.title} | {report['pairs_with_ties']:.1%} | "
                f"{report['sentences_tied']:.1%} | {bounds[0]} | {bounds[1]} |"
            )
    return lines


def paper_table() -> tuple[list[str], list[tuple[str, list[tuple[float | None, float | None]]]]]:
    """The paper's reported numbers (``data/paper_results.json``, not recomputed): split titles,
    then ``(method, [(NDCG, MAP) per split])`` rows (``None`` where the paper has no number)."""
    paper = json.loads((DATA_ROOT / "paper_results.json").read_text())
    titles = [split_info(s).title for s in paper["splits"]]
    return titles, [(row["method"], list(zip(row["ndcg"], row["map"], strict=True))) for row in paper["rows"]]


def paper_cell(ndcg: float | None, ap: float | None) -> str:
    """``"NDCG / MAP"`` as the paper table prints it, ``-`` when the paper has no number."""
    return f"{fmt(ndcg)} / {fmt(ap)}" if ndcg is not None else "-"


def _paper_table() -> list[str]:
    titles, rows = paper_table()
    lines = ["| Method | " + " | ".join(f"{t} NDCG / MAP" for t in titles) + " |"]
    lines.append("|---|" + "---:|" * len(titles))
    lines += [
        f"| {method} | " + " | ".join(paper_cell(n, m) for n, m in cells) + " |" for method, cells in rows
    ]
    return lines


def _lead_note(board: Leaderboard) -> str:
    lead = next((r for r in board.rows if r.label == "lead"), None)
    if lead is None:
        return ""
    xsum = [s.name for s in board.splits if s.name.startswith("xsum")]
    beat = [
        r.label for r in board.ranked_rows
        if r is not lead and all(r.mean(s, m) > lead.mean(s, m) for s in xsum for m in LEADERBOARD_MEASURES)
    ]
    names = ", ".join(f"`{b}`" for b in beat) if beat else "none"
    return ("- The `lead` baseline is strong on XSum. Rankers above it on both XSum splits in both "
            f"NDCG and MAP: {names}.")


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
        "four splits.",
        "- **Statistics**: `[low, high]` is a 95% percentile bootstrap CI (10,000 resamples, "
        "seed 0) resampling *documents* (CNN/DM pairs that share a document move together; on "
        "XSum this equals resampling pairs). **Bold**: best ranker of the column. †: not "
        f"significantly worse than the best (paired randomization test, 10,000 document-level "
        f"sign flips, Holm-corrected across the column's rankers, p >= {ALPHA}).",
        f"- **Data**: `{data['repository']}` at commit `{data['commit'][:10]}` (sha256-pinned); "
        f"sourcesum-bench {__version__}. Scores are the committed files in `data/scores/`.",
        "- **Regenerate**: `bash scripts/leaderboard.sh` (or `sourcesum leaderboard`); "
        f"plot: [`{PLOT_NAME}`]({PLOT_NAME}).",
    ]
    note = _lead_note(board)
    if note:
        lines.append(note)
    lines += ["", "## Results", ""] + _markdown_table(board, board.ranked_rows)
    lines += [
        "", "## Reference rows", "",
        "Not rankers, not ranked. `oracle` scores each sentence by its own votes (1.0 by "
        f"construction: a pipeline check). `{HUMAN_LABEL}`: each annotator's 0/1 votes used as "
        "scores and evaluated against the other annotators' votes (graded = their 1-votes; "
        "binary = at least min(2, k-1) of the k-1 others), averaged over held-out annotators; "
        "pairs whose sentences have different numbers of annotators are left out (6 on "
        "CNN/DM-PEGASUS, 4 on CNN/DM-Reference). It shows how far rankers are from human agreement.",
        "",
    ] + _markdown_table(board, board.reference_rows)
    lines += [
        "", "## Ties", "",
        "Share of pairs with at least one tied score, share of sentences tied with another "
        "sentence of their pair, and each split mean with ties broken worst-first "
        "(pessimistic), averaged (the default above), and best-first (optimistic).", "",
    ] + _ties_table(board)
    lines += [
        "", "## Numbers reported in the paper (for comparison)", "",
        "From the main results table of Suhara & Alikaniotis (2024), \"Source Identification in "
        "Abstractive Summarization\", EACL 2024 (arXiv:2402.04677). Not recomputed here; their "
        "BERTScore, SimCSE, PMI and model-based rows used other (larger) models than the offline "
        "defaults above.", "",
    ] + _paper_table()
    if board.stale:
        lines += ["", "## Skipped score files", ""] + [f"- `{s}`" for s in board.stale]
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    return text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("&", r"\&").replace("%", r"\%")


def render_latex(board: Leaderboard, ci: bool = False) -> str:
    """A booktabs table: NDCG/MAP per split plus the average, best in bold, † = not
    significantly worse than the best; ``ci`` adds the 95% CIs under each value."""
    columns = _columns(board)
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
    for index, row in enumerate(board.ranked_rows + board.reference_rows):
        if index == len(board.ranked_rows):
            lines.append(r"\midrule")
        cells = [_cell(board, row, s, m, False, (r"\textbf{", "}"), r"$^\dagger$") for _, s, m in columns]
        lines.append(_latex_escape(row.label) + " & " + " & ".join(cells) + r" \\")
        if ci:
            intervals = []
            for _, s, m in columns:
                low, high = row.ci.get((s, m), (float("nan"), float("nan")))
                intervals.append(rf"\scriptsize[{fmt(low, 3)}, {fmt(high, 3)}]" if math.isfinite(low) else "")
            lines.append(" & " + " & ".join(intervals) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


RENDERERS = {"markdown": render_markdown, "json": render_json, "csv": render_csv, "latex": render_latex}
