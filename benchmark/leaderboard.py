"""Collect the leaderboard from the score store, with statistics, ties and the human row.

Two modes. **Declared** (the official board): ``leaderboard.toml`` names exactly the ranker
configurations (name + parameters) on the board and its reference rows; each must have a
complete, valid entry for every main split, made with the ranker's current version on the
current data, or :func:`collect_declared` raises :class:`IncompleteLeaderboard` naming every
missing, partial or invalid entry and the command that computes it. **All** (any store): every
valid, complete, current entry becomes a row; anything else is listed as skipped with the reason.
Rows are one ranker configuration each (grouped by ranker, version and parameters, never by
label alone). Nothing is recomputed here.

Statistics (see :mod:`sourcesum.stats`): every cell gets a 95% percentile bootstrap CI
(10,000 resamples, seed 0) that **resamples documents** (on CNN/DM several pairs share one; on
XSum every pair has its own, so this equals resampling pairs). In each split column, every
ranked row is compared with the column's best by a paired randomization test (document-level
sign flips), Holm-corrected across the rows of that column; rows with adjusted p >= 0.05 are
"not significantly worse than the best". The Avg columns' CI resamples each split
independently and averages the resampled means.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from sourcesum import stats
from sourcesum.data import Split, load_split, main_splits
from sourcesum.evaluation import Evaluation, evaluate
from sourcesum.human import HUMAN_LABEL, human_per_pair
from sourcesum.measures import AP, NDCG, Measure
from sourcesum.errors import ScoreFileError, SourceSumError
from sourcesum.statscache import StatsCache, stats_key
from sourcesum.store import ScoreEntry, ScoreStore, StoreStack, entry_key
from sourcesum.ties import tie_report
from sourcesum.rankers.base import RANKERS, create_ranker

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
    measures: tuple[Measure, ...] = LEADERBOARD_MEASURES
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


class IncompleteLeaderboard(SourceSumError):
    """A declared row lacks a complete, valid, current entry (the message lists each)."""


@dataclass(frozen=True)
class DeclaredRow:
    """One configuration named in ``leaderboard.toml``."""

    ranker: str
    params: dict[str, Any]
    reference: bool = False


def read_declaration(path: Path) -> list[DeclaredRow]:
    """The rows declared in ``path``: ``[[rows]]`` (ranked) and ``[[references]]`` tables, each
    with ``ranker = "name"`` and optional ``params = {...}``."""
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SourceSumError(f"{path}: cannot read the leaderboard declaration ({exc})") from exc
    unknown = set(raw) - {"rows", "references"}
    if unknown:
        raise SourceSumError(f"{path}: unknown table(s) {sorted(unknown)}; use [[rows]] and [[references]]")
    declared = []
    for table, reference in (("rows", False), ("references", True)):
        for i, item in enumerate(raw.get(table, [])):
            extra = set(item) - {"ranker", "params"}
            if not isinstance(item.get("ranker"), str) or extra or not isinstance(item.get("params", {}), dict):
                raise SourceSumError(
                    f"{path}: [[{table}]] #{i + 1} needs ranker = \"name\" and optional params = {{...}}"
                    + (f"; unknown keys {sorted(extra)}" if extra else "")
                )
            declared.append(DeclaredRow(item["ranker"], dict(item.get("params", {})), reference))
    if not declared:
        raise SourceSumError(f"{path}: declares no rows")
    return declared


def is_current(entry: ScoreEntry, split: Split) -> str | None:
    """``None`` if ``entry`` can be used for ``split``, else why it is stale."""
    if entry.data_sha256 != split.sha256:
        return "computed on other data"
    if entry.ranker in RANKERS:
        cls = RANKERS.get(entry.ranker)
        if cls.version != entry.version:
            return f"version {entry.version}, ranker is now {cls.version}"
        try:
            canonical = cls.canonical_params(entry.params)
        except SourceSumError as exc:
            return f"parameters no longer valid ({exc})"
        if canonical != entry.params:
            return f"parameters {entry.params} are not in canonical form {canonical}"
    if not entry.complete:
        return f"partial ({len(entry.scores)}/{entry.n_pairs} pairs)"
    return None


def _human_row(splits: dict[str, Split], measures: Sequence[Measure] = LEADERBOARD_MEASURES) -> Row:
    row = Row(HUMAN_LABEL, "human", {}, reference=True)
    for name, split in splits.items():
        frame = human_per_pair(split, measures)
        frame.attrs["measures"] = list(measures)
        row.evaluations[name] = Evaluation(system=HUMAN_LABEL, split=name, per_pair=frame)
    return row


def _add_entry(row: Row, entry: ScoreEntry, split: Split, source: str, measures: Sequence[Measure]) -> None:
    row.entries[split.name] = entry
    row.evaluations[split.name] = evaluate(split, entry.scores, row.label, measures, source=source)
    row.ties[split.name] = tie_report(split, entry.scores, row.label, measures)


def _finish(splits: dict[str, Split], rows: list[Row], stale: list[str], measures: Sequence[Measure],
            with_stats: bool, resamples: int) -> Leaderboard:
    ordered = sorted(rows, key=lambda r: (-np.nan_to_num(r.average(measures[0]), nan=-1), r.label))
    board = Leaderboard(list(splits.values()), ordered + [_human_row(splits, measures)], stale,
                        tuple(measures))
    _mark_best(board)
    if with_stats:
        add_statistics(board, resamples)
    return board


def collect_declared(
    declared: Sequence[DeclaredRow],
    store: ScoreStore | StoreStack,
    measures: Sequence[Measure] = LEADERBOARD_MEASURES,
    with_stats: bool = True,
    resamples: int = stats.DEFAULT_RESAMPLES,
) -> Leaderboard:
    """Exactly the declared rows, each from a complete, valid, current entry per main split."""
    splits = {name: load_split(name) for name in main_splits()}
    rows: list[Row] = []
    problems: list[str] = []
    for item in declared:
        ranker = create_ranker(item.ranker, **item.params)
        params = ranker.get_params()
        row = Row(ranker.label, ranker.name, params, item.reference or ranker.reference)
        for split in splits.values():
            key = entry_key(ranker.name, ranker.version, params, split.sha256)
            path = store.path_for(ranker.name, split.name, key)
            command = (f"sourcesum run --ranker {ranker.name} --split {split.name}"
                       + "".join(f" -p {ranker.name}.{k}={json.dumps(v) if not isinstance(v, str) else v}"
                                 for k, v in sorted(item.params.items()))
                       + f" --scores-dir {store.root}")
            try:
                entry = store.load(ranker.name, split.name, key)
            except ScoreFileError as exc:
                problems.append(f"{ranker.label} on {split.name}: invalid entry: {exc}")
                continue
            if entry is None:
                problems.append(f"{ranker.label} on {split.name}: missing ({path}); compute: {command}")
                continue
            if not entry.complete:
                problems.append(f"{ranker.label} on {split.name}: partial ({len(entry.scores)}/"
                                f"{entry.n_pairs} pairs, {path}); resume: {command}")
                continue
            _add_entry(row, entry, split, str(path), measures)
        rows.append(row)
    if problems:
        raise IncompleteLeaderboard(
            f"{len(problems)} declared entr{'y is' if len(problems) == 1 else 'ies are'} not complete "
            "and valid; nothing was written:\n  " + "\n  ".join(problems)
        )
    return _finish(splits, rows, [], measures, with_stats, resamples)


def collect(
    store: ScoreStore | StoreStack,
    with_stats: bool = True,
    resamples: int = stats.DEFAULT_RESAMPLES,
    measures: Sequence[Measure] = LEADERBOARD_MEASURES,
) -> Leaderboard:
    """Every usable store entry on the main splits as a row (plus the human row); invalid,
    stale and partial entries are listed in ``stale`` with the reason."""
    splits = {name: load_split(name) for name in main_splits()}
    rows: dict[str, Row] = {}
    stale: list[str] = []
    for path, entry in store.entries():
        if isinstance(entry, ScoreFileError):
            stale.append(f"{path}: invalid ({entry})")
            continue
        split = splits.get(entry.split)
        if split is None:
            continue
        reason = is_current(entry, split)
        if reason:
            stale.append(f"{path}: {reason}")
            continue
        reference = entry.ranker in RANKERS and RANKERS.get(entry.ranker).reference
        row = rows.setdefault(entry.config_id, Row(entry.label, entry.ranker, entry.params, reference))
        _add_entry(row, entry, split, str(path), measures)
    labels = [r.label for r in rows.values()]
    for config, row in rows.items():
        if labels.count(row.label) > 1:  # same label, other configuration: say which
            row.label = f"{row.label} [{config[:6]}]"
            for evaluation in row.evaluations.values():
                evaluation.system = row.label
    return _finish(splits, list(rows.values()), stale, measures, with_stats, resamples)


def _mark_best(board: Leaderboard) -> None:
    for split in [s.name for s in board.splits] + [None]:
        for measure in board.measures:
            candidates = [(r.value(split, measure), r.label) for r in board.ranked_rows]
            candidates = [c for c in candidates if np.isfinite(c[0])]
            if candidates:
                board.best[(split, measure)] = max(candidates, key=lambda c: (c[0], c[1]))[1]


def document_groups(split: Split) -> list[str]:
    """The resampling unit of the leaderboard: each pair's document."""
    return [pair.document_key for pair in split]


