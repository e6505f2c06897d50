"""The held-out test: the declared rows on splits outside the board, as a board of their own.

A held-out board has the main board's statistics (CIs, bold best, †/? against the column's best,
tests against ``lead``), and two comparisons per row and column, each a mean difference with its
95% document-level bootstrap CI and a sign-flip test decided by the rule of
:mod:`sourcesum.significance` (Holm across the rows compared in the column):

* against ``lead``;
* against the column's **best zero-shot row** (the best competing row trained on no label).

Avg columns: the difference of the Avg, with the CI of the mean of the split differences'
bootstrap means (every split resampled from the same seed, so splits sharing documents draw
them together), and no test. No human-agreement table and no tie report are computed.
"""

from __future__ import annotations

from collections.abc import Sequence

from sourcesum import stats
from sourcesum.board.model import Leaderboard, Row
from sourcesum.data import Dataset, Split
from sourcesum.measures import Measure
from sourcesum.significance import cluster_contributions
from sourcesum.statscache import StatsCache

AGAINST = ("lead", "zero-shot")


def heldout_board(
    ds: Dataset,
    splits: dict[str, Split],
    rows: list[Row],
    measures: Sequence[Measure],
    with_stats: bool = True,
    resamples: int = stats.DEFAULT_RESAMPLES,
) -> Leaderboard:
    """The held-out board of ``rows`` on ``splits`` (module docstring)."""
    from sourcesum.board.collect import finish

    board = finish(ds, splits, rows, [], measures, with_stats=False, resamples=resamples)
    mark_zero_shot_best(board)
    if with_stats:
        add_heldout_statistics(board, resamples)
    return board


def mark_zero_shot_best(board: Leaderboard) -> None:
    """``board.zero_shot_best[(split or None, measure)]``: the best zero-shot competing row."""
    from sourcesum.board.collect import best_of

    board.zero_shot_best = best_of(board, board.zero_shot_rows)


def add_heldout_statistics(
    board: Leaderboard,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    cache: StatsCache | None = None,
) -> None:
    """The main board's statistics, then each row against ``lead`` and against the column's best
    zero-shot row: differences with CIs, and (split columns) tests."""
    from sourcesum.board.statistics import (
        add_statistics,
        difference_intervals,
        resampling_clusters,
        row_identity,
        tested_family,
    )

    cache = StatsCache.default() if cache is None else cache
    add_statistics(board, resamples, seed, cache)
    groups = {s.name: resampling_clusters(s) for s in board.splits}
    for measure in board.measures:
        for against in AGAINST:
            for split in [s.name for s in board.splits] + [None]:
                base = _base(board, against, split, measure)
                if base is None:
                    continue
                others = [r for r in board.competing_rows if r is not base and _complete(r, board, split)]
                intervals = difference_intervals(
                    [(r, base) for r in others], board, split, measure, cache, resamples, seed, groups
                )
                for row, interval in zip(others, intervals, strict=True):
                    row.differences[(against, split, measure)] = interval
                if split is None or against == "lead":  # against lead: the main board's test
                    continue
                family = tested_family(
                    "heldout-zero-shot",
                    [(row_identity(r), row_identity(base), split, measure.name) for r in others],
                    [
                        cluster_contributions(
                            r.evaluations[split].values(measure) - base.evaluations[split].values(measure),
                            groups[split],
                        )
                        for r in others
                    ],
                    cache,
                    seed,
                )
                for row, marked in zip(others, family, strict=True):
                    row.vs_zero_shot[(split, measure)] = marked
    cache.save()


def _base(board: Leaderboard, against: str, split: str | None, measure: Measure) -> Row | None:
    if against == "lead":
        return board.lead
    label = board.zero_shot_best.get((split, measure))
    return board.row(label) if label is not None else None


def _complete(row: Row, board: Leaderboard, split: str | None) -> bool:
    return all(s.name in row.evaluations for s in board.splits) if split is None else split in row.evaluations
