"""The Markdown leaderboard (``leaderboard.md``): tables from the view-model, prose in the
template ``templates/leaderboard.md.j2``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sourcesum import __version__
from sourcesum.board import prose
from sourcesum.board.view import BoardView, Cell, DifferenceRow, RowView
from sourcesum.outputs.escape import md_cell, md_code
from sourcesum.outputs.templating import environment
from sourcesum.stats.bootstrap import ALPHA
from sourcesum.util.numbers import fmt

PLOT_NAME = "leaderboard.png"


@dataclass(frozen=True)
class BoardText:
    """What the Markdown header says of where the scores come from and how to render the board
    again (the command line knows; the board does not)."""

    scores_from: str = "the committed files in `data/scores/`"
    regenerate: str = "`bash scripts/leaderboard.sh` (or `sourcesum leaderboard`)"


def cell_text(cell: Cell, ci: bool, bold: tuple[str, str], mark: str, undecided: str = " ?") -> str:
    """A value with its mark (bold best, ``mark`` when not significantly worse, ``undecided``
    when the test against the best is undecided at the resampling cap) and, with ``ci``, its
    interval."""
    text = cell.text
    if not math.isfinite(cell.value):
        return text
    if cell.mark == "best":
        text = f"{bold[0]}{text}{bold[1]}"
    elif cell.mark == "tied":
        text += mark
    elif cell.mark == "undecided":
        text += undecided
    if ci and cell.ci is not None:
        text += f" {cell.ci_text}"
    return text


def table(view: BoardView, rows: Sequence[RowView]) -> str:
    lines = ["| Ranker | " + " | ".join(c.header for c in view.columns) + " |"]
    lines.append("|---|" + "---:|" * len(view.columns))
    for row in rows:
        cells = [cell_text(c, True, ("**", "**"), " †") for c in row.cells]
        lines.append(f"| {md_cell(row.label)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


MARKS = {"above": " ▲", "below": " ▼", "undecided": " ?", "not significant": "", "": ""}


def difference_table(board: BoardView, rows: Sequence[DifferenceRow]) -> str:
    """Each row's mean difference against a base per column: ``+0.0123 [+0.004, +0.021] ▲``."""
    lines = ["| Ranker | " + " | ".join(c.header for c in board.columns) + " |"]
    lines.append("|---|" + "---:|" * len(board.columns))
    for row in rows:
        cells = [
            "-" if cell is None else f"{cell[0]:+.4f} [{cell[1]:+.3f}, {cell[2]:+.3f}]{MARKS[cell[3]]}"
            for cell in row.cells
        ]
        lines.append(f"| {md_cell(row.label)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


LEAD_MARKS = {"above": "▲", "below": "▼", "not significant": "=", "undecided": "?"}


def lead_table(view: BoardView) -> str:
    """Every competing row against ``lead`` per split column (:data:`LEAD_MARKS`)."""
    split_columns = [c for c in view.columns if c.split is not None]
    lines = ["| Row | " + " | ".join(c.header for c in split_columns) + " |"]
    lines.append("|---|" + ":---:|" * len(split_columns))
    for row in view.lead_marks:
        lines.append(f"| {md_cell(row[0])} | " + " | ".join(LEAD_MARKS.get(m, "") for m in row[1]) + " |")
    return "\n".join(lines)


def transfer_table(view: BoardView) -> str:
    """Each zero-shot row's rank on each board, then the boards' rank correlations."""
    transfer = view.transfer
    assert transfer is not None
    lines = ["| Ranker | " + " | ".join(f"rank on {b}" for b in transfer.boards) + " |"]
    lines.append("|---|" + "---:|" * len(transfer.boards))
    lines += [
        f"| {md_cell(name)} | " + " | ".join(str(r) for r in ranks) + " |" for name, ranks in transfer.rows
    ]
    return "\n".join(lines)


def rows_table(view: BoardView) -> str:
    """The details of every row: name, ranker, version, full label, keys, libraries."""
    lines = [
        "| Row | Ranker | Version | Label (full parameters) | Keys | Libraries |",
        "|---|---|---|---|---|---|",
    ]
    for row in view.ordered:
        keys = "<br>".join(f"{md_cell(title)}: {md_code(key)}" for title, key in row.keys) or (
            "the paper's output files (sha256-pinned)" if row.kind == "published" else "-"
        )
        libraries = ", ".join(f"{name} {version}" for name, version in row.libraries) or "-"
        label = "<br>= ".join(md_code(x) for x in (row.full_label, *row.same_as))
        lines.append(
            f"| {md_cell(row.label)} | {md_code(row.ranker)} | {', '.join(row.versions) or '-'} | "
            f"{label} | {keys} | {md_cell(libraries)} |"
        )
    return "\n".join(lines)


def ties_table(view: BoardView) -> str:
    lines = [
        "| Ranker | Split | Pairs with ties | Sentences tied | "
        + " | ".join(c.header for c in view.tie_columns)
        + " |",
        "|---|---|---:|---:|" + "---:|" * len(view.tie_columns),
    ]
    for row in view.ties:
        lines.append(
            f"| {md_cell(row.label)} | {md_cell(row.split)} | {row.pairs_with_ties:.1%} | {row.sentences_tied:.1%} | "
            + " | ".join(fmt(v) for v in row.values)
            + " |"
        )
    return "\n".join(lines)


def human_tables(view: BoardView) -> tuple[str, str]:
    """The coverage table and the agreement table of the human section."""
    data = view.human
    headers = data["coverage_headers"]
    coverage = ["| " + " | ".join(headers) + " |", "|---|" + "---:|" * (len(headers) - 1)]
    coverage += ["| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in data["coverage"]]
    lines = ["| System | " + " | ".join(data["columns"]) + " |", "|---|" + "---:|" * len(data["columns"])]
    arrows = {1: " ▲", -1: " ▼", 0: "", None: " ?"}
    for row in data["rows"]:
        cells = [
            fmt(c["value"])
            + (arrows[c["mark"]] + (f" {c['ci']}" if c["ci"] else "") if math.isfinite(c["value"]) else "")
            for c in row["cells"]
        ]
        lines.append(f"| {md_cell(row['label'])} | " + " | ".join(cells) + " |")
    lines.append("| rows ▲ / = / ▼ the human | " + " | ".join(data["counts"]) + " |")
    return "\n".join(coverage), "\n".join(lines)


def measures_note(view: BoardView) -> str:
    """The board's measures in words when they are not the paper's NDCG and MAP (else empty)."""
    if view.default_measures:
        return ""
    return ", ".join(
        f"{m.display_name} (`{m.name}`, {m.relevance} relevance)"
        if m.display_name != m.name
        else f"`{m.name}` ({m.relevance} relevance)"
        for m in view.measures
    )


def plot_name_for(output: Path) -> str:
    """The plot written beside a Markdown board: the board's own name with ``.png``
    (``leaderboard.md`` -> ``leaderboard.png``)."""
    return Path(output).with_suffix(".png").name


def is_our_markdown(payload: bytes) -> bool:
    """Bytes that a Markdown board of ours wrote: a ``# ... leaderboard`` title and the header's
    ``sourcesum-bench`` version."""
    text = payload.decode("utf-8", errors="replace")
    first = text.split("\n", 1)[0]
    return first.startswith("# ") and first.endswith(" leaderboard") and "; sourcesum-bench " in text


def render_markdown(view: BoardView, plot: str = PLOT_NAME, text: BoardText = BoardText()) -> str:
    """The Markdown board; ``plot`` is the file name of the plot it links to, ``text`` what the
    header says of its scores' origin and how to render it again."""
    coverage, human = human_tables(view) if view.human else ("", "")
    groups = {key: table(view, rows) for key, _, rows in view.groups}
    tables = {
        "zero_shot": groups.get("zero-shot", ""),
        "supervised": groups.get("supervised", ""),
        "lead": lead_table(view),
        "rows": rows_table(view),
        "published": groups.get("published", ""),
        "reference": groups.get("reference", ""),
        "coverage": coverage,
        "human": human,
        "ties": ties_table(view),
    }
    for task in view.tasks:
        tables[f"task:{task.name}"] = table(task.board, task.board.ordered)
        tables[f"rows:{task.name}"] = rows_table(task.board)
    if view.transfer is not None:
        tables["transfer"] = transfer_table(view)
    if view.heldout is not None:
        tables["heldout"] = table(view.heldout.board, view.heldout.board.ordered)
        tables["rows:heldout"] = rows_table(view.heldout.board)
        tables["heldout_lead"] = difference_table(view.heldout.board, view.heldout.against_lead)
        tables["heldout_zero_shot"] = difference_table(view.heldout.board, view.heldout.against_zero_shot)
    source = next(iter(view.dataset.sources().values()))
    return str(
        environment(autoescape=False)
        .get_template("leaderboard.md.j2")
        .render(
            view=view,
            tables=tables,
            prose=prose,
            data=source,
            version=__version__,
            plot=plot,
            alpha=ALPHA,
            split_count=prose.count_word(len(view.splits)),
            measures_note=measures_note(view),
            md_code=md_code,
            text=text,
            unpinned=", ".join(md_code(name) for name in view.unpinned),
        )
    )
