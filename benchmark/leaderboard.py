"""Collect the leaderboard from the score store, with statistics, ties and the human row.

A store entry counts when it is complete, was computed on the current data file (sha256), and,
for a ranker registered in this process, carries that ranker's current ``version``; anything
else is reported as stale and skipped. Nothing is recomputed here.

Statistics (see :mod:`sourcesum.stats`): every cell gets a 95% percentile bootstrap CI
(10,000 resamples, seed 0) that **resamples documents** (on CNN/DM several pairs share one; on
XSum every pair has its own, so this equals resampling pairs). In each split column, every
ranked row is compared with the column's best by a paired randomization test (document-level
sign flips), Holm-corrected across the rows of that column; rows with adjusted p >= 0.05 are
"not significantly worse than the best". The Avg columns' CI resamples each split
independently and averages the resampled means.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from sourcesum import stats
from sourcesum.data import Split, load_split, main_splits
from sourcesum.evaluation import Evaluation, evaluate
from sourcesum.human import HUMAN_LABEL, human_per_pair
from sourcesum.measures import AP, NDCG, Measure
from sourcesum.store import ScoreEntry, ScoreStore
from sourcesum.ties import tie_report
from sourcesum.rankers.base import RANKERS

LEADERBOARD_MEASURES = (NDCG, AP)
ALPHA = 0.05


@dataclass
class Row:
    """One ranker configuration (or reference) and its evaluation on each main split."""

    label: str
    ranker: str
    params: dict
    reference: bool
    entries: dict[str, ScoreEntry] = field(default_factory=dict)
    evaluations: dict[str, Evaluation] = field(default_factory=dict)
    ci: dict[tuple[str | None, Measure], tuple[float, float]] = field(default_factory=dict)
    p_vs_best: dict[tuple[str, Measure], float] = field(default_factory=dict)
    ties: dict[str, dict] = field(default_factory=dict)

    def mean(self, split: str, measure: Measure) -> float:
        evaluation = self.evaluations.get(split)
        return evaluation.mean(measure) if evaluation else float("nan")

    def average(self, measure: Measure) -> float:
        """Unweighted mean of the four split means (NaN unless all four are present)."""
        values = [self.mean(s, measure) for s in main_splits()]
        return float(np.mean(values)) if all(np.isfinite(values)) else float("nan")

    def value(self, split: str | None, measure: Measure) -> float:
        """The split mean, or the four-split average when ``split`` is None."""
        return self.average(measure) if split is None else self.mean(split, measure)

    def not_worse_than_best(self, split: str, measure: Measure) -> bool:
        return self.p_vs_best.get((split, measure), 0.0) >= ALPHA


@dataclass
class Leaderboard:
    splits: list[Split]
    rows: list[Row]
    stale: list[str]
    best: dict[tuple[str | None, Measure], str] = field(default_factory=dict)

    @property
    def ranked_rows(self) -> list[Row]:
        return [r for r in self.rows if not r.reference]

    @property
    def reference_rows(self) -> list[Row]:
        return [r for r in self.rows if r.reference]

    def row(self, name: str) -> Row:
        """The row labelled ``name``, else the only row of ranker ``name``."""
        from sourcesum.errors import UnknownNameError

        matches = [r for r in self.rows if r.label == name] or [r for r in self.rows if r.ranker == name]
        if len(matches) != 1:
            raise UnknownNameError(
                f"no single leaderboard row for {name!r}; rows: {', '.join(r.label for r in self.rows)}"
            )
        return matches[0]


def is_current(entry: ScoreEntry, split: Split) -> str | None:
    """``None`` if ``entry`` can be used for ``split``, else why it is stale."""
    if entry.data_sha256 != split.sha256:
        return "computed on other data"
    if entry.ranker in RANKERS and RANKERS.get(entry.ranker).version != entry.version:
        return f"version {entry.version}, ranker is now {RANKERS.get(entry.ranker).version}"
    if not entry.complete:
        return f"partial ({len(entry.scores)}/{entry.n_pairs} pairs)"
    return None


def _human_row(splits: dict[str, Split]) -> Row:
    row = Row(HUMAN_LABEL, "human", {}, reference=True)
    for name, split in splits.items():
        frame = human_per_pair(split, LEADERBOARD_MEASURES)
        frame.attrs["measures"] = list(LEADERBOARD_MEASURES)
        row.evaluations[name] = Evaluation(system=HUMAN_LABEL, split=name, per_pair=frame)
    return row


def collect(store: ScoreStore, with_stats: bool = True, resamples: int = stats.DEFAULT_RESAMPLES) -> Leaderboard:
    """Evaluate every usable store entry on the main splits (plus the human row)."""
    splits = {name: load_split(name) for name in main_splits()}
    rows: dict[str, Row] = {}
    stale: list[str] = []
    for path, entry in store.entries():
        split = splits.get(entry.split)
        if split is None:
            continue
        reason = is_current(entry, split)
        if reason:
            stale.append(f"{path.relative_to(store.root)}: {reason}")
            continue
        reference = entry.ranker in RANKERS and RANKERS.get(entry.ranker).reference
        row = rows.setdefault(entry.label, Row(entry.label, entry.ranker, entry.params, reference))
        if entry.split in row.entries:
            warnings.warn(f"two store entries labelled {entry.label} on {entry.split}; using {path}")
        row.entries[entry.split] = entry
        row.evaluations[entry.split] = evaluate(
            split, entry.scores, entry.label, LEADERBOARD_MEASURES, source=str(path)
        )
        row.ties[entry.split] = tie_report(split, entry.scores, entry.label, LEADERBOARD_MEASURES)
    ordered = sorted(rows.values(), key=lambda r: (-np.nan_to_num(r.average(NDCG), nan=-1), r.label))
    board = Leaderboard(list(splits.values()), ordered + [_human_row(splits)], stale)
    _mark_best(board)
    if with_stats:
        add_statistics(board, resamples)
    return board


def _mark_best(board: Leaderboard) -> None:
    for split in [s.name for s in board.splits] + [None]:
        for measure in LEADERBOARD_MEASURES:
            candidates = [(r.value(split, measure), r.label) for r in board.ranked_rows]
            candidates = [c for c in candidates if np.isfinite(c[0])]
            if candidates:
                board.best[(split, measure)] = max(candidates, key=lambda c: (c[0], c[1]))[1]


def document_groups(split: Split) -> list[str]:
    """The resampling unit of the leaderboard: each pair's document."""
    return [pair.document_key for pair in split]