def add_statistics(board: Leaderboard, resamples: int = stats.DEFAULT_RESAMPLES,
                   seed: int = stats.DEFAULT_SEED, cache: StatsCache | None = None) -> None:
    """Fill every row's CIs and, for ranked rows, Holm-adjusted p-values against the best.

    Each interval and raw p-value is memoised in ``cache`` (default: the persistent
    :class:`StatsCache`) under the sha256 of its exact inputs; Holm is recomputed each time."""
    cache = StatsCache.default() if cache is None else cache
    groups = {split.name: document_groups(split) for split in board.splits}
    for measure in board.measures:
        for row in board.rows:
            present = [s for s in board.splits if s.name in row.evaluations]
            values = {s.name: row.evaluations[s.name].per_pair[measure.name].to_numpy() for s in present}
            keys = {s.name: stats_key("ci", resamples, seed, [values[s.name]], [groups[s.name]])
                    for s in present}
            if len(present) == len(board.splits):
                keys[None] = stats_key("avg_ci", resamples, seed, [values[s.name] for s in present],
                                       [groups[s.name] for s in present])
            if not all(k in cache for k in keys.values()):
                means = {s.name: stats.bootstrap_means(values[s.name], resamples, seed, groups[s.name])[0]
                         for s in present}
                for name, key in keys.items():
                    sample = np.mean([means[s.name] for s in present], axis=0) if name is None else means[name]
                    cache.get(key, lambda sample=sample: list(stats.percentile_interval(sample)))
            for name, key in keys.items():
                low, high = cache.get(key, lambda: None)
                row.ci[(name, measure)] = (low, high)
        for split in board.splits:
            best_label = board.best.get((split.name, measure))
            if best_label is None:
                continue
            best = board.row(best_label).evaluations[split.name].per_pair[measure.name].to_numpy()
            others = [r for r in board.ranked_rows if r.label != best_label and split.name in r.evaluations]
            raw = []
            for r in others:
                values = r.evaluations[split.name].per_pair[measure.name].to_numpy()
                key = stats_key("randomization", resamples, seed, [values, best], [groups[split.name]])
                raw.append(cache.get(key, lambda values=values: stats.randomization_test(
                    values, best, resamples, seed, groups[split.name])))
            for row, p in zip(others, stats.holm(raw) if raw else []):
                row.p_vs_best[(split.name, measure)] = p
            board.row(best_label).p_vs_best[(split.name, measure)] = 1.0
    cache.save()
