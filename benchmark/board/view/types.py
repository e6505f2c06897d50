"""The view-model's types: plain values every output renders (:mod:`sourcesum.outputs`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sourcesum.board.heldout import SameCorpusGap, SharedDocuments
from sourcesum.board.model import LEADERBOARD_MEASURES, HeldOutProgress, HumanAgreement, RowStats
from sourcesum.data import Dataset
from sourcesum.evaluation.measures import Measure
from sourcesum.util.numbers import fmt_ci

GROUPS: tuple[tuple[str, str], ...] = (
    ("zero-shot", "Zero-shot rankers"),
    ("supervised", "Supervised (trained on the votes)"),
    ("published", "Published systems"),
    ("reference", "References"),
)
"""The groups of a board's main table, in order: ``(key, title)`` (:attr:`RowView.group`)."""


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
    (not significantly worse than the best), ``undecided`` (:func:`~sourcesum.board.view.cells.cell_mark`) or empty."""

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
    same_as: tuple[str, ...] = ()
    """The full labels of configurations whose scores agree with this row's, shown as it
    (``leaderboard --all``)."""
    libraries: tuple[tuple[str, str], ...] = ()
    """``(library, version)`` the entries were computed with (the harness's own excepted)."""
    reference: bool = False
    published: bool = False
    summaries: tuple[tuple[str, dict[str, Any]], ...] = ()
    """``(split name, its evaluation's summary)`` per board split with an entry, in column order."""
    stats: RowStats = field(default_factory=RowStats)
    """The row's statistics (CIs, tests, tie reports)."""
    nan_replaced: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Published rows: per split, (NaN scores replaced by 0, pairs whose scores were all NaN)."""
    complete: bool = False
    """It has a value on every board split (so an Avg)."""

    @property
    def group(self) -> str:
        """The row's group (:data:`GROUPS`): ``reference``, ``published``, ``supervised`` (a
        ranker trained on the dataset's labels) or ``zero-shot``."""
        if self.reference:
            return "reference"
        if self.published:
            return "published"
        return "supervised" if self.supervised else "zero-shot"


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
    """How rankers transfer: each zero-shot method present on every board (:func:`~sourcesum.board.view.transfer.same_method`), its rank
    by the first measure's Avg on each board, and Spearman's rank correlation of the Avg values
    between each two boards over those rows."""

    boards: tuple[str, ...]
    """The boards' titles: the main board's, then each task's."""
    measure: str
    """The measure's display name."""
    rows: tuple[tuple[str, tuple[int, ...]], ...]
    correlations: tuple[tuple[str, str, float], ...]
    """``(title, title, rho)`` for each two boards."""
    policy_notes: tuple[tuple[str, str], ...] = ()
    """One sentence per method whose rows differ between boards in an unscorable-policy or a
    training-protocol parameter (:func:`~sourcesum.board.view.transfer.same_method`): which value runs where, and why the rows still match."""
    left_out: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Every zero-shot row of some board that the summary leaves out, grouped by why: ``(reason,
    names)``, e.g. ``("not on WiCE and QMSum evidence", (...))``."""
    names: tuple[str, ...] = ()
    """The boards' names (their datasets'), in the order of :attr:`boards`."""
    measure_key: str = ""
    """The measure's JSON key."""


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
    inputs_sha256: str
    unpinned: tuple[str, ...] = ()
    """The splits of the board (its held-out test and tasks included) read from files without a
    pinned sha256 (``SOURCESUM_ALLOW_UNPINNED=1``): every output says so."""
    human_table: HumanAgreement | None = None
    """The human-agreement table's values (JSON)."""
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
    def groups(self) -> tuple[tuple[str, str, tuple[RowView, ...]], ...]:
        """The main table as shown, group by group (:data:`GROUPS`): ``(key, title, rows)``, each
        group's rows in board order, empty groups left out."""
        out = []
        for key, title in GROUPS:
            rows = tuple(r for r in self.rows if r.group == key)
            if rows:
                out.append((key, title, rows))
        return tuple(out)

    @property
    def default_measures(self) -> bool:
        """The board shows the paper's measures (NDCG and MAP) only."""
        return tuple(self.measures) == LEADERBOARD_MEASURES
