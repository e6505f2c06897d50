"""A board from its rows: display names made unique, rows ordered by the Avg of the first measure
(then label), and each column's best marked (:func:`best_of`: a plain comparison of means; the
statistics are computed apart, :mod:`~sourcesum.board.statistics`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sourcesum.board.model import Leaderboard, Row
from sourcesum.board.names import unique_names
from sourcesum.data import Dataset, Split
from sourcesum.evaluation.measures import Measure
from sourcesum.util.hashing import digest


def finish(
    ds: Dataset, splits: dict[str, Split], rows: list[Row], stale: list[str], measures: Sequence[Measure]
) -> Leaderboard:
    """The board of ``rows`` on ``splits``: unique names, rows ordered (Avg of the first measure,
    then label), each column's best competing row marked."""
    for row, name in zip(
        rows,
        unique_names(
            [r.name or r.label for r in rows], [digest([r.ranker, r.params, r.label]) for r in rows]
        ),
        strict=True,
    ):
        row.name = name
    ordered = sorted(rows, key=lambda r: (-np.nan_to_num(r.average(measures[0]), nan=-1), r.label))
    board = Leaderboard(ds, list(splits.values()), ordered, stale, tuple(measures))
    board.best = best_of(board, board.competing_rows)
    return board


def best_of(board: Leaderboard, rows: Sequence[Row]) -> dict[tuple[str | None, Measure], str]:
    """Per column (split or None for Avg, measure), the label of the best of ``rows`` with a
    value there (ties: the larger label)."""
    best: dict[tuple[str | None, Measure], str] = {}
    for split in [s.name for s in board.splits] + [None]:
        for measure in board.measures:
            candidates = [(r.value(split, measure), r.label) for r in rows]
            candidates = [c for c in candidates if np.isfinite(c[0])]
            if candidates:
                best[(split, measure)] = max(candidates, key=lambda c: (c[0], c[1]))[1]
    return best
