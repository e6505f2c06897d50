"""Collect the leaderboard from the score store: one row per ranker configuration.

A store entry counts when it is complete, was computed on the current data file (sha256), and,
for a ranker registered in this process, carries that ranker's current ``version``; anything
else is reported as stale and skipped. Nothing is recomputed here.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from benchmark.data import Split, load_split, main_splits
from benchmark.evaluation import Evaluation, evaluate
from benchmark.measures import AP, NDCG
from benchmark.store import ScoreEntry, ScoreStore
from rankers.base import RANKERS

LEADERBOARD_MEASURES = (NDCG, AP)


@dataclass
class Row:
    """One ranker configuration and its evaluation on each main split it has scores for."""

    label: str
    ranker: str
    params: dict
    reference: bool
    entries: dict[str, ScoreEntry] = field(default_factory=dict)
    evaluations: dict[str, Evaluation] = field(default_factory=dict)

    def mean(self, split: str, measure) -> float:
        evaluation = self.evaluations.get(split)
        return evaluation.mean(measure) if evaluation else float("nan")

    def average(self, measure) -> float:
        """Unweighted mean of the four split means (NaN unless all four are present)."""
        values = [self.mean(s, measure) for s in main_splits()]
        return float(np.mean(values)) if all(np.isfinite(values)) else float("nan")


@dataclass
class Leaderboard:
    splits: list[Split]
    rows: list[Row]
    stale: list[str]

    @property
    def ranked_rows(self) -> list[Row]:
        return [r for r in self.rows if not r.reference]

    @property
    def reference_rows(self) -> list[Row]:
        return [r for r in self.rows if r.reference]


def is_current(entry: ScoreEntry, split: Split) -> str | None:
    """``None`` if ``entry`` can be used for ``split``, else why it is stale."""
    if entry.data_sha256 != split.sha256:
        return "computed on other data"
    if entry.ranker in RANKERS and RANKERS.get(entry.ranker).version != entry.version:
        return f"version {entry.version}, ranker is now {RANKERS.get(entry.ranker).version}"
    if not entry.complete:
        return f"partial ({len(entry.scores)}/{entry.n_pairs} pairs)"
    return None


def collect(store: ScoreStore) -> Leaderboard:
    """Evaluate every usable store entry on the main splits."""
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
        reference = entry.ranker in RANKERS and getattr(RANKERS.get(entry.ranker), "reference", False)
        row = rows.setdefault(entry.label, Row(entry.label, entry.ranker, entry.params, reference))
        if entry.split in row.entries:
            warnings.warn(f"two store entries labelled {entry.label} on {entry.split}; using {path}")
        row.entries[entry.split] = entry
        row.evaluations[entry.split] = evaluate(
            split, entry.scores, entry.label, LEADERBOARD_MEASURES, source=str(path)
        )
    ordered = sorted(rows.values(), key=lambda r: (-np.nan_to_num(r.average(NDCG), nan=-1), r.label))
    return Leaderboard(list(splits.values()), ordered, stale)
