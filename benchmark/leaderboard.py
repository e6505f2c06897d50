"""Collect the leaderboard from the score store and the paper's published outputs, with
statistics, ties and the human-agreement table.

Two modes. **Declared** (the official board): ``leaderboard.toml`` names exactly the ranker
configurations (name + parameters) on the board, its reference rows and the published outputs
shown; each ranker must have a complete, valid entry for every main split, made with the
ranker's current version on the current data, or :func:`collect_declared` raises
:class:`IncompleteLeaderboard` naming every missing, partial or invalid entry and the command
that computes it. **All** (any store): every valid, complete, current entry becomes a row, plus
every published output; anything else is listed as skipped with the reason. Rows are one ranker
configuration each (grouped by ranker, version and parameters, never by label alone). Nothing
is recomputed here.

Row kinds: *ranked* (store entries of rankers), *published* (the paper's outputs, read as
in-memory entries by :mod:`sourcesum.published`, on the splits the paper published) and
*reference* (e.g. the oracle; not compared). Ranked and published rows *compete*: they share
the best-of-column, the significance tests and the test against ``lead``.

Statistics (see :mod:`sourcesum.stats`): every cell gets a 95% percentile bootstrap CI
(10,000 resamples, seed 0) that **resamples documents** (on CNN/DM several pairs share one; on
XSum every pair has its own, so this equals resampling pairs). In each split column, every
competing row is compared with the column's best by a paired randomization test (document-level
sign flips), Holm-corrected across the rows of that column; rows with adjusted p >= 0.05 are
"not significantly worse than the best". Every competing row is also tested against ``lead``
in each column (same test, Holm across the rows compared with lead in that column). The Avg
CI is the percentile interval of the mean of the four splits' bootstrap means, resample by
resample; every split is resampled by document from the same seed, so the two splits of a
corpus, which share their documents, draw the same documents in each resample.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sourcesum import stats
from sourcesum.data import Split, load_split, main_splits
from sourcesum.errors import ScoreFileError, SourceSumError
from sourcesum.evaluation import Evaluation, evaluate
from sourcesum.human import HUMAN_LABEL, HumanAgreement, agreement_per_pair, coverage
from sourcesum.measures import AP, NDCG, Measure
from sourcesum.published import PublishedOutput, load_published, published_method, published_methods
from sourcesum.qrels import Run
from sourcesum.rankers.base import RANKERS, create_ranker
from sourcesum.statscache import StatsCache, stats_key
from sourcesum.store import ScoreEntry, ScoreStore, StoreStack, entry_key
from sourcesum.ties import tie_report

LEADERBOARD_MEASURES = (NDCG, AP)
ALPHA = 0.05


@dataclass
class Row:
    """One ranker configuration (or reference) and its evaluation on each main split."""

    label: str
    ranker: str
    params: dict
    reference: bool
    published: bool = False
    entries: dict[str, ScoreEntry] = field(default_factory=dict)
    evaluations: dict[str, Evaluation] = field(default_factory=dict)
    ci: dict[tuple[str | None, Measure], tuple[float, float]] = field(default_factory=dict)
    p_vs_best: dict[tuple[str, Measure], float] = field(default_factory=dict)
    p_vs_lead: dict[tuple[str, Measure], float] = field(default_factory=dict)
    """Holm-adjusted two-sided randomization p-value against ``lead`` (competing rows)."""
    ties: dict[str, dict] = field(default_factory=dict)
    nan_replaced: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Published rows: per split, (NaN scores replaced by 0, pairs whose scores were all NaN)."""

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
    human: HumanAgreement | None = None
    scores_from: str = "the committed files in `data/scores/`"
    """Where the rows' scores were read, in words (the Markdown header says it)."""
    regenerate: str = "`bash scripts/leaderboard.sh` (or `sourcesum leaderboard`)"
    """The command that renders this board again, in words."""

    @property
    def ranked_rows(self) -> list[Row]:
        """Rows of rankers from the score store (not published, not reference)."""
        return [r for r in self.rows if not r.reference and not r.published]

    @property
    def published_rows(self) -> list[Row]:
        return [r for r in self.rows if r.published]

    @property
    def reference_rows(self) -> list[Row]:
        return [r for r in self.rows if r.reference]

    @property
    def competing_rows(self) -> list[Row]:
        """Ranked and published rows: those compared with the best and with ``lead``."""
        return [r for r in self.rows if not r.reference]

    @property
    def lead(self) -> Row | None:
        """The competing row of the ``lead`` ranker, if there is exactly one."""
        leads = [r for r in self.competing_rows if r.ranker == "lead"]
        return leads[0] if len(leads) == 1 else None

    def better_than_lead(self, split: str, measure: Measure) -> list[Row]:
        """Competing rows significantly above ``lead`` in a column (Holm-adjusted p < ALPHA)."""
        lead = self.lead
        if lead is None:
            return []
        return [
            r
            for r in self.competing_rows
            if r.p_vs_lead.get((split, measure), 1.0) < ALPHA
            and r.mean(split, measure) > lead.mean(split, measure)
        ]

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
    published: bool = False
    """A published output: ``ranker`` is the paper's method (output field), e.g. ``perplexity``."""


