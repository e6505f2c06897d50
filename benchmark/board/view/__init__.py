"""The board's view-model: what every output shows, computed once from a collected board and its
statistics.

:func:`build_view` turns a board (rows, evaluations) and its
:class:`~sourcesum.board.model.BoardStats` into plain values: the numeric columns, one
:class:`Cell` per row and column (value, display text, mark, CI), the rows grouped by kind, the
comparisons with ``lead``, the human-agreement table, the Ties table, the notes, the held-out
test, the task boards and the transfer summary. Markdown, LaTeX, JSON, CSV, the plot and the
site (:mod:`sourcesum.outputs`) are functions of this view; none of them reads a store, a split
or a ranker class, and the view itself imports no ranker (what it states about a ranker was
collected with the row: :class:`~sourcesum.board.model.RankerFacts`). Everything is a pure
function of its inputs (no dates or timings), so rendering an unchanged board is
byte-identical.

* :mod:`~sourcesum.board.view.types`: the view-model's types;
* :mod:`~sourcesum.board.view.cells`: columns, cells and marks, ``lead``, notes, labels;
* :mod:`~sourcesum.board.view.ties`: the Ties table;
* :mod:`~sourcesum.board.view.human`: the human-agreement section;
* :mod:`~sourcesum.board.view.heldout`: held-out differences;
* :mod:`~sourcesum.board.view.transfer`: the transfer summary;
* :mod:`~sourcesum.board.view.build`: :func:`build_view`.
"""

from sourcesum.board.view.build import build_view, heldout_view
from sourcesum.board.view.types import (
    GROUPS,
    BoardView,
    Cell,
    Column,
    DifferenceRow,
    HeldOutView,
    LeadComparison,
    RowView,
    SplitLabels,
    TaskView,
    TieColumn,
    TieRow,
    TransferView,
)

__all__ = [
    "GROUPS",
    "BoardView",
    "Cell",
    "Column",
    "DifferenceRow",
    "HeldOutView",
    "LeadComparison",
    "RowView",
    "SplitLabels",
    "TaskView",
    "TieColumn",
    "TieRow",
    "TransferView",
    "build_view",
    "heldout_view",
]
