"""The board: declaration -> rows collected from the store -> statistics -> view-model.

* :mod:`~sourcesum.board.declaration`: parse ``leaderboard.toml``;
* :mod:`~sourcesum.board.collect`: rows from store entries and published outputs;
* :mod:`~sourcesum.board.statistics`: CIs, tests, tie reports, human agreement (memoised);
* :mod:`~sourcesum.board.model`: :class:`Row`, :class:`Leaderboard`;
* :mod:`~sourcesum.board.view`: the view-model every output renders;
* :mod:`~sourcesum.board.prose`: the sentences the outputs share.
"""

from sourcesum.board.collect import IncompleteLeaderboard, collect, collect_declared, is_current
from sourcesum.board.declaration import Declaration, DeclaredRow, read_declaration
from sourcesum.board.model import LEADERBOARD_MEASURES, Leaderboard, Row
from sourcesum.board.view import BoardView, build_view

__all__ = [
    "LEADERBOARD_MEASURES",
    "BoardView",
    "Declaration",
    "DeclaredRow",
    "IncompleteLeaderboard",
    "Leaderboard",
    "Row",
    "build_view",
    "collect",
    "collect_declared",
    "is_current",
    "read_declaration",
]