def read_declaration(path: Path) -> list[DeclaredRow]:
    """The rows declared in ``path``: ``[[rows]]`` (ranked) and ``[[references]]`` tables, each
    with ``ranker = "name"`` and optional ``params = {...}``, and ``[[published]]`` tables with
    ``method = "name"`` (a method of the manifest's ``published`` section)."""
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SourceSumError(f"{path}: cannot read the leaderboard declaration ({exc})") from exc
    unknown = set(raw) - {"rows", "references", "published"}
    if unknown:
        raise SourceSumError(
            f"{path}: unknown table(s) {sorted(unknown)}; use [[rows]], [[references]] and [[published]]"
        )
    declared = []
    for i, item in enumerate(raw.get("published", [])):
        if set(item) != {"method"} or not isinstance(item["method"], str):
            raise SourceSumError(f'{path}: [[published]] #{i + 1} needs exactly method = "name"')
        declared.append(DeclaredRow(published_method(item["method"]).key, {}, published=True))
    for table, reference in (("rows", False), ("references", True)):
        for i, item in enumerate(raw.get(table, [])):
            extra = set(item) - {"ranker", "params"}
            if (
                not isinstance(item.get("ranker"), str)
                or extra
                or not isinstance(item.get("params", {}), dict)
            ):
                raise SourceSumError(
                    f'{path}: [[{table}]] #{i + 1} needs ranker = "name" and optional params = {{...}}'
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
        try:
            canonical = cls.canonical_params(entry.params)
            version = cls(**canonical).key_version()
        except (SourceSumError, TypeError, ValueError) as exc:
            return f"parameters no longer valid ({exc})"
        if version != entry.version:
            return f"version {entry.version}, ranker is now {version}"
        if canonical != entry.params:
            return f"parameters {entry.params} are not in canonical form {canonical}"
    if not entry.complete:
        return f"partial ({len(entry.scores)}/{entry.n_pairs} pairs)"
    return None


def _published_row(
    outputs: Sequence[PublishedOutput], splits: dict[str, Split], measures: Sequence[Measure]
) -> Row:
    """One row from a published method's outputs on the splits the paper published."""
    method = outputs[0].method
    row = Row(method.label, method.ranker, {}, reference=False, published=True)
    for output in outputs:
        _add_entry(row, output.entry, splits[output.entry.split], str(output.path), measures)
        row.nan_replaced[output.entry.split] = (output.nan_replaced, output.all_nan_pairs)
    return row


def _published_rows(keys: Sequence[str], splits: dict[str, Split], measures: Sequence[Measure]) -> list[Row]:
    return [
        _published_row(
            [load_published(s, key) for s in splits if s in published_method(key).reported], splits, measures
        )
        for key in keys
    ]


def _add_entry(row: Row, entry: ScoreEntry, split: Split, source: str, measures: Sequence[Measure]) -> None:
    row.entries[split.name] = entry
    row.evaluations[split.name] = evaluate(split, entry.scores, row.label, measures, source=source)


def _finish(
    splits: dict[str, Split],
    rows: list[Row],
    stale: list[str],
    measures: Sequence[Measure],
    with_stats: bool,
    resamples: int,
) -> Leaderboard:
    ordered = sorted(rows, key=lambda r: (-np.nan_to_num(r.average(measures[0]), nan=-1), r.label))
    board = Leaderboard(list(splits.values()), ordered, stale, tuple(measures))
    _mark_best(board)
    if with_stats:  # what the rendered board adds to the rows' evaluations
        cache = StatsCache.default()
        for row in board.rows:
            for name, entry in row.entries.items():
                row.ties[name] = cached_tie_report(splits[name], entry, row, measures, cache)
        board.human = human_agreement(board)
        add_statistics(board, resamples, cache=cache)
    return board


TIES_VERSION = "1"
"""Bump when :func:`sourcesum.ties.tie_report` changes what it computes."""


def cached_tie_report(
    split: Split, entry: ScoreEntry, row: Row, measures: Sequence[Measure], cache: StatsCache
) -> dict[str, Any]:
    """:func:`~sourcesum.ties.tie_report` of a row's entry, memoised in ``cache`` under the
    sha256 of the split (name, data checksum, pair ids), the measures and the exact scores."""
    values = Run.of_split(split, entry.scores, row.label).values
    name = f"ties/{TIES_VERSION}|{split.name}|{split.sha256}|{'|'.join(m.name for m in measures)}"
    key = stats_key(name, 0, 0, [values], [[p.id for p in split]])
    return cache.get(
        key,
        lambda: tie_report(split, entry.scores, row.label, measures, evaluation=row.evaluations[split.name]),
    )


def human_measures(measures: Sequence[Measure]) -> tuple[Measure, ...]:
    """The board's measures, each followed by its tie expectation when that differs (AP ->
    AP(ties=expected)): the human's scores are 0/1, so the tie rule matters most there."""
    out: list[Measure] = []
    for measure in measures:
        for m in (measure, measure.expectation):
            if m is not None and m not in out:
                out.append(m)
    return tuple(out)


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
                table.per_pair[(row.label, split.name)] = agreement_per_pair(
                    split, entry.scores, measures, source=row.label
                )
    table.labels = [HUMAN_LABEL] + [r.label for r in board.competing_rows]
    return table


def collect_declared(
    declared: Sequence[DeclaredRow],
    store: ScoreStore | StoreStack,
    measures: Sequence[Measure] = LEADERBOARD_MEASURES,
    with_stats: bool = True,
    resamples: int = stats.DEFAULT_RESAMPLES,
) -> Leaderboard:
    """Exactly the declared rows, each from a complete, valid, current entry per main split."""
    splits = {name: load_split(name) for name in main_splits()}
    rows: list[Row] = _published_rows([d.ranker for d in declared if d.published], splits, measures)
    problems: list[str] = []
    for item in declared:
        if item.published:
            continue
        ranker = create_ranker(item.ranker, **item.params)
        params = ranker.get_params()
        row = Row(ranker.label, ranker.name, params, item.reference or ranker.reference)
        for split in splits.values():
            key = entry_key(ranker.name, ranker.key_version(), params, split.sha256)
            path = store.path_for(ranker.name, split.name, key)
            command = (
                f"sourcesum run --ranker {ranker.name} --split {split.name}"
                + "".join(
                    f" -p {ranker.name}.{k}={json.dumps(v) if not isinstance(v, str) else v}"
                    for k, v in sorted(item.params.items())
                )
                + f" --scores-dir {store.root}"
            )
            try:
                entry = store.load(ranker.name, split.name, key)
            except ScoreFileError as exc:
                problems.append(f"{ranker.label} on {split.name}: invalid entry: {exc}")
                continue
            if entry is None:
                problems.append(f"{ranker.label} on {split.name}: missing ({path}); compute: {command}")
                continue
            if not entry.complete:
                problems.append(
                    f"{ranker.label} on {split.name}: partial ({len(entry.scores)}/"
                    f"{entry.n_pairs} pairs, {path}); resume: {command}"
                )
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
    published: bool = True,
) -> Leaderboard:
    """Every usable store entry on the main splits as a row, plus (``published``) a row per
    published method; invalid, stale and partial entries are listed in ``stale`` with the reason."""
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
    extra = _published_rows([m.key for m in published_methods()], splits, measures) if published else []
    return _finish(splits, list(rows.values()) + extra, stale, measures, with_stats, resamples)


