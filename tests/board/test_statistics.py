"""The board's statistics (sourcesum.board.statistics) as an unchanged `sourcesum leaderboard`
reads them: tie reports and human agreement memoised by their exact inputs (on the synthetic
synthnews board)."""

from __future__ import annotations

import dataclasses

import pytest
from sourcesum.board import collect
from sourcesum.board import statistics as board_statistics
from sourcesum.board.statistics import TIES_VERSION, cached_tie_report
from sourcesum.data import load_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.evaluation.ties import tie_report
from sourcesum.stats.cache import StatsCache
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


def test_tie_reports_are_memoised_by_their_exact_inputs(store, monkeypatch):
    board = board_of(store)
    row, split = board.row("random"), board.splits[0]
    entry = row.entries[split.name]
    cache = StatsCache(persist=False)
    first = cached_tie_report(split, entry, row, board.measures, cache)
    assert first == tie_report(split, entry.scores, row.label, board.measures)
    assert TIES_VERSION  # part of every key: bumping it recomputes every report

    def fail(*args, **kwargs):
        raise AssertionError("recomputed")

    monkeypatch.setattr(board_statistics, "tie_report", fail)
    assert cached_tie_report(split, entry, row, board.measures, cache) == first
    first_id = split.pairs[0].id
    other_scores = {**entry.scores, first_id: [0.0] * len(entry.scores[first_id])}
    with pytest.raises(AssertionError, match="recomputed"):  # other scores: another key
        cached_tie_report(split, dataclasses.replace(entry, scores=other_scores), row, board.measures, cache)
    with pytest.raises(AssertionError, match="recomputed"):  # other measures: another key
        cached_tie_report(split, entry, row, (NDCG,), cache)
    other = board.splits[1]  # another split: another key
    with pytest.raises(AssertionError, match="recomputed"):
        cached_tie_report(other, row.entries[other.name], row, board.measures, cache)


def test_memoised_human_agreement_equals_the_agreement(monkeypatch):
    from sourcesum.board import statistics as board_stats
    from sourcesum.evaluation.human import agreement_per_pair
    from sourcesum.store.entry import ScoreEntry

    split = load_split("synth_alpha_sys")
    measures = board_stats.human_measures([NDCG, AP])
    scores = {p.id: [float(-i) for i in range(p.n_sentences)] for p in split}
    entry = ScoreEntry("lead", "1", {}, "lead", split.name, split.sha256, len(split), scores)
    direct = agreement_per_pair(split, scores, measures)
    cold = board_stats.memoised_agreement(split, entry, measures, "lead")
    monkeypatch.setattr(board_stats, "agreement_per_pair", lambda *a, **k: pytest.fail("not memoised"))
    warm = board_stats.memoised_agreement(split, entry, measures, "lead")
    assert cold.equals(direct) and warm.equals(direct)
