"""The board: declaration -> rows collected from the store -> statistics -> view-model
(:mod:`~sourcesum.board.pipeline` reads them in that order).

* :mod:`~sourcesum.board.declaration`: parse ``leaderboard.toml``;
* :mod:`~sourcesum.board.collect`: rows from store entries and published outputs;
* :mod:`~sourcesum.board.rows`: a board from its rows (names, order, each column's best);
* :mod:`~sourcesum.board.names`: display names;
* :mod:`~sourcesum.board.statistics`: CIs, tests, tie reports, human agreement (memoised),
  returned as :class:`~sourcesum.board.model.BoardStats`;
* :mod:`~sourcesum.board.heldout`: the held-out test's board and its comparisons;
* :mod:`~sourcesum.board.model`: :class:`Row`, :class:`Leaderboard`, :class:`BoardStats`;
* :mod:`~sourcesum.board.view`: the view-model every output renders;
* :mod:`~sourcesum.board.prose`: the sentences the outputs share;
* :mod:`~sourcesum.board.compare`: paired tests between rows (``sourcesum compare``);
* :mod:`~sourcesum.board.explorer`: the per-pair data of the site's explorer;
* :mod:`~sourcesum.board.citation`: what to cite (``sourcesum cite``).
"""

from sourcesum.board.collect import IncompleteLeaderboard, collect, collect_declared, is_current
from sourcesum.board.declaration import Declaration, DeclaredRow, read_declaration
from sourcesum.board.model import LEADERBOARD_MEASURES, BoardStats, Leaderboard, Row
from sourcesum.board.pipeline import board_statistics, declared_view, view_of
from sourcesum.board.view import BoardView, build_view

__all__ = [
    "LEADERBOARD_MEASURES",
    "BoardStats",
    "BoardView",
    "Declaration",
    "DeclaredRow",
    "IncompleteLeaderboard",
    "Leaderboard",
    "Row",
    "board_statistics",
    "build_view",
    "collect",
    "collect_declared",
    "declared_view",
    "is_current",
    "read_declaration",
    "view_of",
]