def _mark_best(board: Leaderboard) -> None:
    for split in [s.name for s in board.splits] + [None]:
        for measure in board.measures:
            candidates = [(r.value(split, measure), r.label) for r in board.competing_rows]
            candidates = [c for c in candidates if np.isfinite(c[0])]
            if candidates:
                board.best[(split, measure)] = max(candidates, key=lambda c: (c[0], c[1]))[1]


def document_groups(split: Split) -> list[str]:
    """The resampling unit of the leaderboard: each pair's document."""
    return [pair.document_key for pair in split]


def add_statistics(
    board: Leaderboard,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    cache: StatsCache | None = None,
) -> None:
    """Fill every row's CIs; for competing rows, Holm-adjusted p-values against the column's
    best and against ``lead``; and the human-agreement table's CIs and tests.

    Each interval and raw p-value is memoised in ``cache`` (default: the persistent
    :class:`StatsCache`) under the sha256 of its exact inputs; Holm is recomputed each time.
    Values missing from the cache are computed in batches (bit-identical to one at a time)."""
    cache = StatsCache.default() if cache is None else cache
    groups = {split.name: document_groups(split) for split in board.splits}
    for measure in board.measures:
        _row_intervals(board, measure, cache, resamples, seed, groups)
        for split in board.splits:
            best_label = board.best.get((split.name, measure))
            if best_label is not None:
                best = board.row(best_label)
                for row, p in _holm_against(best, board, split.name, measure, cache, resamples, seed, groups):
                    row.p_vs_best[(split.name, measure)] = p
                best.p_vs_best[(split.name, measure)] = 1.0
            lead = board.lead
            if lead is not None and split.name in lead.evaluations:
                for row, p in _holm_against(lead, board, split.name, measure, cache, resamples, seed, groups):
                    row.p_vs_lead[(split.name, measure)] = p
    if board.human is not None:
        _human_statistics(board.human, board.splits, cache, resamples, seed, groups)
    cache.save()


