"""The board's view-model: what every output shows, computed once from a :class:`Leaderboard`.

:func:`build_view` turns a board (rows, evaluations, statistics) into plain values: the numeric
columns, one :class:`Cell` per row and column (value, display text, mark, CI), the rows grouped
by kind, the comparisons with ``lead``, the human-agreement table, the Ties table, the notes,
and one JSON-ready record per (row, split). Markdown, LaTeX, JSON, CSV, the plot and the site
(:mod:`sourcesum.outputs`) are functions of this view; none of them reads a store, a split or a
ranker class. Everything is a pure function of its inputs (no dates or timings), so rendering
an unchanged board is byte-identical.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sourcesum.board.collect import environment_notes
from sourcesum.board.heldout import SameCorpusGap, SharedDocuments, same_corpus_gaps, shared_documents
from sourcesum.board.model import LEADERBOARD_MEASURES, HeldOutProgress, Leaderboard, Row
from sourcesum.data import Dataset
from sourcesum.human import HUMAN_LABEL
from sourcesum.measures import Measure
from sourcesum.qrels import Qrels
from sourcesum.significance import Marked
from sourcesum.ties import TIE_RULES


def fmt(value: float | None, digits: int = 4) -> str:
    """A value to ``digits`` decimals, ``-`` for a missing or undefined one."""
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def fmt_ci(ci: tuple[float, float] | None) -> str:
    """``[low, high]`` to 3 decimals, empty when there is no interval."""
    if ci is None or not math.isfinite(ci[0]):
        return ""
    return f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]"


@dataclass(frozen=True)
class Column:
    """A numeric column: a measure on a split, or its average over the board splits (``split``
    None)."""

    header: str
    split: str | None
    measure: Measure


@dataclass(frozen=True)
class Cell:
    """One value of a row: ``mark`` is ``best`` (the column's best competing row), ``tied``
    (not significantly worse than the best), ``undecided`` (:func:`cell_mark`) or empty."""

    value: float
    text: str
    mark: str
    ci: tuple[float, float] | None

    @property
    def ci_text(self) -> str:
        return fmt_ci(self.ci)


@dataclass(frozen=True)
class RowView:
    """One row as shown: its display name (``label``, :mod:`sourcesum.board.names`), kind
    (``ranked``, ``published``, ``reference``) and its cells in column order, plus what
    identifies it (full label, ranker, parameters, versions, keys, library versions)."""

    label: str
    ranker: str
    kind: str
    supervised: bool
    cells: tuple[Cell, ...]
    params: dict[str, Any]
    versions: tuple[str, ...]
    keys: tuple[tuple[str, str], ...]
    """``(split title, entry key)`` per split with an entry (none for published rows)."""
    full_label: str = ""
    """The row's full label: ranker and every changed parameter (its identity)."""
    libraries: tuple[tuple[str, str], ...] = ()
    """``(library, version)`` the entries were computed with (the harness's own excepted)."""


@dataclass(frozen=True)
class LeadComparison:
    """One column's test against ``lead``: the rows significantly better, those above it whose
    test is undecided at the resampling cap, and all compared."""

    title: str
    better: tuple[str, ...]
    compared: tuple[str, ...]
    undecided: tuple[str, ...] = ()


@dataclass(frozen=True)
class SplitLabels:
    """What the board states about one split's labels: the dataset's own measured notes
    (:meth:`~sourcesum.data.Dataset.label_notes`) and, per measure, the pairs where it is
    undefined because no sentence is relevant under the relevance it reads (nonzero counts only)."""

    title: str
    pairs: int
    notes: str
    undefined: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class TieColumn:
    header: str
    measure: Measure
    rule: str


@dataclass(frozen=True)
class TieRow:
    label: str
    split: str
    pairs_with_ties: float
    sentences_tied: float
    values: tuple[float | None, ...]


@dataclass(frozen=True)
class DifferenceRow:
    """One row of a held-out comparison: per column the mean difference with its 95% CI and the
    decision of its test (``above`` / ``below`` / ``not significant`` / ``undecided``, empty when
    untested), or None where the row is the column's base or has no value."""

    label: str
    supervised: bool
    cells: tuple[tuple[float, float, float, str] | None, ...]


@dataclass(frozen=True)
class HeldOutView:
    """The held-out test: its board (rows, CIs, marks) over the held-out splits, the best
    zero-shot row of each column, and every row against ``lead`` and against that row."""

    board: BoardView
    zero_shot_best: tuple[str, ...]
    """Per column of ``board``, the label of its best zero-shot row."""
    against_lead: tuple[DifferenceRow, ...]
    against_zero_shot: tuple[DifferenceRow, ...]
    shared_documents: tuple[SharedDocuments, ...] = ()
    """Held-out splits whose documents also appear in main pairs (for other summaries)."""
    same_corpus_gaps: tuple[SameCorpusGap, ...] = ()
    """Same-corpus rows minus their cross-corpus twins on shared and on new documents."""


@dataclass(frozen=True)
class TaskView:
    """Another dataset's board shown beside the main one."""

    name: str
    title: str
    note: str
    board: BoardView


@dataclass(frozen=True)
class TransferView:
    """How rankers transfer: each zero-shot method present on every board (:func:`same_method`), its rank
    by the first measure's Avg on each board, and Spearman's rank correlation of the Avg values
    between each two boards over those rows."""

    boards: tuple[str, ...]
    measure: str
    rows: tuple[tuple[str, tuple[int, ...]], ...]
    correlations: tuple[tuple[str, str, float], ...]
    policy_notes: tuple[tuple[str, str], ...] = ()
    """One sentence per method whose rows differ between boards in an unscorable-policy
    parameter (:func:`same_method`): which value runs where, and why the rows still match."""
    left_out: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Every zero-shot row of some board that the summary leaves out, grouped by why: ``(reason,
    names)``, e.g. ``("not on WiCE and QMSum evidence", (...))``."""


@dataclass
class BoardView:
    """Everything the outputs show (module docstring)."""

    dataset: Dataset
    measures: tuple[Measure, ...]
    splits: tuple[tuple[str, str, int], ...]
    """``(name, title, pairs)`` of each board split, in column order."""
    columns: tuple[Column, ...]
    ranked: tuple[RowView, ...]
    published: tuple[RowView, ...]
    reference: tuple[RowView, ...]
    ordered: tuple[RowView, ...]
    """Every row in board order (by the Avg of the first measure, then label), kinds mixed."""
    lead: tuple[LeadComparison, ...]
    ranker_notes: tuple[tuple[str, str], ...]
    environment_notes: tuple[tuple[str, str], ...]
    """Rows whose splits were computed under different library versions or provenance."""
    published_notes: tuple[dict[str, str], ...]
    published_coverage: tuple[tuple[str, tuple[str, ...]], ...]
    """Published rows that miss some board split: ``(label, titles of the splits it has)``."""
    human: dict[str, Any]
    tie_columns: tuple[TieColumn, ...]
    ties: tuple[TieRow, ...]
    stale: tuple[str, ...]
    scores_from: str
    inputs_sha256: str
    regenerate: str
    records: tuple[dict[str, Any], ...] = field(default=())
    average_records: tuple[dict[str, Any], ...] = field(default=())
    human_records: dict[str, Any] | None = None
    heldout: HeldOutView | None = None
    heldout_pending: HeldOutProgress | None = None
    tasks: tuple[TaskView, ...] = ()
    transfer: TransferView | None = None
    labels: tuple[SplitLabels, ...] = ()
    """Per board split, in column order."""
    lead_marks: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per competing row (board order): its name and, per split column, its test against
    ``lead``: ``above`` / ``below`` (significant), ``not significant``, ``undecided``, or empty
    (untested: ``lead`` itself, or no value)."""

    @property
    def rows(self) -> tuple[RowView, ...]:
        """Every row: ranked, published, reference."""
        return self.ranked + self.published + self.reference

    @property
    def default_measures(self) -> bool:
        """The board shows the paper's measures (NDCG and MAP) only."""
        return tuple(self.measures) == LEADERBOARD_MEASURES


def columns_of(board: Leaderboard) -> tuple[Column, ...]:
    """(header, split or None for the average, measure) for every numeric column."""
    columns = [Column(f"{s.title} {m.display_name}", s.name, m) for s in board.splits for m in board.measures]
    columns += [Column(f"Avg {m.display_name}", None, m) for m in board.measures]
    return tuple(columns)


def cell_mark(board: Leaderboard, row: Row, split: str | None, measure: Measure) -> str:
    """``"best"`` (the column's best competing row), ``"tied"`` (not significantly worse than the
    best), ``"undecided"`` (the test against the best is not decided at the resampling cap) or
    ``""``; reference rows and missing values are never marked."""
    if row.reference or not math.isfinite(row.value(split, measure)):
        return ""
    if board.best.get((split, measure)) == row.label:
        return "best"
    decision = row.versus_best(split, measure)
    return {"not significant": "tied", "undecided": "undecided"}.get(decision, "")


def _row_view(board: Leaderboard, row: Row, columns: Sequence[Column]) -> RowView:
    cells = []
    for column in columns:
        value = row.value(column.split, column.measure)
        cells.append(
            Cell(
                value,
                fmt(value),
                cell_mark(board, row, column.split, column.measure),
                row.ci.get((column.split, column.measure)),
            )
        )
    entries = [(s.title, row.entries[s.name]) for s in board.splits if s.name in row.entries]
    kind = "reference" if row.reference else "published" if row.published else "ranked"
    from sourcesum.store import agreed_libraries

    libraries = sorted({item for _, entry in entries for item in agreed_libraries(entry.libraries).items()})
    return RowView(
        label=row.name or row.label,
        ranker=row.ranker,
        kind=kind,
        supervised=row.supervised,
        cells=tuple(cells),
        params=row.params,
        versions=tuple(sorted({entry.version for _, entry in entries})),
        keys=() if row.published else tuple((title, entry.key) for title, entry in entries),
        full_label=row.label,
        libraries=tuple(libraries) if not row.published else (),
    )


def tie_columns(measures: Sequence[Measure]) -> tuple[TieColumn, ...]:
    """The Ties table's columns: per measure worst-first, the default (named by what it is),
    the expectation when it differs from the default, best-first."""
    names = {"pessimistic": "worst-first", "optimistic": "best-first"}
    columns = []
    for measure in measures:
        expectation = measure.expectation
        for rule in TIE_RULES:
            if rule == "default":
                columns.append(
                    TieColumn(f"{measure.display_name} {measure.default_tie_rule} (default)", measure, rule)
                )
            elif rule == "expected":
                if expectation is not None and expectation != measure:
                    columns.append(TieColumn(f"{measure.display_name} expected", measure, rule))
            else:
                columns.append(TieColumn(f"{measure.display_name} {names[rule]}", measure, rule))
    return tuple(columns)


def _ties(board: Leaderboard, columns: Sequence[TieColumn]) -> tuple[TieRow, ...]:
    """Rows of the Ties table: ranked, published, then reference rows that have scores."""
    rows = board.ranked_rows + board.published_rows + [r for r in board.reference_rows if r.ties]
    out = []
    for row in rows:
        for split in board.splits:
            report = row.ties.get(split.name)
            if report is None:
                continue
            out.append(
                TieRow(
                    row.name,
                    split.title,
                    report["pairs_with_ties"],
                    report["sentences_tied"],
                    tuple(report[c.measure.name].get(c.rule) for c in columns),
                )
            )
    return tuple(out)


def _lead(board: Leaderboard) -> tuple[LeadComparison, ...]:
    out = []
    for split in board.splits:
        for measure in board.measures:
            family = [r for r in board.competing_rows if (split.name, measure) in r.vs_lead]
            if family:
                better = board.better_than_lead(split.name, measure)
                out.append(
                    LeadComparison(
                        f"{split.title} {measure.display_name}",
                        tuple(r.name for r in better),
                        tuple(r.name for r in family),
                        tuple(r.name for r in board.against_lead(split.name, measure, "undecided")),
                    )
                )
    return tuple(out)


def _ranker_notes(board: Leaderboard) -> tuple[tuple[str, str], ...]:
    """``(ranker, note)`` for every ranker on the board that has a ``board_note``, in row order."""
    from sourcesum.rankers import RANKERS

    out: list[tuple[str, str]] = []
    for row in board.ranked_rows:
        if row.ranker in RANKERS and row.ranker not in [name for name, _ in out]:
            note = RANKERS.get(row.ranker).board_note
            if note:
                out.append((row.ranker, note))
    return tuple(out)


def _published_notes(board: Leaderboard) -> tuple[dict[str, str], ...]:
    """Per published row: label, what was run, its model, and its NaN replacements."""
    if not board.published_rows:
        return ()
    from sourcesum.published import published_methods

    rows = {r.ranker: r for r in board.published_rows}
    notes = []
    for method in published_methods():
        row = rows.get(method.ranker)
        if row is None:
            continue
        nan = []
        for split in board.splits:
            replaced, all_nan = row.nan_replaced.get(split.name, (0, 0))
            if replaced:
                nan.append(
                    f"On {split.title}, {replaced:,} NaN scores were replaced by 0 as in the paper; "
                    f"in {all_nan} of its {len(split)} pairs every score was NaN, so all sentences "
                    "of those pairs tie."
                )
        notes.append(
            {
                "label": row.name,
                "description": method.description,
                "model": f"model: {method.model}" if method.model else "no model",
                "nan": " ".join(nan),
            }
        )
    return tuple(notes)


COVERAGE_HEADERS = (
    "Split",
    "Pairs",
    "Left out: 1 annotator",
    "Left out: annotator count differs across sentences",
    "k = 2 (reference = 1 annotator, binary at 1 vote)",
    "k >= 3",
    "References",
    "References with no relevant sentence",
    "Pairs without a value: left out + every reference without a relevant sentence",
)


def _human(board: Leaderboard) -> dict[str, Any]:
    """The human-agreement section as data: coverage rows, columns, one row per system (value,
    mark +1/0/-1 against the human, CI), counts of marks per column and the ceiling columns."""
    table = board.human
    if table is None:
        return {}
    measures = table.measures
    coverage = []
    for split in board.splits:
        c = table.coverage[split.name]
        coverage.append(
            [
                split.title,
                str(c["pairs"]),
                str(c["pairs_one_annotator"]),
                str(c["pairs_mixed_annotator_counts"]),
                str(c["pairs_two_annotators"]),
                str(c["pairs_three_or_more"]),
                str(c["references"]),
                " / ".join(f"{m.display_name} {c['references_without_relevant'][m.name]}" for m in measures),  # type: ignore[index]
                " / ".join(
                    f"{m.display_name} {c['pairs_excluded']} + {c['pairs_left_out'][m.name] - c['pairs_excluded']}"  # type: ignore[index]
                    for m in measures
                ),
            ]
        )
    columns = [(split, m) for split in board.splits for m in measures]
    names = {r.label: r.name for r in board.rows}
    rows = []
    for label in table.labels:
        cells = []
        for split, measure in columns:
            ci = table.ci.get((label, split.name, measure))
            mark = 0 if label == HUMAN_LABEL else table.versus_human(label, split.name, measure)
            cells.append({"value": table.mean(label, split.name, measure), "mark": mark, "ci": fmt_ci(ci)})
        rows.append({"label": names.get(label, label), "cells": cells})
    counts = []
    for split, measure in columns:
        marks = [
            table.versus_human(label, split.name, measure)
            for label in table.labels[1:]
            if (label, split.name) in table.per_pair
        ]
        undecided = f" / {marks.count(None)} ?" if None in marks else ""
        counts.append(f"{marks.count(1)} ▲ / {marks.count(0)} = / {marks.count(-1)} ▼{undecided}")
    ceiling = [f"{s.title} {m.display_name}" for s, m in columns if table.is_ceiling(s.name, m)]
    return {
        "coverage": coverage,
        "coverage_headers": list(COVERAGE_HEADERS),
        "columns": [f"{s.title} {m.display_name}" for s, m in columns],
        "rows": rows,
        "counts": counts,
        "ceiling_text": (
            "The human row is a ceiling (every other row significantly below it) in: "
            + (", ".join(ceiling) if ceiling else "no column")
            + ". Elsewhere at least one row is not significantly below it (= or ▲), so it bounds "
            "nothing there. The last line counts the rows above (▲), not significantly different "
            "from (=) and below (▼) the human."
        ),
    }


def test_record(name: str, marked: Marked) -> dict[str, Any]:
    """A test for JSON: ``name`` = Holm's adjustment of the point p-value, then its Holm-adjusted
    Monte Carlo interval (the decision's basis), the decision, the raw p with its Monte Carlo
    standard error, and the sign patterns counted (all of them when exact)."""
    return {
        name: marked.p_holm,
        f"{name}_interval": list(marked.adjusted),
        f"{name}_decision": marked.decision,
        f"{name}_raw": marked.count.p,
        f"{name}_mc_se": marked.count.standard_error,
        f"{name}_flips": marked.count.flips,
        f"{name}_exact": marked.count.exact,
    }


def records(board: Leaderboard) -> tuple[dict[str, Any], ...]:
    """One flat record per (row, split): means, CIs, p vs best and vs lead, ties, NaN counts of
    published outputs (JSON and CSV)."""
    out = []
    for row in board.rows:
        for split in board.splits:
            evaluation = row.evaluations.get(split.name)
            if evaluation is None:
                continue
            record = evaluation.summary()
            record["ranker"] = row.label
            record["name"] = row.name
            record["reference"] = row.reference
            record["published"] = row.published
            for measure in board.measures:
                key = measure.json_key
                if (split.name, measure) in row.ci:
                    record[f"{key}_ci"] = list(row.ci[(split.name, measure)])
                for name, tests in (("best", row.vs_best), ("lead", row.vs_lead)):
                    marked = tests.get((split.name, measure))
                    if marked is not None:
                        record.update(test_record(f"{key}_p_vs_{name}", marked))
            if split.name in row.ties:
                record["ties"] = row.ties[split.name]
            if split.name in row.nan_replaced:
                record["nan_replaced"], record["all_nan_pairs"] = row.nan_replaced[split.name]
            out.append(record)
    return tuple(out)


def average_records(board: Leaderboard) -> tuple[dict[str, Any], ...]:
    """One record per row with values on every board split: the Avg column's means (the mean of
    the split means), CIs and test against the Avg column's best (JSON)."""
    out = []
    for row in board.rows:
        if not all(s.name in row.evaluations for s in board.splits):
            continue
        record: dict[str, Any] = {
            "ranker": row.label,
            "name": row.name,
            "reference": row.reference,
            "published": row.published,
            "splits": [s.name for s in board.splits],
        }
        for measure in board.measures:
            key = measure.json_key
            value = row.average(measure)
            record[key] = value if math.isfinite(value) else None
            if (None, measure) in row.ci:
                record[f"{key}_ci"] = list(row.ci[(None, measure)])
            marked = row.vs_best.get((None, measure))
            if marked is not None:
                record.update(test_record(f"{key}_p_vs_best", marked))
        out.append(record)
    return tuple(out)


def human_records(board: Leaderboard) -> dict[str, Any] | None:
    """The human-agreement table for JSON: coverage per split, then one record per cell."""
    table = board.human
    if table is None:
        return None
    cells = []
    for (label, split), _ in table.per_pair.items():
        for measure in table.measures:
            cell: dict[str, Any] = {
                "system": label,
                "split": split,
                "measure": measure.name,
                "mean": table.mean(label, split, measure),
            }
            if (label, split, measure) in table.ci:
                cell["ci"] = list(table.ci[(label, split, measure)])
            if (label, split, measure) in table.vs_human:
                cell.update(test_record("p_vs_human", table.vs_human[(label, split, measure)]))
            cells.append(cell)
    return {"coverage": table.coverage, "results": cells}


def _difference_rows(board: Leaderboard, against: str) -> tuple[DifferenceRow, ...]:
    columns = columns_of(board)
    out = []
    for row in board.competing_rows:
        cells: list[tuple[float, float, float, str] | None] = []
        for column in columns:
            value = row.differences.get((against, column.split, column.measure))
            if value is None:
                cells.append(None)
                continue
            tests = row.vs_lead if against == "lead" else row.vs_zero_shot
            marked = tests.get((column.split, column.measure)) if column.split is not None else None
            if marked is None:
                decision = ""
            elif marked.decision == "significant":
                decision = "above" if value[0] > 0 else "below"
            else:
                decision = marked.decision
            cells.append((*value, decision))
        out.append(DifferenceRow(row.name, row.supervised, tuple(cells)))
    return tuple(out)


def lead_marks(board: Leaderboard) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """:attr:`BoardView.lead_marks` of ``board``."""
    lead = board.lead
    if lead is None:
        return ()
    columns = [c for c in columns_of(board) if c.split is not None]
    out = []
    for row in board.competing_rows:
        marks = []
        for column in columns:
            assert column.split is not None
            marked = row.vs_lead.get((column.split, column.measure))
            if marked is None:
                marks.append("")
            elif marked.decision == "significant":
                above = row.mean(column.split, column.measure) > lead.mean(column.split, column.measure)
                marks.append("above" if above else "below")
            else:
                marks.append(marked.decision)
        out.append((row.name, tuple(marks)))
    return tuple(out)


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rho: Pearson's r of the tie-averaged ranks (``scipy.stats.spearmanr``'s value,
    without importing scipy.stats, which costs about a second)."""
    ranks = pd.DataFrame({"a": a, "b": b}).rank(method="average")
    return float(np.corrcoef(ranks["a"], ranks["b"])[0, 1])


def same_method(a: Row, b: Row) -> bool:
    """Rows of two boards that run one method: the same label, or the same registered ranker
    whose parameters differ only where complete entries score alike
    (:meth:`~sourcesum.rankers.base.Ranker.same_scores_when_complete`)."""
    from sourcesum.rankers import RANKERS

    if a.ranker != b.ranker:
        return False
    if a.label == b.label:
        return True
    return a.ranker in RANKERS and RANKERS.get(a.ranker).same_scores_when_complete(a.params, b.params)


def _counterpart(row: Row, board: Leaderboard) -> Row | None:
    """The zero-shot row of ``board`` that runs ``row``'s method: the one with its label, else
    the only one that :func:`same_method` matches (None when there is none, or several)."""
    matches = [t for t in board.zero_shot_rows if not t.reference and same_method(row, t)]
    exact = [t for t in matches if t.label == row.label]
    if exact:
        return exact[0]
    return matches[0] if len(matches) == 1 else None


def _policy_note(name: str, ranker: str, rows: Sequence[tuple[str, Row]]) -> tuple[str, str]:
    """One sentence on a method whose rows differ in an unscorable-policy parameter: ``(row
    name, the sentence after it)``."""
    from sourcesum.rankers import RANKERS

    cls = RANKERS.get(ranker)
    specs = cls.parameters()
    parts, defaults = [], []
    for key in sorted({k for _, r in rows for k in r.params}):
        if not specs[key][0].unscorable_policy:
            continue
        default = cls.default_of(key)
        by_value: dict[Any, list[str]] = {}
        for title, r in rows:
            by_value.setdefault(r.params.get(key, default), []).append(title)
        if len(by_value) > 1:
            parts += [f"{key}={value} on {' and '.join(titles)}" for value, titles in by_value.items()]
            defaults.append(f"{key}={default}")
    return (
        name,
        f"runs with {', '.join(parts)}. These rows are one method: {' and '.join(defaults)} "
        "(the default) stops on every pair another value would change, so its complete entries "
        "hold the scores that value gives, within the ranker's reproduction tolerance.",
    )


def transfer_view(board: Leaderboard) -> TransferView | None:
    """:class:`TransferView` of a board and its tasks (None without tasks)."""
    if not board.tasks:
        return None
    boards = [board, *board.tasks]
    measure = board.measures[0]
    matched: dict[str, list[Row]] = {}
    for r in board.zero_shot_rows:
        others = [_counterpart(r, b) for b in boards[1:]]
        if all(t is not None for t in others):
            matched[r.label] = [r, *(t for t in others if t is not None)]
    common = list(matched)
    values = [
        {label: rows[i].average(measure) for label, rows in matched.items()} for i in range(len(boards))
    ]
    ranks = []
    for per_board in values:
        order = sorted(common, key=lambda label: (-per_board[label], label))
        ranks.append({label: order.index(label) + 1 for label in order})
    names = {r.label: r.name for r in board.rows}
    by_first_rank = sorted(common, key=lambda label: ranks[0][label])
    rows = tuple((names.get(label, label), tuple(rank[label] for rank in ranks)) for label in by_first_rank)
    correlations = []
    for i in range(len(boards)):
        for j in range(i + 1, len(boards)):
            rho = spearman([values[i][x] for x in common], [values[j][x] for x in common])
            correlations.append((boards[i].dataset.title, boards[j].dataset.title, float(rho)))
    notes = tuple(
        _policy_note(
            names.get(label, label),
            matched[label][0].ranker,
            [(b.dataset.title, r) for b, r in zip(boards, matched[label], strict=True)],
        )
        for label in by_first_rank
        if len({r.label for r in matched[label]}) > 1
    )
    return TransferView(
        tuple(b.dataset.title for b in boards),
        measure.display_name,
        rows,
        tuple(correlations),
        notes,
        _left_out(boards, [r for rows_ in matched.values() for r in rows_]),
    )


def _left_out(
    boards: Sequence[Leaderboard], summarized: Sequence[Row]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """:attr:`TransferView.left_out`: each zero-shot row of any board not in the summary (once per
    name), grouped by why: the boards it has no counterpart on, where there is none or only
    other configurations of its ranker."""
    kept = {id(r) for r in summarized}
    seen: set[str] = set()
    by_reason: dict[str, list[str]] = {}
    for board in boards:
        for row in board.zero_shot_rows:
            name = row.name or row.label
            if id(row) in kept or name in seen:
                continue
            seen.add(name)
            missing: dict[str, list[str]] = {}
            for other in boards:
                if other is not board and _counterpart(row, other) is None:
                    kin = any(t.ranker == row.ranker for t in other.zero_shot_rows)
                    missing.setdefault("another configuration on" if kin else "not on", []).append(
                        other.dataset.title
                    )
            reason = "; ".join(f"{what} {' and '.join(titles)}" for what, titles in missing.items())
            by_reason.setdefault(reason or "matched ambiguously", []).append(name)
    return tuple((reason, tuple(names)) for reason, names in by_reason.items())


def heldout_view(board: Leaderboard) -> HeldOutView:
    """The view of a held-out board (:mod:`sourcesum.board.heldout`)."""
    return HeldOutView(
        board=build_view(board),
        zero_shot_best=tuple(
            board.row(board.zero_shot_best[(c.split, c.measure)]).name
            if (c.split, c.measure) in board.zero_shot_best
            else ""
            for c in columns_of(board)
        ),
        against_lead=_difference_rows(board, "lead"),
        against_zero_shot=_difference_rows(board, "zero-shot"),
        shared_documents=shared_documents(board),
        same_corpus_gaps=same_corpus_gaps(board),
    )


def split_labels(board: Leaderboard) -> tuple[SplitLabels, ...]:
    """:class:`SplitLabels` of each board split."""
    out = []
    for split in board.splits:
        qrels = Qrels.of_split(split)
        undefined = []
        for measure in board.measures:
            relevant = qrels.relevance(measure.relevance).any(axis=1)  # padding is zero
            if n := int((~relevant).sum()):
                undefined.append((measure.display_name, n))
        notes = board.dataset.label_notes(board.dataset.split_spec(split.name))
        out.append(SplitLabels(split.title, len(split), notes, tuple(undefined)))
    return tuple(out)


def build_view(board: Leaderboard) -> BoardView:
    """The view-model of ``board`` (module docstring)."""
    columns = columns_of(board)
    titles = {s.name: s.title for s in board.splits}
    coverage = tuple(
        (row.name, tuple(titles[s] for s in titles if s in row.evaluations))
        for row in board.published_rows
        if len(row.evaluations) < len(board.splits)
    )
    ties = tie_columns(board.measures)
    views = {id(r): _row_view(board, r, columns) for r in board.rows}
    return BoardView(
        dataset=board.dataset,
        measures=tuple(board.measures),
        splits=tuple((s.name, s.title, len(s)) for s in board.splits),
        columns=columns,
        ranked=tuple(views[id(r)] for r in board.ranked_rows),
        published=tuple(views[id(r)] for r in board.published_rows),
        reference=tuple(views[id(r)] for r in board.reference_rows),
        ordered=tuple(views[id(r)] for r in board.rows),
        lead=_lead(board),
        ranker_notes=_ranker_notes(board),
        environment_notes=tuple(note for row in board.rows for note in environment_notes(row)),
        published_notes=_published_notes(board),
        published_coverage=coverage,
        human=_human(board),
        tie_columns=ties,
        ties=_ties(board, ties),
        stale=tuple(board.stale),
        scores_from=board.scores_from,
        inputs_sha256=board.inputs_sha256,
        regenerate=board.regenerate,
        records=records(board),
        average_records=average_records(board),
        human_records=human_records(board),
        heldout=heldout_view(board.heldout) if board.heldout is not None else None,
        heldout_pending=board.heldout_pending,
        tasks=tuple(TaskView(t.dataset.name, t.dataset.title, t.note, build_view(t)) for t in board.tasks),
        transfer=transfer_view(board),
        lead_marks=lead_marks(board),
        labels=split_labels(board),
    )
