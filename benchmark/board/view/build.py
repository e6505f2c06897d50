"""The view-model of a board and its statistics: :func:`build_view`."""

from __future__ import annotations

from sourcesum.board.heldout import same_corpus_gaps, shared_documents
from sourcesum.board.model import BoardStats, Leaderboard
from sourcesum.board.view.cells import (
    columns_of,
    environment_notes,
    lead_comparisons,
    lead_marks,
    published_notes,
    ranker_notes,
    row_view,
    split_labels,
)
from sourcesum.board.view.heldout import difference_rows
from sourcesum.board.view.human import human_section
from sourcesum.board.view.ties import tie_columns, tie_rows
from sourcesum.board.view.transfer import transfer_view
from sourcesum.board.view.types import BoardView, HeldOutView, TaskView


def build_view(board: Leaderboard, stats: BoardStats | None = None) -> BoardView:
    """The view-model of ``board`` and its statistics ``stats`` (none: a board shown without
    CIs or marks)."""
    stats = BoardStats() if stats is None else stats
    columns = columns_of(board)
    titles = {s.name: s.title for s in board.splits}
    coverage = tuple(
        (row.name, tuple(titles[s] for s in titles if s in row.evaluations))
        for row in board.published_rows
        if len(row.evaluations) < len(board.splits)
    )
    ties = tie_columns(board.measures)
    views = {id(r): row_view(board, stats, r, columns) for r in board.rows}
    return BoardView(
        dataset=board.dataset,
        measures=tuple(board.measures),
        splits=tuple((s.name, s.title, len(s)) for s in board.splits),
        columns=columns,
        ranked=tuple(views[id(r)] for r in board.ranked_rows),
        published=tuple(views[id(r)] for r in board.published_rows),
        reference=tuple(views[id(r)] for r in board.reference_rows),
        ordered=tuple(views[id(r)] for r in board.rows),
        lead=lead_comparisons(board, stats),
        ranker_notes=ranker_notes(board),
        environment_notes=tuple(note for row in board.rows for note in environment_notes(row)),
        published_notes=published_notes(board),
        published_coverage=coverage,
        human=human_section(board, stats),
        tie_columns=ties,
        ties=tie_rows(board, stats, ties),
        stale=tuple(board.stale),
        inputs_sha256=board.inputs_sha256,
        unpinned=unpinned_splits(board),
        human_table=stats.human,
        heldout=heldout_view(board.heldout, stats.heldout or BoardStats())
        if board.heldout is not None
        else None,
        heldout_pending=board.heldout_pending,
        tasks=tuple(
            TaskView(t.dataset.name, t.dataset.title, t.note, build_view(t, s))
            for t, s in zip(board.tasks, stats.tasks or [BoardStats() for _ in board.tasks], strict=True)
        ),
        transfer=transfer_view(board),
        lead_marks=lead_marks(board, stats),
        labels=split_labels(board),
    )


def unpinned_splits(board: Leaderboard) -> tuple[str, ...]:
    """The splits of ``board``, its held-out test and its tasks read from unpinned files."""
    boards = [board, *([board.heldout] if board.heldout is not None else []), *board.tasks]
    return tuple(dict.fromkeys(s.name for b in boards for s in b.splits if s.unpinned))


def heldout_view(board: Leaderboard, stats: BoardStats) -> HeldOutView:
    """The view of a held-out board (:mod:`sourcesum.board.heldout`)."""
    return HeldOutView(
        board=build_view(board, stats),
        zero_shot_best=tuple(
            board.row(board.zero_shot_best[(c.split, c.measure)]).name
            if (c.split, c.measure) in board.zero_shot_best
            else ""
            for c in columns_of(board)
        ),
        against_lead=difference_rows(board, stats, "lead"),
        against_zero_shot=difference_rows(board, stats, "zero-shot"),
        shared_documents=shared_documents(board),
        same_corpus_gaps=same_corpus_gaps(board),
    )
