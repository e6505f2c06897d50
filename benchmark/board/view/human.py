"""The human-agreement section as data: coverage, one row per system, marks against the human."""

from __future__ import annotations

from typing import Any

from sourcesum.board.model import BoardStats, Leaderboard
from sourcesum.evaluation.human import HUMAN_LABEL
from sourcesum.util.numbers import fmt_ci

COVERAGE_HEADERS = (
    "Split",
    "Pairs",
    "Left out: 1 annotator",
    "Left out: annotator count differs across sentences",
    "k = 2 (reference = 1 annotator, binary at 1 vote)",
    "k >= 3",
    "References",
    "References with no relevant sentence",
    "Pairs without a value: left out + every reference without a relevant sentence",
)


def human_section(board: Leaderboard, stats: BoardStats) -> dict[str, Any]:
    """The human-agreement section as data: coverage rows, columns, one row per system (value,
    mark +1/0/-1 against the human, CI), counts of marks per column and the ceiling columns."""
    table = stats.human
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
                " / ".join(f"{m.display_name} {c['references_without_relevant'][m.name]}" for m in measures),  # type: ignore[index]
                " / ".join(
                    f"{m.display_name} {c['pairs_excluded']} + {c['pairs_left_out'][m.name] - c['pairs_excluded']}"  # type: ignore[index]
                    for m in measures
                ),
            ]
        )
    columns = [(split, m) for split in board.splits for m in measures]
    names = {r.label: r.name for r in board.rows}
    rows = []
    for label in table.labels:
        cells = []
        for split, measure in columns:
            ci = table.ci.get((label, split.name, measure))
            mark = 0 if label == HUMAN_LABEL else table.versus_human(label, split.name, measure)
            cells.append({"value": table.mean(label, split.name, measure), "mark": mark, "ci": fmt_ci(ci)})
        rows.append({"label": names.get(label, label), "cells": cells})
    counts = []
    for split, measure in columns:
        marks = [
            table.versus_human(label, split.name, measure)
            for label in table.labels[1:]
            if (label, split.name) in table.per_pair
        ]
        undecided = f" / {marks.count(None)} ?" if None in marks else ""
        counts.append(f"{marks.count(1)} ▲ / {marks.count(0)} = / {marks.count(-1)} ▼{undecided}")
    ceiling = [f"{s.title} {m.display_name}" for s, m in columns if table.is_ceiling(s.name, m)]
    return {
        "coverage": coverage,
        "coverage_headers": list(COVERAGE_HEADERS),
        "columns": [f"{s.title} {m.display_name}" for s, m in columns],
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
