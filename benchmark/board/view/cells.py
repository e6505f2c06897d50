"""A board's rows as shown: columns, cells with their marks and CIs, the comparisons with
``lead``, the notes, and what the board states about its splits' labels."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sourcesum.board.model import BoardStats, Leaderboard, Row
from sourcesum.board.view.types import Cell, Column, LeadComparison, RowView, SplitLabels
from sourcesum.evaluation.measures import Measure
from sourcesum.evaluation.qrels import Qrels
from sourcesum.store.entry import agreed_libraries
from sourcesum.util.numbers import fmt


def columns_of(board: Leaderboard) -> tuple[Column, ...]:
    """(header, split or None for the average, measure) for every numeric column."""
    columns = [Column(f"{s.title} {m.display_name}", s.name, m) for s in board.splits for m in board.measures]
    columns += [Column(f"Avg {m.display_name}", None, m) for m in board.measures]
    return tuple(columns)


def cell_mark(board: Leaderboard, stats: BoardStats, row: Row, split: str | None, measure: Measure) -> str:
    """``"best"`` (the column's best competing row), ``"tied"`` (not significantly worse than the
    best), ``"undecided"`` (the test against the best is not decided at the resampling cap) or
    ``""``; reference rows and missing values are never marked."""
    if row.reference or not math.isfinite(row.value(split, measure)):
        return ""
    if board.best.get((split, measure)) == row.label:
        return "best"
    decision = stats.of(row).versus_best(split, measure)
    return {"not significant": "tied", "undecided": "undecided"}.get(decision, "")


def row_view(board: Leaderboard, stats: BoardStats, row: Row, columns: Sequence[Column]) -> RowView:
    """The :class:`RowView` of ``row``."""
    cells = []
    for column in columns:
        value = row.value(column.split, column.measure)
        cells.append(
            Cell(
                value,
                fmt(value),
                cell_mark(board, stats, row, column.split, column.measure),
                stats.of(row).ci.get((column.split, column.measure)),
            )
        )
    entries = [(s.title, row.entries[s.name]) for s in board.splits if s.name in row.entries]
    kind = "reference" if row.reference else "published" if row.published else "ranked"
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
        same_as=row.same_as,
        libraries=tuple(libraries) if not row.published else (),
        reference=row.reference,
        published=row.published,
        summaries=tuple(
            (s.name, row.evaluations[s.name].summary()) for s in board.splits if s.name in row.evaluations
        ),
        stats=stats.of(row),
        nan_replaced=dict(row.nan_replaced),
        complete=all(s.name in row.evaluations for s in board.splits),
    )


def lead_comparisons(board: Leaderboard, stats: BoardStats) -> tuple[LeadComparison, ...]:
    """Per split column, the rows significantly better than ``lead`` and those compared."""
    out = []
    for split in board.splits:
        for measure in board.measures:
            family = [r for r in board.competing_rows if (split.name, measure) in stats.of(r).vs_lead]
            if family:
                better = stats.against_lead(board, split.name, measure)
                out.append(
                    LeadComparison(
                        f"{split.title} {measure.display_name}",
                        tuple(r.name for r in better),
                        tuple(r.name for r in family),
                        tuple(r.name for r in stats.against_lead(board, split.name, measure, "undecided")),
                    )
                )
    return tuple(out)


def lead_marks(board: Leaderboard, stats: BoardStats) -> tuple[tuple[str, tuple[str, ...]], ...]:
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
            marked = stats.of(row).vs_lead.get((column.split, column.measure))
            if marked is None:
                marks.append("")
            elif marked.decision == "significant":
                above = row.mean(column.split, column.measure) > lead.mean(column.split, column.measure)
                marks.append("above" if above else "below")
            else:
                marks.append(marked.decision)
        out.append((row.name, tuple(marks)))
    return tuple(out)


def ranker_notes(board: Leaderboard) -> tuple[tuple[str, str], ...]:
    """``(ranker, note)`` for every ranker on the board that has a board note (its
    :class:`~sourcesum.board.model.RankerFacts`), in row order."""
    out: list[tuple[str, str]] = []
    for row in board.ranked_rows:
        if row.facts.note and row.ranker not in [name for name, _ in out]:
            out.append((row.ranker, row.facts.note))
    return tuple(out)


def published_notes(board: Leaderboard) -> tuple[dict[str, str], ...]:
    """Per published row: label, what was run, its model, and its NaN replacements."""
    if not board.published_rows:
        return ()
    from sourcesum.store.published import published_methods

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


def environment_notes(row: Row) -> list[tuple[str, str]]:
    """Where a row's splits were computed under different library versions (the harness's own
    excepted) or provenance: ``(row name, what differs)``, else nothing."""
    seen: dict[str, dict[str, set[str]]] = {"libraries": {}, "provenance": {}}
    for entry in row.entries.values():
        for kind, values in (
            ("libraries", agreed_libraries(entry.libraries)),
            ("provenance", entry.provenance),
        ):
            for name, value in values.items():
                seen[kind].setdefault(name, set()).add(value)
    differ = [
        f"{name} ({', '.join(sorted(v))})"
        for kind in seen.values()
        for name, v in sorted(kind.items())
        if len(v) > 1
    ]
    return (
        [(row.name or row.label, f"its splits were computed under different versions of {', '.join(differ)}")]
        if differ
        else []
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
