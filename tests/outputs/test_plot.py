"""The leaderboard plot (sourcesum.outputs.plot): drawn once per distinct board (memoised), and
its axis for measures other than the paper's (on the synthetic synthnews board)."""

from __future__ import annotations

import pytest
from sourcesum.board import build_view, collect
from sourcesum.data import dataset
from sourcesum.evaluation.measures import AP, NDCG, parse_measure
from sourcesum.outputs import plot
from support.store import fill


@pytest.fixture(autouse=True)
def cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """lead and random on synthnews's four board splits, in a store of their own (read-only here)."""
    return fill(tmp_path_factory.mktemp("scores"), ("lead", "random"))


def board_of(store, **kwargs):
    return collect(store, published=False, dataset_name="synthnews", **kwargs)


def test_the_plot_is_drawn_once_per_distinct_board(store, monkeypatch):
    view = build_view(board_of(store, measures=(NDCG, AP)))
    drawn = []

    def fake(n: int) -> bytes:  # what the memo check accepts as one of our plots
        return b"\x89PNG" + plot.PLOT_MARK.encode() + b"-%d" % n + plot.PNG_END

    monkeypatch.setattr(plot, "draw_png", lambda v: drawn.append(v) or fake(len(drawn)))
    assert plot.render_png(view) == fake(1)
    assert plot.render_png(view) == fake(1) and len(drawn) == 1
    again = build_view(board_of(store, measures=(NDCG, AP)))  # the same board, collected anew
    assert plot.plot_parts(again) == plot.plot_parts(view) and plot.render_png(again) == fake(1)
    other = build_view(board_of(store, measures=(NDCG,)))
    assert plot.plot_parts(other) != plot.plot_parts(view)
    assert plot.render_png(other) == fake(2)
    inputs = plot.plot_inputs(view)
    assert inputs["labels"] == ["lead", "random"] and inputs["measures"] == [["nDCG", "NDCG"], ["AP", "MAP"]]
    assert [name for name, _ in inputs["splits"]] == dataset("synthnews").board_splits()


def test_the_x_axis_reaches_measures_below_the_default(store):
    view = build_view(board_of(store, measures=(parse_measure("Spearman"),)))
    board = board_of(store, measures=(parse_measure("Spearman"),))
    lowest = min(r.mean(s.name, board.measures[0]) for r in board.rows for s in board.splits)
    assert lowest < plot.X_MIN  # random's rank correlation with the votes is low
    assert plot.x_range(view) == (pytest.approx(lowest - 0.02), 1.02)
    default = build_view(board_of(store))
    assert plot.x_range(default) == (plot.X_MIN, 1.02)  # lead's and random's NDCG and MAP stay above 0.27
