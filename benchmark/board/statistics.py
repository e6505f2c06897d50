"""The board's statistics: CIs, significance against the best and against ``lead``, tie
reports and the human-agreement table (see :mod:`sourcesum.stats.bootstrap` for the bootstrap and
:mod:`sourcesum.stats.significance` for the tests and their decision rule).

* Every cell gets a 95% percentile bootstrap CI (10,000 resamples, seed 0) that **resamples
  clusters** (``Split.clusters``: SourceSum's documents; on CNN/DM several pairs share one, on
  XSum every pair has its own, so this equals resampling pairs).
* In each column (split columns and Avg), every competing row is compared with the column's
  best by a paired randomization test (cluster-level sign flips), decided with Holm across the
  rows of that column: *not significant* means "not significantly worse than the best"; a
  test that the Monte Carlo error leaves undecided at the cap is reported as undecided. In the
  Avg column the statistic is the mean of the split means and a cluster shared by splits
  flips in all of them together. Every competing row is also tested against ``lead`` in each
  split column (same test, Holm across the rows compared with ``lead`` in that column).
* The Avg CI is the percentile interval of the mean of the board splits' bootstrap means,
  resample by resample; every split is resampled from the same seed, so splits that share
  their clusters (SourceSum: the two splits of a corpus) draw the same clusters in each
  resample.

Every interval, batch of sign-flip counts and tie report is memoised
(:class:`~sourcesum.stats.cache.StatsCache`) under the sha256 of its exact inputs; intervals
missing are computed in one batch per kind (:func:`~sourcesum.stats.cache.memoised`; batched
results are bit-identical to one call per vector); Holm and the decisions are recomputed each
time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sourcesum import stats
from sourcesum.board.model import BoardStats, HumanAgreement, Leaderboard, Row, RowStats
from sourcesum.data import Split
from sourcesum.evaluation.human import HUMAN_LABEL, agreement_per_pair, coverage
from sourcesum.evaluation.measures import Measure
from sourcesum.evaluation.ties import tie_report
from sourcesum.stats.cache import INTERVAL, SIGN_FLIP_BATCHES, StatsCache, memoised, stats_key
from sourcesum.stats.significance import (
    Marked,
    average_contributions,
    cluster_contributions,
    decide_family,
    seed_for,
)
from sourcesum.store.entry import ScoreEntry
from sourcesum.util.hashing import canonical_json

TIES_VERSION = "1"
"""Bump when :func:`sourcesum.evaluation.ties.tie_report` changes what it computes."""


def resampling_clusters(split: Split) -> list[str]:
    """The resampling unit of each pair of ``split`` (its cluster; SourceSum: its document)."""
    return list(split.clusters)


def add_all_statistics(
    board: Leaderboard,
    resamples: int = stats.DEFAULT_RESAMPLES,
    cache: StatsCache | None = None,
    seed: int = stats.DEFAULT_SEED,
) -> BoardStats:
    """The statistics a rendered board shows besides its rows' evaluations: tie reports, the
    human-agreement table (datasets with per-annotator votes), CIs and significance marks
    (``seed`` seeds the bootstrap and is mixed into every test's own seed)."""
    cache = StatsCache.default() if cache is None else cache
    out = BoardStats()
    splits = {s.name: s for s in board.splits}
    for row in board.rows:
        row_stats = out.rows.setdefault(row.label, RowStats())
        for name, entry in row.entries.items():
            row_stats.ties[name] = cached_tie_report(splits[name], entry, row, board.measures, cache)
    out.human = human_agreement(board) if board.dataset.human_agreement else None
    add_statistics(board, out, resamples, seed, cache)
    return out


def cached_tie_report(
    split: Split, entry: ScoreEntry, row: Row, measures: Sequence[Measure], cache: StatsCache
) -> dict[str, Any]:
    """:func:`~sourcesum.evaluation.ties.tie_report` of a row's entry, memoised in ``cache`` under the
    sha256 of the split (name, data checksum, pair ids), the measures and the entry's scores
    (their checksum, :meth:`~sourcesum.store.entry.ScoreEntry.scores_checksum`)."""
    name = f"ties/{TIES_VERSION}|{split.name}|{split.sha256}|{'|'.join(m.name for m in measures)}"
    key = stats_key(f"{name}|{entry.scores_checksum()}", 0, 0, [], [[p.id for p in split]])
    report: dict[str, Any] = cache.get(
        key,
        lambda: tie_report(split, entry.scores, row.label, measures, evaluation=row.evaluations[split.name]),
        lambda value: is_tie_report(value, measures),
    )
    return report


def is_tie_report(value: Any, measures: Sequence[Measure]) -> bool:
    """The shape :func:`~sourcesum.evaluation.ties.tie_report` returns: two shares in [0, 1] and, per
    measure, each tie rule's mean (a number or null, for an undefined mean)."""

    def share(x: Any) -> bool:
        return isinstance(x, float) and 0.0 <= x <= 1.0

    if (
        not isinstance(value, dict)
        or not share(value.get("pairs_with_ties"))
        or not share(value.get("sentences_tied"))
    ):
        return False
    for measure in measures:
        rules = value.get(measure.name)
        if not isinstance(rules, dict) or not rules:
            return False
        if not all(v is None or (isinstance(v, float) and not isinstance(v, bool)) for v in rules.values()):
            return False
    return True


def human_measures(measures: Sequence[Measure]) -> tuple[Measure, ...]:
    """The board's measures, each followed by its tie expectation when that differs (AP ->
    AP(ties=expected)): the human's scores are 0/1, so the tie rule matters most there."""
    out: list[Measure] = []
    for measure in measures:
        for m in (measure, measure.expectation):
            if m is not None and m not in out:
                out.append(m)
    return tuple(out)


def memoised_agreement(
    split: Split, entry: ScoreEntry, measures: Sequence[Measure], label: str
) -> pd.DataFrame:
    """:func:`~sourcesum.evaluation.human.agreement_per_pair` of an entry's scores, from the memo
    (:mod:`sourcesum.util.memo`) when the same scores (their sha256) met the same split, measures and
    code before."""
    from sourcesum.evaluation.evaluate import evaluation_code, frame_of_record, frame_record
    from sourcesum.util import memo

    parts = [
        evaluation_code(split, measures, extra=("sourcesum.evaluation.human",)),
        entry.scores_checksum(),
        split.name,
        split.sha256,
        [m.name for m in measures],
    ]
    names = [m.name for m in measures]
    return memo.memoised(
        "agreement",
        parts,
        lambda: agreement_per_pair(split, entry.scores, measures, source=label),
        lambda frame: frame_record(frame, names),
        lambda record: frame_of_record(record, names, [p.id for p in split]),
    )


def human_agreement(board: Leaderboard) -> HumanAgreement:
    """Per-pair agreement with the held-out references of the human and every competing row."""
    measures = human_measures(board.measures)
    table = HumanAgreement(measures=measures)
    for split in board.splits:
        table.coverage[split.name] = coverage(split, measures)
        table.per_pair[(HUMAN_LABEL, split.name)] = agreement_per_pair(split, None, measures)
        for row in board.competing_rows:
            entry = row.entries.get(split.name)
            if entry is not None:
                table.per_pair[(row.label, split.name)] = memoised_agreement(
                    split, entry, measures, row.label
                )
    table.labels = [HUMAN_LABEL] + [r.label for r in board.competing_rows]
    return table


def intervals(
    vectors: Sequence[np.ndarray], groups: list[str], cache: StatsCache, resamples: int, seed: int
) -> list[tuple[float, float]]:
    """The percentile bootstrap CI of each vector's mean (memoised, missing ones batched)."""
    keys = [stats_key("ci", resamples, seed, [v], [groups]) for v in vectors]

    def compute(missing: list[int]) -> list[list[float]]:
        means = stats.bootstrap_means_each([vectors[i] for i in missing], resamples, seed, groups)
        return [list(stats.percentile_interval(m)) for m in means]

    return [(low, high) for low, high in memoised(cache, keys, compute, INTERVAL)]


def row_identity(row: Row) -> str:
    """What a row's tests are seeded by: its ranker and canonical parameters (never its label)."""
    return f"{row.ranker}|{canonical_json(row.params)}"


def tested_family(
    kind: str,
    identities: Sequence[tuple[str, ...]],
    contributions: Sequence[np.ndarray],
    cache: StatsCache,
    seed: int = stats.DEFAULT_SEED,
) -> list[Marked]:
    """The decision rule of :mod:`sourcesum.stats.significance` on one family of tests. Test ``i`` is
    named by ``identities[i]`` (the two rows compared, the column, the measure) and draws from
    ``seed_for(seed, kind, *identities[i])``: adding a test to the family changes no other
    test's draws. Its batches of sign patterns are memoised in ``cache`` under the sha256 of
    its contributions and seed."""
    seeds = [seed_for(str(seed), kind, *identity) for identity in identities]
    keys = [
        stats_key(f"signflip/2|{kind}", 0, test, [c], [])
        for test, c in zip(seeds, contributions, strict=True)
    ]

    def memo(i: int) -> list[int]:
        memoised_counts = cache.lookup(keys[i], SIGN_FLIP_BATCHES)
        return [int(x) for x in memoised_counts] if memoised_counts else []

    def remember(i: int, batches: list[int]) -> None:
        cache.put(keys[i], list(batches))

    return decide_family(contributions, seeds, memo, remember)


def add_statistics(
    board: Leaderboard,
    out: BoardStats,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    cache: StatsCache | None = None,
) -> None:
    """Fill ``out`` with every row's CIs; for competing rows, Holm-adjusted p-values against the
    column's best and against ``lead``; and the human-agreement table's CIs and tests."""
    cache = StatsCache.default() if cache is None else cache
    groups = {split.name: resampling_clusters(split) for split in board.splits}
    for measure in board.measures:
        _row_intervals(board, out, measure, cache, resamples, seed, groups)
        for split in board.splits:
            best_label = board.best.get((split.name, measure))
            if best_label is not None:
                best = board.row(best_label)
                for row, marked in _tests_against(
                    best, "best", board, split.name, measure, cache, groups, seed
                ):
                    out.rows.setdefault(row.label, RowStats()).vs_best[(split.name, measure)] = marked
            lead = board.lead
            if lead is not None and split.name in lead.evaluations:
                for row, marked in _tests_against(
                    lead, "lead", board, split.name, measure, cache, groups, seed
                ):
                    out.rows.setdefault(row.label, RowStats()).vs_lead[(split.name, measure)] = marked
        best_label = board.best.get((None, measure))
        if best_label is not None:
            best = board.row(best_label)
            others = [
                r
                for r in board.competing_rows
                if r is not best and all(s.name in r.evaluations for s in board.splits)
            ]
            contributions = [
                average_contributions(
                    [
                        (
                            r.evaluations[s.name].values(measure) - best.evaluations[s.name].values(measure),
                            groups[s.name],
                        )
                        for s in board.splits
                    ]
                )
                for r in others
            ]
            family = tested_family(
                "best",
                [(row_identity(r), row_identity(best), "Avg", measure.name) for r in others],
                contributions,
                cache,
                seed,
            )
            for row, marked in zip(others, family, strict=True):
                out.rows.setdefault(row.label, RowStats()).vs_best[(None, measure)] = marked
    if out.human is not None:
        identities = {r.label: row_identity(r) for r in board.competing_rows}
        _human_statistics(out.human, board.splits, cache, resamples, seed, groups, identities)
    cache.save()


def _row_intervals(
    board: Leaderboard,
    out: BoardStats,
    measure: Measure,
    cache: StatsCache,
    resamples: int,
    seed: int,
    groups: dict[str, list[str]],
) -> None:
    """Split and Avg CIs of every row for one measure (see the module docstring for the Avg)."""
    for split in board.splits:
        rows = [r for r in board.rows if split.name in r.evaluations]
        vectors = [r.evaluations[split.name].values(measure) for r in rows]
        for row, ci in zip(rows, intervals(vectors, groups[split.name], cache, resamples, seed), strict=True):
            out.rows.setdefault(row.label, RowStats()).ci[(split.name, measure)] = ci
    complete = [r for r in board.rows if all(s.name in r.evaluations for s in board.splits)]
    per_row = [[r.evaluations[s.name].values(measure) for s in board.splits] for r in complete]
    for row, ci in zip(
        complete, average_intervals(per_row, board, cache, resamples, seed, groups), strict=True
    ):
        out.rows.setdefault(row.label, RowStats()).ci[(None, measure)] = ci


def average_intervals(
    vectors: Sequence[Sequence[np.ndarray]],
    board: Leaderboard,
    cache: StatsCache,
    resamples: int,
    seed: int,
    groups: dict[str, list[str]],
) -> list[tuple[float, float]]:
    """The Avg CI of each item of ``vectors`` (one per-pair vector per board split): the
    percentile interval of the mean over splits of the splits' bootstrap means, resample by
    resample (module docstring); memoised, missing ones batched."""
    keys = [
        stats_key("avg_ci", resamples, seed, list(per_split), [groups[s.name] for s in board.splits])
        for per_split in vectors
    ]

    def compute(missing: list[int]) -> list[list[float]]:
        per_split = [
            stats.bootstrap_means_each([vectors[i][j] for i in missing], resamples, seed, groups[s.name])
            for j, s in enumerate(board.splits)
        ]
        return [
            list(stats.percentile_interval(np.mean([means[k] for means in per_split], axis=0)))
            for k in range(len(missing))
        ]

    return [(low, high) for low, high in memoised(cache, keys, compute, INTERVAL)]


def difference_intervals(
    pairs: Sequence[tuple[Row, Row]],
    board: Leaderboard,
    split: str | None,
    measure: Measure,
    cache: StatsCache,
    resamples: int,
    seed: int,
    groups: dict[str, list[str]],
) -> list[tuple[float, float, float]]:
    """``(mean difference, CI low, CI high)`` of row ``a`` minus row ``b`` for each pair: in a
    split, the bootstrap CI of the mean per-pair difference; in the Avg column (``split``
    None), :func:`average_intervals` of the per-split differences."""
    if split is not None:
        vectors = [
            a.evaluations[split].values(measure) - b.evaluations[split].values(measure) for a, b in pairs
        ]
        cis = intervals(vectors, groups[split], cache, resamples, seed)
    else:
        per_row = [
            [
                a.evaluations[s.name].values(measure) - b.evaluations[s.name].values(measure)
                for s in board.splits
            ]
            for a, b in pairs
        ]
        cis = average_intervals(per_row, board, cache, resamples, seed, groups)
    return [
        (a.value(split, measure) - b.value(split, measure), low, high)
        for (a, b), (low, high) in zip(pairs, cis, strict=True)
    ]


def _tests_against(
    base: Row,
    kind: str,
    board: Leaderboard,
    split: str,
    measure: Measure,
    cache: StatsCache,
    groups: dict[str, list[str]],
    seed: int,
) -> list[tuple[Row, Marked]]:
    """Two-sided paired randomization tests against ``base`` of every other competing row with
    values on ``split``, decided together under Holm (:func:`tested_family`)."""
    others = [r for r in board.competing_rows if r is not base and split in r.evaluations]
    reference = base.evaluations[split].values(measure)
    contributions = [
        cluster_contributions(r.evaluations[split].values(measure) - reference, groups[split]) for r in others
    ]
    family = tested_family(
        kind,
        [(row_identity(r), row_identity(base), split, measure.name) for r in others],
        contributions,
        cache,
        seed,
    )
    return list(zip(others, family, strict=True))


def _human_statistics(
    table: HumanAgreement,
    splits: Sequence[Split],
    cache: StatsCache,
    resamples: int,
    seed: int,
    groups: dict[str, list[str]],
    identities: dict[str, str],
) -> None:
    """CIs of every agreement cell; each row tested against the human (two-sided paired
    randomization test over the pairs both cover, Holm across the rows of the column)."""
    for split in splits:
        labels = [label for label in table.labels if (label, split.name) in table.per_pair]
        for measure in table.measures:
            vectors = [table.per_pair[(label, split.name)][measure.name].to_numpy() for label in labels]
            for label, ci in zip(
                labels, intervals(vectors, groups[split.name], cache, resamples, seed), strict=True
            ):
                table.ci[(label, split.name, measure)] = ci
            contributions = [cluster_contributions(v - vectors[0], groups[split.name]) for v in vectors[1:]]
            family = tested_family(
                "human",
                [(identities[label], HUMAN_LABEL, split.name, measure.name) for label in labels[1:]],
                contributions,
                cache,
                seed,
            )
            for label, marked in zip(labels[1:], family, strict=True):
                table.vs_human[(label, split.name, measure)] = marked