def _row_intervals(
    board: Leaderboard,
    measure: Measure,
    cache: StatsCache,
    resamples: int,
    seed: int,
    groups: dict[str, list[str]],
) -> None:
    """Split and Avg CIs of every row for one measure (see the module docstring for the Avg)."""
    values: dict[tuple[int, str], np.ndarray] = {}
    keys: dict[tuple[int, str | None], str] = {}
    for index, row in enumerate(board.rows):
        present = [s for s in board.splits if s.name in row.evaluations]
        for s in present:
            values[(index, s.name)] = row.evaluations[s.name].per_pair[measure.name].to_numpy()
            keys[(index, s.name)] = stats_key(
                "ci", resamples, seed, [values[(index, s.name)]], [groups[s.name]]
            )
        if len(present) == len(board.splits):
            keys[(index, None)] = stats_key(
                "avg_ci",
                resamples,
                seed,
                [values[(index, s.name)] for s in present],
                [groups[s.name] for s in present],
            )
    missing_rows = {index for (index, _), key in keys.items() if key not in cache}
    means: dict[tuple[int, str], np.ndarray] = {}
    for split in board.splits:
        needed = [i for i in sorted(missing_rows) if (i, split.name) in values]
        computed = stats.bootstrap_means_each(
            [values[(i, split.name)] for i in needed], resamples, seed, groups[split.name]
        )
        means.update({(i, split.name): m for i, m in zip(needed, computed, strict=True)})
    for (index, name), key in keys.items():
        if key not in cache:
            sample = (
                np.mean([means[(index, s.name)] for s in board.splits], axis=0)
                if name is None
                else means[(index, name)]
            )
            cache.get(key, lambda sample=sample: list(stats.percentile_interval(sample)))
        low, high = cache.get(key, lambda: None)
        board.rows[index].ci[(name, measure)] = (low, high)