def add_statistics(board: Leaderboard, resamples: int = stats.DEFAULT_RESAMPLES,
                   seed: int = stats.DEFAULT_SEED) -> None:
    """Fill every row's CIs and, for ranked rows, Holm-adjusted p-values against the best."""
    groups = {split.name: document_groups(split) for split in board.splits}
    for measure in LEADERBOARD_MEASURES:
        for row in board.rows:
            split_means = []
            for split in board.splits:
                evaluation = row.evaluations.get(split.name)
                if evaluation is None:
                    continue
                values = evaluation.per_pair[measure.name].to_numpy()
                means = stats.bootstrap_means(values, resamples, seed, groups[split.name])[0]
                row.ci[(split.name, measure)] = stats.percentile_interval(means)
                split_means.append(means)
            if len(split_means) == len(board.splits):
                row.ci[(None, measure)] = stats.percentile_interval(np.mean(split_means, axis=0))
        for split in board.splits:
            best_label = board.best.get((split.name, measure))
            if best_label is None:
                continue
            best = board.row(best_label).evaluations[split.name].per_pair[measure.name].to_numpy()
            others = [r for r in board.ranked_rows if r.label != best_label and split.name in r.evaluations]
            raw = [
                stats.randomization_test(
                    r.evaluations[split.name].per_pair[measure.name].to_numpy(), best,
                    resamples, seed, groups[split.name],
                )
                for r in others
            ]
            for row, p in zip(others, stats.holm(raw) if raw else []):
                row.p_vs_best[(split.name, measure)] = p
            board.row(best_label).p_vs_best[(split.name, measure)] = 1.0
