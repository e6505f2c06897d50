"""The held-out test: the declared rows on splits outside the board, as a board of their own.

A held-out board has the main board's statistics (CIs, bold best, †/? against the column's best,
tests against ``lead``), and two comparisons per row and column, each a mean difference with its
95% document-level bootstrap CI and a sign-flip test decided by the rule of
:mod:`sourcesum.stats.significance` (Holm across the rows compared in the column):

* against ``lead``;
* against the column's **best zero-shot row** (the best competing row trained on no label).

Avg columns: the difference of the Avg, with the CI of the mean of the split differences'
bootstrap means (every split resampled from the same seed, so splits sharing documents draw
them together), and no test. No human-agreement table and no tie report are computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sourcesum import stats
from sourcesum.board.model import BoardStats, Leaderboard, Row, RowStats
from sourcesum.board.rows import best_of, finish
from sourcesum.data import Dataset, Split
from sourcesum.evaluation.measures import Measure
from sourcesum.stats.cache import StatsCache
from sourcesum.stats.significance import cluster_contributions

AGAINST = ("lead", "zero-shot")


def heldout_board(
    ds: Dataset, splits: dict[str, Split], rows: list[Row], measures: Sequence[Measure]
) -> Leaderboard:
    """The held-out board of ``rows`` on ``splits`` (module docstring): ordered and named as any
    board, with each column's best zero-shot row marked."""
    board = finish(ds, splits, rows, [], measures)
    board.zero_shot_best = best_of(board, board.zero_shot_rows)
    return board


def heldout_statistics(
    board: Leaderboard,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    cache: StatsCache | None = None,
) -> BoardStats:
    """The main board's statistics (no tie report, no human table), then each row against
    ``lead`` and against the column's best zero-shot row: differences with CIs, and (split
    columns) tests."""
    from sourcesum.board.statistics import (
        add_statistics,
        difference_intervals,
        resampling_clusters,
        row_identity,
        tested_family,
    )

    cache = StatsCache.default() if cache is None else cache
    out = BoardStats()
    add_statistics(board, out, resamples, seed, cache)
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
                    out.rows.setdefault(row.label, RowStats()).differences[(against, split, measure)] = (
                        interval
                    )
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
                    out.rows.setdefault(row.label, RowStats()).vs_zero_shot[(split, measure)] = marked
    cache.save()
    return out


def _base(board: Leaderboard, against: str, split: str | None, measure: Measure) -> Row | None:
    if against == "lead":
        return board.lead
    label = board.zero_shot_best.get((split, measure))
    return board.row(label) if label is not None else None


def _complete(row: Row, board: Leaderboard, split: str | None) -> bool:
    return all(s.name in row.evaluations for s in board.splits) if split is None else split in row.evaluations


@dataclass(frozen=True)
class SharedDocuments:
    """How many of a held-out split's documents (and pairs) also appear in the main pairs of
    its corpus, for other summaries."""

    title: str
    documents: int
    shared_documents: int
    pairs: int
    shared_pairs: int


@dataclass(frozen=True)
class SameCorpusGap:
    """A same-corpus row minus its cross-corpus twin (same ranker and parameters but the
    protocol), mean per-pair difference of ``measure`` over the held-out pairs whose document
    is shared with main pairs, and over the others."""

    name: str
    measure: str
    shared: float
    shared_pairs: int
    new: float
    new_pairs: int


def main_documents(split: Split) -> set[str]:
    """The documents of the board splits of ``split``'s corpus."""
    from sourcesum.data import dataset, load_split

    ds = dataset(split.dataset)
    corpus = ds.split_spec(split.name).corpus
    return {
        p.document_key
        for name in ds.board_splits()
        if ds.split_spec(name).corpus == corpus
        for p in load_split(name)
    }


def shared_documents(board: Leaderboard) -> tuple[SharedDocuments, ...]:
    """:class:`SharedDocuments` of each held-out split that shares any document."""
    out = []
    for split in board.splits:
        main = main_documents(split)
        documents = {p.document_key for p in split}
        shared = documents & main
        if shared:
            pairs = sum(p.document_key in main for p in split)
            out.append(SharedDocuments(split.title, len(documents), len(shared), len(split), pairs))
    return tuple(out)


def same_corpus_gaps(board: Leaderboard) -> tuple[SameCorpusGap, ...]:
    """:class:`SameCorpusGap` of each same-corpus row with a cross-corpus twin, over the pairs of
    every held-out split that shares documents (the board's first measure)."""
    measure = board.measures[0]
    splits = [s for s in board.splits if main_documents(s) & {p.document_key for p in s}]
    out = []
    for row in board.rows:
        if row.params.get("protocol") != "same-corpus":
            continue
        twin_params = {**row.params, "protocol": "cross-corpus"}
        twins = [r for r in board.rows if r.ranker == row.ranker and r.params == twin_params]
        if not twins or not splits:
            continue
        shared: list[float] = []
        new: list[float] = []
        for split in splits:
            main = main_documents(split)
            diff = row.evaluations[split.name].values(measure) - twins[0].evaluations[split.name].values(
                measure
            )
            for pair, value in zip(split, diff, strict=True):
                if np.isfinite(value):
                    (shared if pair.document_key in main else new).append(float(value))
        out.append(
            SameCorpusGap(
                row.name or row.label,
                measure.display_name,
                float(np.mean(shared)) if shared else float("nan"),
                len(shared),
                float(np.mean(new)) if new else float("nan"),
                len(new),
            )
        )
    return tuple(out)