def _pvalues(
    vectors: Sequence[np.ndarray],
    base: np.ndarray,
    groups: list[str],
    cache: StatsCache,
    resamples: int,
    seed: int,
) -> list[float]:
    """Raw two-sided randomization p-values of each vector against ``base`` (memoised)."""
    keys = [stats_key("randomization", resamples, seed, [v, base], [groups]) for v in vectors]
    missing = [i for i, key in enumerate(keys) if key not in cache]
    computed = stats.randomization_test_each([vectors[i] for i in missing], base, resamples, seed, groups)
    for i, p in zip(missing, computed, strict=True):
        cache.get(keys[i], lambda p=p: p)
    return [cache.get(key, lambda: None) for key in keys]


def _holm_against(
    base: Row,
    board: Leaderboard,
    split: str,
    measure: Measure,
    cache: StatsCache,
    resamples: int,
    seed: int,
    groups: dict[str, list[str]],
) -> list[tuple[Row, float]]:
    """Two-sided paired randomization test against ``base`` of every other competing row with
    values on ``split``, Holm-adjusted across those rows."""
    others = [r for r in board.competing_rows if r is not base and split in r.evaluations]
    vectors = [r.evaluations[split].per_pair[measure.name].to_numpy() for r in others]
    reference = base.evaluations[split].per_pair[measure.name].to_numpy()
    raw = _pvalues(vectors, reference, groups[split], cache, resamples, seed)
    return list(zip(others, stats.holm(raw), strict=True)) if raw else []


def _human_statistics(
    table: HumanAgreement,
    splits: Sequence[Split],
    cache: StatsCache,
    resamples: int,
    seed: int,
    groups: dict[str, list[str]],
) -> None:
    """CIs of every agreement cell; each row tested against the human (two-sided paired
    randomization test over the pairs both cover, Holm across the rows of the column)."""
    for split in splits:
        labels = [label for label in table.labels if (label, split.name) in table.per_pair]
        for measure in table.measures:
            vectors = [table.per_pair[(label, split.name)][measure.name].to_numpy() for label in labels]
            keys = [stats_key("ci", resamples, seed, [v], [groups[split.name]]) for v in vectors]
            missing = [i for i, key in enumerate(keys) if key not in cache]
            computed = stats.bootstrap_means_each(
                [vectors[i] for i in missing], resamples, seed, groups[split.name]
            )
            for i, means in zip(missing, computed, strict=True):
                cache.get(keys[i], lambda means=means: list(stats.percentile_interval(means)))
            for label, key in zip(labels, keys, strict=True):
                low, high = cache.get(key, lambda: None)
                table.ci[(label, split.name, measure)] = (low, high)
            raw = _pvalues(vectors[1:], vectors[0], groups[split.name], cache, resamples, seed)
            for label, p in zip(labels[1:], stats.holm(raw) if raw else [], strict=True):
                table.p_vs_human[(label, split.name, measure)] = p
