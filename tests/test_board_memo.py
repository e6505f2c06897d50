"""What makes an unchanged `sourcesum leaderboard` fast: the memoised tie reports and plot, and
the plot's axis for measures other than the paper's."""

from __future__ import annotations

import pytest
from sourcesum import leaderboard, plot
from sourcesum.data import load_split, main_splits
from sourcesum.leaderboard import cached_tie_report, collect
from sourcesum.measures import AP, NDCG, parse_measure
from sourcesum.rankers import create_ranker
from sourcesum.runner import run_splits
from sourcesum.statscache import StatsCache
from sourcesum.store import ScoreStore
from sourcesum.ties import tie_report


@pytest.fixture(autouse=True)
def cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """lead and random on the four main splits, in a store of their own (read-only here)."""
    store = ScoreStore(tmp_path_factory.mktemp("scores"))
    splits = [load_split(name) for name in main_splits()]
    for name in ("lead", "random"):
        run_splits(create_ranker(name), splits, store, progress=False)
    return store


def test_tie_reports_are_memoised_by_their_exact_inputs(store, monkeypatch):
    board = collect(store, with_stats=False, published=False)
    row, split = board.row("random"), board.splits[0]
    entry = row.entries[split.name]
    cache = StatsCache(None)
    first = cached_tie_report(split, entry, row, board.measures, cache)
    assert first == tie_report(split, entry.scores, row.label, board.measures)

    def fail(*args, **kwargs):
        raise AssertionError("recomputed")

    monkeypatch.setattr(leaderboard, "tie_report", fail)
    assert cached_tie_report(split, entry, row, board.measures, cache) == first
    changed = entry.scores[split.pairs[0].id]
    entry.scores[split.pairs[0].id] = [0.0] * len(changed)  # other scores: another key
    with pytest.raises(AssertionError, match="recomputed"):
        cached_tie_report(split, entry, row, board.measures, cache)
    entry.scores[split.pairs[0].id] = changed
    with pytest.raises(AssertionError, match="recomputed"):  # other measures: another key
        cached_tie_report(split, entry, row, (NDCG,), cache)


def test_the_plot_is_drawn_once_per_distinct_board(store, monkeypatch):
    board = collect(store, with_stats=False, published=False, measures=(NDCG, AP))
    drawn = []
    monkeypatch.setattr(plot, "draw_png", lambda b: drawn.append(b) or b"png-%d" % len(drawn))
    assert plot.render_png(board) == b"png-1"
    assert plot.render_png(board) == b"png-1" and len(drawn) == 1
    other = collect(store, with_stats=False, published=False, measures=(NDCG,))
    assert plot.plot_key(other) != plot.plot_key(board)
    assert plot.render_png(other) == b"png-2"


def test_the_x_axis_reaches_measures_below_the_default(store):
    board = collect(store, with_stats=False, published=False, measures=(parse_measure("Spearman"),))
    lowest = min(r.mean(s.name, board.measures[0]) for r in board.rows for s in board.splits)
    assert lowest < plot.X_MIN  # random's rank correlation is near 0
    assert plot.x_range(board) == (pytest.approx(lowest - 0.02), 1.02)
    default = collect(store, with_stats=False, published=False)
    assert plot.x_range(default) == (plot.X_MIN, 1.02)  # lead and random stay above 0.27
