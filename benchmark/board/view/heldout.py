"""The held-out test as shown: its board, and every row against ``lead`` and against the
column's best zero-shot row."""

from __future__ import annotations

from sourcesum.board.model import BoardStats, Leaderboard
from sourcesum.board.view.cells import columns_of
from sourcesum.board.view.types import DifferenceRow


def difference_rows(board: Leaderboard, stats: BoardStats, against: str) -> tuple[DifferenceRow, ...]:
    """Each competing row's difference to ``against`` (``lead`` or ``zero-shot``) per column."""
    columns = columns_of(board)
    out = []
    for row in board.competing_rows:
        cells: list[tuple[float, float, float, str] | None] = []
        for column in columns:
            value = stats.of(row).differences.get((against, column.split, column.measure))
            if value is None:
                cells.append(None)
                continue
            tests = stats.of(row).vs_lead if against == "lead" else stats.of(row).vs_zero_shot
            marked = tests.get((column.split, column.measure)) if column.split is not None else None
            if marked is None:
                decision = ""
            elif marked.decision == "significant":
                decision = "above" if value[0] > 0 else "below"
            else:
                decision = marked.decision
            cells.append((*value, decision))
        out.append(DifferenceRow(row.name, row.supervised, tuple(cells)))
    return tuple(out)
