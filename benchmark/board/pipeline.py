"""The board in one reading, in order: declaration -> collect -> statistics -> view.

:func:`declared_view` is what ``sourcesum leaderboard`` and ``site`` render; :func:`view_of`
adds the statistics to any collected board (``--all``, ``compare``...)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sourcesum.board.collect import collect_declared
from sourcesum.board.declaration import read_declaration
from sourcesum.board.heldout import heldout_statistics
from sourcesum.board.model import LEADERBOARD_MEASURES, BoardStats, Leaderboard
from sourcesum.board.statistics import add_all_statistics
from sourcesum.board.view import BoardView, build_view
from sourcesum.evaluation.measures import Measure
from sourcesum.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from sourcesum.stats.cache import StatsCache
from sourcesum.store.stores import ScoreStore, StoreStack


def board_statistics(
    board: Leaderboard,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    cache: StatsCache | None = None,
) -> BoardStats:
    """The statistics of ``board``, its task boards and its held-out test (a value; the board is
    not changed)."""
    cache = StatsCache.default() if cache is None else cache
    out = add_all_statistics(board, resamples, cache, seed)
    out.tasks = [add_all_statistics(task, resamples, cache, seed) for task in board.tasks]
    if board.heldout is not None:
        out.heldout = heldout_statistics(board.heldout, resamples, seed, cache)
    return out


def view_of(board: Leaderboard, resamples: int = DEFAULT_RESAMPLES) -> BoardView:
    """The view of ``board`` with its statistics."""
    return build_view(board, board_statistics(board, resamples))


def declared_view(
    declaration: Path,
    store: ScoreStore | StoreStack,
    measures: Sequence[Measure] = LEADERBOARD_MEASURES,
    resamples: int = DEFAULT_RESAMPLES,
) -> tuple[Leaderboard, BoardView]:
    """The declared board of ``declaration`` from ``store``, and its view."""
    board = collect_declared(read_declaration(declaration), store, measures)
    return board, view_of(board, resamples)
