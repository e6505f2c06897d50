"""Render results for people (Markdown, LaTeX, terminal tables) and machines (JSON, CSV).

Everything here is a pure function of its inputs: no dates or timings, so regenerating an
unchanged leaderboard is byte-identical.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from sourcesum import __version__
from sourcesum.data import manifest
from sourcesum.human import HUMAN_LABEL, HumanAgreement
from sourcesum.leaderboard import ALPHA, LEADERBOARD_MEASURES, Leaderboard, Row
from sourcesum.measures import AP, EXPECTED_AP, NDCG, Measure
from sourcesum.published import published_methods
from sourcesum.ties import TIE_RULES

COLUMN_NAMES = {NDCG: "NDCG", AP: "MAP", EXPECTED_AP: "MAP (ties expected)"}
PLOT_NAME = "leaderboard.png"


def column_name(measure: Measure) -> str:
    """``NDCG``, ``MAP``, ``MAP (ties expected)``, else the measure's canonical name."""
    return COLUMN_NAMES.get(measure, measure.name)


def fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def format_table(records: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain aligned text table of ``records`` (floats to 4 decimals)."""
    cells = [
        [fmt(r.get(c)) if isinstance(r.get(c), float) else str(r.get(c, "")) for c in columns]
        for r in records
    ]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=False))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)) for row in cells]
    return "\n".join(lines)


def _columns(board: Leaderboard) -> list[tuple[str, str | None, Measure]]:
    """(header, split or None for the average, measure) for every numeric column."""
    columns = [(f"{s.title} {column_name(m)}", s.name, m) for s in board.splits for m in board.measures]
    columns += [(f"Avg {column_name(m)}", None, m) for m in board.measures]
    return columns


def records(board: Leaderboard) -> list[dict[str, Any]]:
    """One flat record per (row, split): means, CIs, p vs best and vs lead, ties, NaN counts of
    published outputs; for JSON output."""
    from sourcesum.evaluation import result_key

    out = []
    for row in board.rows:
        for split in board.splits:
            evaluation = row.evaluations.get(split.name)
            if evaluation is None:
                continue
            record = evaluation.summary()
            record["ranker"] = row.label
            record["reference"] = row.reference
            record["published"] = row.published
            for measure in board.measures:
                key = result_key(measure)
                if (split.name, measure) in row.ci:
                    record[f"{key}_ci"] = list(row.ci[(split.name, measure)])
                if (split.name, measure) in row.p_vs_best:
                    record[f"{key}_p_vs_best"] = row.p_vs_best[(split.name, measure)]
                if (split.name, measure) in row.p_vs_lead:
                    record[f"{key}_p_vs_lead"] = row.p_vs_lead[(split.name, measure)]
            if split.name in row.ties:
                record["ties"] = row.ties[split.name]
            if split.name in row.nan_replaced:
                record["nan_replaced"], record["all_nan_pairs"] = row.nan_replaced[split.name]
            out.append(record)
    return out


def human_records(table: HumanAgreement) -> dict[str, Any]:
    """The human-agreement table for JSON: coverage per split, then one record per cell."""
    cells = []
    for (label, split), _ in table.per_pair.items():
        for measure in table.measures:
            cell: dict[str, Any] = {
                "system": label,
                "split": split,
                "measure": measure.name,
                "mean": table.mean(label, split, measure),
            }
            if (label, split, measure) in table.ci:
                cell["ci"] = list(table.ci[(label, split, measure)])
            if (label, split, measure) in table.p_vs_human:
                cell["p_vs_human"] = table.p_vs_human[(label, split, measure)]
            cells.append(cell)
    return {"coverage": table.coverage, "results": cells}


def render_json(board: Leaderboard) -> str:
    payload: dict[str, Any] = {"version": __version__, "results": records(board)}
    if board.human is not None:
        payload["human_agreement"] = human_records(board.human)
    return json.dumps(payload, indent=2) + "\n"


def _flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"ties": {"nDCG": {"default": x}}}`` -> ``{"ties nDCG default": x}``."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key} "))
        else:
            out[f"{prefix}{key}"] = value
    return out


def render_csv(board: Leaderboard) -> str:
    """One line per row: per split and measure the mean and CI (``<split> <column>``, ``... CI
    low``, ``... CI high``), the Avg columns likewise, then every other field of the row's JSON
    records (:func:`records`), named ``<split title> <key>`` with nested keys joined by spaces
    (``XSum-PEGASUS map_p_vs_best``, ``XSum-PEGASUS ties AP expected``); empty where a row has
    no such field. JSON's human-agreement table is not in the CSV."""
    from sourcesum.evaluation import result_key

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = _columns(board)
    header = ["ranker", "reference", "published"]
    for name, _, _ in columns:
        header += [name, f"{name} CI low", f"{name} CI high"]
    titles = {s.name: s.title for s in board.splits}
    shown = {"ranker", "split", "reference", "published"}
    shown |= {k for m in board.measures for k in (result_key(m), f"{result_key(m)}_ci")}
    extra: dict[str, dict[str, Any]] = {}  # row label -> column -> value
    extra_columns: dict[str, list[str]] = {s.name: [] for s in board.splits}
    for record in records(board):
        for key, value in _flatten(record).items():
            if key in shown:
                continue
            name = f"{titles[record['split']]} {key}"
            if name not in extra_columns[record["split"]]:
                extra_columns[record["split"]].append(name)
            extra.setdefault(record["ranker"], {})[name] = value
    more = [name for s in board.splits for name in extra_columns[s.name]]
    writer.writerow(header + more)
    for row in board.rows:
        cells: list[Any] = [row.label, row.reference, row.published]
        for _, split, measure in columns:
            low, high = row.ci.get((split, measure), (float("nan"), float("nan")))
            cells += [repr(row.value(split, measure)), repr(low), repr(high)]
        values = extra.get(row.label, {})
        cells += [repr(values[n]) if isinstance(values.get(n), float) else values.get(n, "") for n in more]
        writer.writerow(cells)
    return buffer.getvalue()


def cell_mark(board: Leaderboard, row: Row, split: str | None, measure: Measure) -> str:
    """``"best"`` (the column's best competing row: ranker or published system), ``"tied"`` (not
    significantly worse than the best, split columns only) or ``""``; reference rows and missing
    values are never marked."""
    if row.reference or not math.isfinite(row.value(split, measure)):
        return ""
    if board.best.get((split, measure)) == row.label:
        return "best"
    if split is not None and row.not_worse_than_best(split, measure):
        return "tied"
    return ""


def _cell(
    board: Leaderboard, row: Row, split: str | None, measure: Measure, ci: bool, bold: str, mark: str
) -> str:
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


_TIE_COLUMN = {"pessimistic": "worst-first", "expected": "expected", "optimistic": "best-first"}


def tie_columns(board: Leaderboard) -> list[tuple[str, Measure, str]]:
    """(header, measure, rule) for the Ties table: worst-first, the default (named by what it
    is), the expectation when it differs from the default, best-first."""
    columns = []
    for measure in board.measures:
        expectation = measure.expectation
        for rule in TIE_RULES:
            if rule == "default":
                what = (
                    "expected"
                    if expectation == measure
                    else "block, scikit-learn"
                    if measure.family == "AP"
                    else "fractional ranks"
                )
                columns.append((f"{column_name(measure)} {what} (default)", measure, rule))
            elif rule == "expected":
                if expectation is not None and expectation != measure:
                    columns.append((f"{column_name(measure)} expected", measure, rule))
            else:
                columns.append((f"{column_name(measure)} {_TIE_COLUMN[rule]}", measure, rule))
    return columns


def tie_rows(board: Leaderboard) -> list[Row]:
    """Rows of the Ties table: ranked, published, then reference rows that have scores."""
    return board.ranked_rows + board.published_rows + [r for r in board.reference_rows if r.ties]


TIES_TEXT = (
    "Share of pairs with at least one tied score, share of sentences tied with another sentence "
    "of their pair, and each split mean under four tie rules: worst-first (relevant sentences "
    "last within each block of tied scores), the default used above (NDCG: the expectation; MAP: "
    "scikit-learn's block AP), the exact expectation over uniform random orderings of tied "
    "scores (for NDCG the default itself), and best-first. Block AP is never below worst-first "
    "but is not the expectation: it can exceed it, and even best-first (two relevant sentences "
    "tied last among six: block 1/3, every ordering 4/15)."
)


def _ties_table(board: Leaderboard) -> list[str]:
    columns = tie_columns(board)
    lines = [
        "| Ranker | Split | Pairs with ties | Sentences tied | " + " | ".join(c[0] for c in columns) + " |",
        "|---|---|---:|---:|" + "---:|" * len(columns),
    ]
    for row in tie_rows(board):
        for split in board.splits:
            report = row.ties.get(split.name)
            if report is None:
                continue
            cells = [fmt(report[m.name].get(rule)) for _, m, rule in columns]
            lines.append(
                f"| {row.label} | {split.title} | {report['pairs_with_ties']:.1%} | "
                f"{report['sentences_tied']:.1%} | " + " | ".join(cells) + " |"
            )
    return lines


LEAD_TEXT = (
    "rows significantly better than `lead` (two-sided paired randomization test, 10,000 "
    "document-level sign flips, Holm-corrected across all rankers and published systems compared "
    f"with `lead` in the column, adjusted p < {ALPHA}, higher mean), per column"
)


def lead_comparisons(board: Leaderboard) -> list[tuple[str, list[Row], list[Row]]]:
    """Per column with a test against ``lead``: its title, the rows significantly better than
    ``lead`` and all rows compared with it."""
    out = []
    for split in board.splits:
        for measure in board.measures:
            family = [r for r in board.competing_rows if (split.name, measure) in r.p_vs_lead]
            if family:
                out.append(
                    (
                        f"{split.title} {column_name(measure)}",
                        board.better_than_lead(split.name, measure),
                        family,
                    )
                )
    return out


def lead_summary(better: Sequence[Row], family: Sequence[Row], quote: str = "`") -> str:
    """``N of M: a, b`` or, when most are better, ``all M but x, y``."""
    if len(better) > len(family) / 2:
        others = [r for r in family if r not in better]
        return f"all {len(family)} but " + (", ".join(f"{quote}{r.label}{quote}" for r in others) or "none")
    names = ", ".join(f"{quote}{r.label}{quote}" for r in better)
    return f"{len(better)} of {len(family)}" + (f": {names}" if better else "")


def _lead_note(board: Leaderboard) -> list[str]:
    comparisons = lead_comparisons(board)
    if not comparisons:
        return []
    lines = [f"- **Against `lead`**: {LEAD_TEXT}:"]
    lines += [f"  - {title}: {lead_summary(better, family)}." for title, better, family in comparisons]
    return lines


def published_intro(board: Leaderboard, quote: str = "`") -> str:
    """What the published rows are and what was checked (Markdown with ``quote`` = backtick)."""
    section = manifest()["published"]
    q = quote
    text = (
        f"The paper's own per-sentence outputs ({q}{section['repository']}{q}, folder {q}outputs/{q}, "
        f"commit {q}{section['commit'][:10]}{q}, sha256-pinned in {q}data/manifest.json{q}, never "
        "committed here), re-scored by this harness with the same measures, CIs and tests as the "
        "rankers; the best of each column and the † marks are shared with the rankers' table. A "
        "test checks that every split and method equals the paper's printed NDCG / MAP to 4 "
        "decimals and a scikit-learn recomputation to 1e-9."
    )
    titles = {s.name: s.title for s in board.splits}
    for row in board.published_rows:
        if len(row.evaluations) < len(board.splits):
            names = [titles[s] for s in titles if s in row.evaluations]
            covered = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
            text += f" The paper published {q}{row.label}{q} only on {covered}, so that row has no Avg."
    return text


def published_notes(board: Leaderboard) -> list[dict[str, Any]]:
    """Per published row: label, what the paper ran, its model, and its NaN replacements."""
    rows = {r.ranker: r for r in board.published_rows}
    notes = []
    for method in published_methods():
        row = rows.get(method.ranker)
        if row is None:
            continue
        nan = []
        for split in board.splits:
            replaced, all_nan = row.nan_replaced.get(split.name, (0, 0))
            if replaced:
                nan.append(
                    f"On {split.title}, {replaced:,} NaN scores were replaced by 0 as in the paper; "
                    f"in {all_nan} of its {len(split)} pairs every score was NaN, so all sentences "
                    "of those pairs tie."
                )
        notes.append(
            {
                "label": row.label,
                "description": method.description,
                "model": f"model: {method.model}" if method.model else "no model",
                "nan": " ".join(nan),
            }
        )
    return notes


def _published_note(board: Leaderboard) -> list[str]:
    lines = [published_intro(board), ""]
    for note in published_notes(board):
        text = f"- `{note['label']}`: {note['description']} ({note['model']})."
        lines.append(text + (f" {note['nan']}" if note["nan"] else ""))
    return lines


HUMAN_TEXT = (
    "Annotators and rankers scored against the same references. For each pair annotated by k >= 2 "
    "annotators and each held-out annotator, the reference is the *other* k-1 annotators' votes: "
    "graded = their number of 1-votes (NDCG), binary = at least min(2, k-1) of them (MAP). "
    f"`{HUMAN_LABEL}` scores the held-out annotator's 0/1 votes against that reference; every other "
    "row scores its own per-sentence scores against the same reference. A pair's value is the mean "
    "over its references, a split's over its pairs. Each cell answers: does this system agree with "
    "the other annotators as well as one more annotator does? MAP is given both as the paper's "
    "block AP and as the expected AP over random orderings of ties, because an annotator's 0/1 "
    "votes form two large tie blocks. ▲ / ▼: significantly above / below the human (two-sided "
    "paired randomization test, 10,000 document-level sign flips, Holm-corrected across the "
    f"column's rows, adjusted p < {ALPHA})."
)
COVERAGE_HEADERS = [
    "Split",
    "Pairs",
    "Left out: 1 annotator",
    "Left out: annotator count differs across sentences",
    "k = 2 (reference = 1 annotator, binary at 1 vote)",
    "k >= 3",
    "References",
    "References with no relevant sentence",
    "Pairs with no defined reference",
]


def human_table(board: Leaderboard) -> dict[str, Any]:
    """The human-agreement section as data: coverage rows, columns, one row per system (value,
    mark +1/0/-1 against the human, CI), counts of marks per column and the ceiling columns."""
    table = board.human
    if table is None:
        return {}
    measures = table.measures
    coverage = []
    for split in board.splits:
        c = table.coverage[split.name]
        coverage.append(
            [
                split.title,
                str(c["pairs"]),
                str(c["pairs_one_annotator"]),
                str(c["pairs_mixed_annotator_counts"]),
                str(c["pairs_two_annotators"]),
                str(c["pairs_three_or_more"]),
                str(c["references"]),
                " / ".join(f"{column_name(m)} {c['references_without_relevant'][m.name]}" for m in measures),
                " / ".join(f"{column_name(m)} {c['pairs_left_out'][m.name]}" for m in measures),
            ]
        )
    columns = [(split, m) for split in board.splits for m in measures]
    rows = []
    for label in table.labels:
        cells = []
        for split, measure in columns:
            low, high = table.ci.get((label, split.name, measure), (math.nan, math.nan))
            mark = 0 if label == HUMAN_LABEL else table.versus_human(label, split.name, measure)
            cells.append(
                {
                    "value": table.mean(label, split.name, measure),
                    "mark": mark,
                    "ci": f"[{fmt(low, 3)}, {fmt(high, 3)}]" if math.isfinite(low) else "",
                }
            )
        rows.append({"label": label, "cells": cells})
    counts = []
    for split, measure in columns:
        marks = [
            table.versus_human(label, split.name, measure)
            for label in table.labels[1:]
            if (label, split.name) in table.per_pair
        ]
        counts.append(f"{marks.count(1)} ▲ / {marks.count(0)} = / {marks.count(-1)} ▼")
    ceiling = [f"{s.title} {column_name(m)}" for s, m in columns if table.is_ceiling(s.name, m)]
    return {
        "coverage": coverage,
        "columns": [f"{s.title} {column_name(m)}" for s, m in columns],
        "rows": rows,
        "counts": counts,
        "ceiling_text": (
            "The human row is a ceiling (every other row significantly below it) in: "
            + (", ".join(ceiling) if ceiling else "no column")
            + ". Elsewhere at least one row is not significantly below it (= or ▲), so it bounds "
            "nothing there. The last line counts the rows above (▲), not significantly different "
            "from (=) and below (▼) the human."
        ),
    }


def _human_section(board: Leaderboard) -> list[str]:
    data = human_table(board)
    if not data:
        return []
    lines = ["", "## Human agreement", "", HUMAN_TEXT, ""]
    lines += ["| " + " | ".join(COVERAGE_HEADERS) + " |", "|---|" + "---:|" * (len(COVERAGE_HEADERS) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in data["coverage"]]
    lines += ["", data["ceiling_text"], ""]
    lines += ["| System | " + " | ".join(data["columns"]) + " |", "|---|" + "---:|" * len(data["columns"])]
    arrows = {1: " ▲", -1: " ▼", 0: ""}
    for row in data["rows"]:
        cells = [
            fmt(c["value"])
            + (arrows[c["mark"]] + (f" {c['ci']}" if c["ci"] else "") if math.isfinite(c["value"]) else "")
            for c in row["cells"]
        ]
        lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    lines.append("| rows ▲ / = / ▼ the human | " + " | ".join(data["counts"]) + " |")
    return lines


def ranker_notes(board: Leaderboard) -> list[tuple[str, str]]:
    """``(ranker, note)`` for every ranker on the board that has a ``board_note``, in row order."""
    from sourcesum.rankers import RANKERS

    out: list[tuple[str, str]] = []
    for row in board.ranked_rows:
        if row.ranker in RANKERS and row.ranker not in [name for name, _ in out]:
            note = RANKERS.get(row.ranker).board_note
            if note:
                out.append((row.ranker, note))
    return out


def _measures_note(board: Leaderboard) -> list[str]:
    """A bullet naming the board's measures when they are not the paper's NDCG and MAP."""
    if tuple(board.measures) == LEADERBOARD_MEASURES:
        return []
    names = ", ".join(
        f"{column_name(m)} (`{m.name}`, {m.relevance} relevance)"
        if column_name(m) != m.name
        else f"`{m.name}` ({m.relevance} relevance)"
        for m in board.measures
    )
    return [
        f"- **Measures of this board**: {names}; formulas and tie rules in the README's Metric "
        "conventions. Rows are ordered by the Avg of the first; bold, † and the test against `lead` "
        "are computed for each measure."
    ]


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
        "over all sentences of the pair; AP as scikit-learn's `average_precision_score` (the "
        "paper's). Means are unweighted over the pairs of a split; Avg is the mean of the four "
        "split means.",
        *_measures_note(board),
        "- **Ties**: NDCG is the expected value over uniform random orderings of tied scores (as "
        "scikit-learn's `ndcg_score`). MAP is scikit-learn's *block* AP: a block of tied "
        "sentences enters at once, each relevant one getting the precision at the block's end. "
        "That is not the expected AP: it is never below the worst-first value but can lie above "
        "the expectation, and even above best-first. The [Ties](#ties) section gives worst-first, "
        "block, the exact expected AP (`AP(ties=expected)`) and best-first.",
        "- **Statistics**: `[low, high]` is a 95% percentile bootstrap CI (10,000 resamples, "
        "seed 0) resampling *documents* (CNN/DM pairs that share a document move together; on "
        "XSum this equals resampling pairs). **Bold**: best row of the column among the rankers "
        "and the published systems (it may sit in either table). †: not significantly worse "
        "than the best (two-sided paired randomization test, 10,000 document-level sign flips, "
        "Holm-corrected across the column's rankers and published systems, adjusted p >= "
        f"{ALPHA}). The Avg CI is the percentile interval of the mean of the four splits' "
        "bootstrap means, resample by resample; every split is resampled by document from "
        "seed 0, so the two splits of a corpus, which share their documents, draw the same "
        "documents in each resample.",
        f"- **Data**: `{data['repository']}` at commit `{data['commit'][:10]}` (sha256-pinned); "
        f"sourcesum-bench {__version__}. Scores are {board.scores_from}; the "
        "published rows are read from the paper's outputs (see [Published systems](#published-systems)).",
        f"- **Regenerate**: {board.regenerate}; plot: [`{PLOT_NAME}`]({PLOT_NAME}).",
    ]
    lines += _lead_note(board)
    lines += ["", "## Results", ""] + _markdown_table(board, board.ranked_rows)
    notes = ranker_notes(board)
    if notes:
        lines += [""] + [f"- `{name}`: {note}" for name, note in notes]
    if board.published_rows:
        lines += ["", "## Published systems", ""] + _published_note(board) + [""]
        lines += _markdown_table(board, board.published_rows)
    if board.reference_rows:
        lines += [
            "",
            "## Reference rows",
            "",
            "Not rankers, not compared. `oracle` scores each sentence by its own votes (1.0 by "
            "construction: a pipeline check).",
            "",
        ] + _markdown_table(board, board.reference_rows)
    lines += _human_section(board)
    lines += [
        "",
        "## Ties",
        "",
        TIES_TEXT,
        "",
    ] + _ties_table(board)
    if board.stale:
        lines += ["", "## Skipped score files", ""] + [f"- `{s}`" for s in board.stale]
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    return text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("&", r"\&").replace("%", r"\%")


def render_latex(board: Leaderboard, ci: bool = False) -> str:
    """A booktabs table: the board's measures per split plus the average, best in bold, † = not
    significantly worse than the best; ``ci`` adds the 95% CIs under each value."""
    columns = _columns(board)
    groups = [s.title for s in board.splits] + ["Average"]
    n = len(board.measures)
    lines = [
        r"% Generated by sourcesum-bench; requires \usepackage{booktabs}",
        r"\begin{tabular}{l" + "c" * n * len(groups) + "}",
        r"\toprule",
        " & " + " & ".join(rf"\multicolumn{{{n}}}{{c}}{{{_latex_escape(g)}}}" for g in groups) + r" \\",
        " ".join(rf"\cmidrule(lr){{{2 + n * i}-{1 + n * (i + 1)}}}" for i in range(len(groups))),
        "Ranker & " + " & ".join([" & ".join(column_name(m) for m in board.measures)] * len(groups)) + r" \\",
        r"\midrule",
    ]
    groups_of_rows = [board.ranked_rows, board.published_rows, board.reference_rows]
    ordered = [row for group in groups_of_rows for row in group]
    breaks = {len(board.ranked_rows), len(board.ranked_rows) + len(board.published_rows)}
    for index, row in enumerate(ordered):
        if index in breaks and index > 0:
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
