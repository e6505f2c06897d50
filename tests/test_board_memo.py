"""What makes an unchanged `sourcesum leaderboard` fast: the memoised tie reports and plot, and
the plot's axis for measures other than the paper's (on the synthetic synthnews board)."""

from __future__ import annotations

import dataclasses
import os

import pytest
from sourcesum.board import build_view, collect
from sourcesum.board import statistics as board_statistics
from sourcesum.board.statistics import TIES_VERSION, cached_tie_report
from sourcesum.data import dataset, load_split
from sourcesum.evaluation.measures import AP, NDCG, parse_measure
from sourcesum.evaluation.ties import tie_report
from sourcesum.outputs import plot
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_splits
from sourcesum.stats.cache import StatsCache
from sourcesum.store.stores import ScoreStore


@pytest.fixture(autouse=True)
def cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """lead and random on synthnews's four board splits, in a store of their own (read-only here)."""
    store = ScoreStore(tmp_path_factory.mktemp("scores"))
    splits = [load_split(name) for name in dataset("synthnews").board_splits()]
    for name in ("lead", "random"):
        run_splits(create_ranker(name), splits, store, progress=False)
    return store


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


# -- the memo of verified entries and evaluations (sourcesum.util.memo) ---------------------------


def _only_entry(root):
    (path,) = sorted((root / "lead").glob("synth_alpha_sys.*.json"))
    return path


def test_an_unchanged_entry_is_read_from_the_memo_and_a_changed_one_is_verified(tmp_path, monkeypatch):
    from sourcesum import store as store_module
    from sourcesum.errors import ScoreFileError

    store = ScoreStore(tmp_path / "scores")
    split = load_split("synth_alpha_sys")
    run_splits(create_ranker("lead"), [split], store, progress=False)
    path = _only_entry(store.root)
    first = store_module.read_entry_memoised(path)
    parsed = []
    monkeypatch.setattr(store_module, "read_entry", lambda p: parsed.append(p) or None)
    again = store_module.read_entry_memoised(path)
    assert parsed == [] and again.scores == first.scores
    assert again.scores_checksum() == first.scores_checksum() and again.verified is not None
    monkeypatch.undo()
    # edit one score and put the modification time back: the change time still moves
    stat = path.stat()
    text = path.read_text(encoding="utf-8")
    pair = next(iter(first.scores))
    old = ", ".join(map(repr, first.scores[pair]))
    assert old in text
    path.write_text(text.replace(old, ", ".join(["9.0"] * len(first.scores[pair])), 1), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(ScoreFileError, match="scores_sha256"):
        store_module.read_entry_memoised(path)


def test_a_memoised_evaluation_equals_the_evaluation_and_follows_the_scores(store, monkeypatch):
    from sourcesum import evaluation
    from sourcesum.store.entry import scores_sha256

    split = load_split("synth_alpha_sys")
    measures = [NDCG, AP, parse_measure("nDCG(gain=binary)")]
    scores = {p.id: [float(-i) for i in range(p.n_sentences)] for p in split}
    direct = evaluation.evaluate_split(split, scores, "x", measures)
    cold = evaluation.memoised_evaluation(split, scores, scores_sha256(scores), "x", measures)
    monkeypatch.setattr(evaluation, "evaluate_split", lambda *a, **k: pytest.fail("not memoised"))
    warm = evaluation.memoised_evaluation(split, scores, scores_sha256(scores), "x", measures)
    for got in (cold, warm):
        assert got.per_pair.equals(direct.per_pair) and got.measures == measures
        assert got.reasons == direct.reasons
    monkeypatch.undo()
    flipped = {pid: row[::-1] for pid, row in scores.items()}
    other = evaluation.memoised_evaluation(split, flipped, scores_sha256(flipped), "x", measures)
    assert other.per_pair.equals(evaluation.evaluate_split(split, flipped, "x", measures).per_pair)
    assert not other.per_pair.equals(direct.per_pair)


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
