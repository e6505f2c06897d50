"""The Ties table: how much each row's scores tie, and every tie rule's mean."""

from __future__ import annotations

from collections.abc import Sequence

from sourcesum.board.model import BoardStats, Leaderboard
from sourcesum.board.view.types import TieColumn, TieRow
from sourcesum.evaluation.measures import Measure
from sourcesum.evaluation.ties import TIE_RULES


def tie_columns(measures: Sequence[Measure]) -> tuple[TieColumn, ...]:
    """The Ties table's columns: per measure worst-first, the default (named by what it is),
    the expectation when it differs from the default, best-first."""
    names = {"pessimistic": "worst-first", "optimistic": "best-first"}
    columns = []
    for measure in measures:
        expectation = measure.expectation
        for rule in TIE_RULES:
            if rule == "default":
                columns.append(
                    TieColumn(f"{measure.display_name} {measure.default_tie_rule} (default)", measure, rule)
                )
            elif rule == "expected":
                if expectation is not None and expectation != measure:
                    columns.append(TieColumn(f"{measure.display_name} expected", measure, rule))
            else:
                columns.append(TieColumn(f"{measure.display_name} {names[rule]}", measure, rule))
    return tuple(columns)


def tie_rows(board: Leaderboard, stats: BoardStats, columns: Sequence[TieColumn]) -> tuple[TieRow, ...]:
    """Rows of the Ties table: ranked, published, then reference rows that have scores."""
    rows = board.ranked_rows + board.published_rows + [r for r in board.reference_rows if stats.of(r).ties]
    out = []
    for row in rows:
        for split in board.splits:
            report = stats.of(row).ties.get(split.name)
            if report is None:
                continue
            out.append(
                TieRow(
                    row.name,
                    split.title,
                    report["pairs_with_ties"],
                    report["sentences_tied"],
                    tuple(report[c.measure.name].get(c.rule) for c in columns),
                )
            )
    return tuple(out)
