"""The board's values: the collected board (rows with their evaluations, and the facts about
them known when they were collected) and, apart from it, the statistics computed over it.

Row kinds: *ranked* (store entries of rankers), *published* (a published system's outputs, on
the splits it was published on) and *reference* (e.g. the oracle; not compared). Ranked and
published rows *compete*: they share the best-of-column, the significance tests and the test
against ``lead``. *Supervised* ranked rows (trained on labels under a protocol) compete too;
outputs may show them apart.

:func:`~sourcesum.board.collect.collect_declared` makes a :class:`Leaderboard`;
:func:`~sourcesum.board.statistics.board_statistics` returns its :class:`BoardStats` (CIs,
tests, tie reports, the human table), never writing into the board; the view reads both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sourcesum.data import Dataset, Split
from sourcesum.errors import UnknownNameError
from sourcesum.evaluation.evaluate import Evaluation
from sourcesum.evaluation.human import HUMAN_LABEL
from sourcesum.evaluation.measures import AP, NDCG, Measure
from sourcesum.stats.significance import Marked
from sourcesum.store.entry import ScoreEntry

LEADERBOARD_MEASURES = (NDCG, AP)
"""The board's default measures: the paper's two."""


@dataclass
class HumanAgreement:
    """The human-agreement table: per (system label, split) the per-pair agreement values, and
    once statistics are added, CIs and Holm-adjusted p-values against the human."""

    measures: tuple[Measure, ...]
    labels: list[str] = field(default_factory=list)
    """The human first, then the compared rows."""
    per_pair: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict)
    coverage: dict[str, dict[str, object]] = field(default_factory=dict)
    ci: dict[tuple[str, str, Measure], tuple[float, float]] = field(default_factory=dict)
    vs_human: dict[tuple[str, str, Measure], Marked] = field(default_factory=dict)
    """The test of a row against the human: count, Holm-adjusted interval, decision."""

    def mean(self, label: str, split: str, measure: Measure) -> float:
        frame = self.per_pair.get((label, split))
        if frame is None:
            return float("nan")
        values = frame[measure.name].to_numpy()
        return float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")

    def versus_human(self, label: str, split: str, measure: Measure) -> int | None:
        """+1 / -1 if ``label`` is significantly above / below the human, 0 if not
        significantly different or untested, None if undecided at the resampling cap."""
        marked = self.vs_human.get((label, split, measure))
        if marked is None or marked.decision == "not significant":
            return 0
        if marked.decision == "undecided":
            return None
        return 1 if self.mean(label, split, measure) > self.mean(HUMAN_LABEL, split, measure) else -1

    def is_ceiling(self, split: str, measure: Measure) -> bool:
        """The human is a ceiling in a column when every compared row is significantly below it."""
        others = [label for label in self.labels[1:] if (label, split) in self.per_pair]
        return bool(others) and all(self.versus_human(label, split, measure) == -1 for label in others)


@dataclass(frozen=True)
class RankerFacts:
    """What a row's ranker class says that the board shows, read when the row is collected (so
    the view needs no ranker): its board note, its parameters' defaults, and which of them are
    unscorable policies (:attr:`~sourcesum.params.Param.unscorable_policy`) or name its training
    protocol."""

    known: bool = False
    """The ranker is installed (published rows and rankers not installed have no facts)."""
    note: str = ""
    defaults: dict[str, Any] = field(default_factory=dict)
    policies: frozenset[str] = frozenset()
    protocol_params: frozenset[str] = frozenset()
    """Parameters naming the training protocol (:attr:`~sourcesum.params.Param.training_protocol`)."""


@dataclass
class RowStats:
    """The statistics of one row (:func:`~sourcesum.board.statistics.board_statistics`)."""

    ci: dict[tuple[str | None, Measure], tuple[float, float]] = field(default_factory=dict)
    vs_best: dict[tuple[str | None, Measure], Marked] = field(default_factory=dict)
    """The test against the column's best (split columns and, ``None``, the Avg column): the
    Monte Carlo count, the Holm-adjusted interval and the decision
    (:mod:`sourcesum.stats.significance`)."""
    vs_lead: dict[tuple[str, Measure], Marked] = field(default_factory=dict)
    """The test against ``lead`` (competing rows, split columns)."""
    vs_zero_shot: dict[tuple[str, Measure], Marked] = field(default_factory=dict)
    """Held-out boards: the test against the column's best zero-shot row."""
    differences: dict[tuple[str, str | None, Measure], tuple[float, float, float]] = field(
        default_factory=dict
    )
    """Held-out boards: ``(against, split or None for Avg, measure) -> (mean difference, CI low,
    CI high)``, ``against`` = ``lead`` or ``zero-shot`` (the column's best zero-shot row)."""
    ties: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per split, the tie report of the row's entry."""

    def versus_best(self, split: str | None, measure: Measure) -> str:
        """``not significant`` (not significantly worse than the best), ``significant``
        (significantly worse), ``undecided`` (at the resampling cap) or ``untested``."""
        marked = self.vs_best.get((split, measure))
        return marked.decision if marked is not None else "untested"


@dataclass
class BoardStats:
    """The statistics of a board: per row (by label), the human-agreement table, and those of
    its held-out test and task boards."""

    rows: dict[str, RowStats] = field(default_factory=dict)
    human: HumanAgreement | None = None
    heldout: BoardStats | None = None
    tasks: list[BoardStats] = field(default_factory=list)

    def of(self, row: Row) -> RowStats:
        """The statistics of ``row`` (empty when none were computed)."""
        return self.rows.setdefault(row.label, RowStats())

    def against_lead(
        self, board: Leaderboard, split: str, measure: Measure, decision: str = "significant"
    ) -> list[Row]:
        """Competing rows above ``lead`` in a column whose test against it has ``decision``
        (``significant``: significantly better; ``undecided``: not decided at the cap)."""
        lead = board.lead
        if lead is None:
            return []
        return [
            r
            for r in board.competing_rows
            if (split, measure) in self.of(r).vs_lead
            and self.of(r).vs_lead[(split, measure)].decision == decision
            and r.mean(split, measure) > lead.mean(split, measure)
        ]


@dataclass
class Row:
    """One ranker configuration (or published system, or reference) and its evaluations."""

    label: str
    ranker: str
    params: dict[str, Any]
    reference: bool
    published: bool = False
    supervised: bool = False
    """Trained on labels under a protocol (e.g. ``learned``)."""
    outside_source: str | None = None
    """Fitted under a protocol on the board pairs of this dataset, none of the scored corpus
    (:meth:`~sourcesum.runner.protocols.Protocol.outside_source`); None: untrained, or fitted where
    it may read pairs of the scored corpus."""
    name: str = ""
    """The display name (:mod:`sourcesum.board.names`); set for every row of a collected board."""
    board_splits: tuple[str, ...] = ()
    """The splits the Avg columns average (the board's columns)."""
    entries: dict[str, ScoreEntry] = field(default_factory=dict)
    evaluations: dict[str, Evaluation] = field(default_factory=dict)
    facts: RankerFacts = field(default_factory=lambda: RankerFacts())
    """What the board states about the row's ranker, read from its class when collected."""
    nan_replaced: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Published rows: per split, (NaN scores replaced by 0, pairs whose scores were all NaN)."""
    same_as: tuple[str, ...] = ()
    """The labels of other configurations whose scores agree with this row's, shown as this row
    (:mod:`sourcesum.board.agreeing`, ``leaderboard --all``)."""

    def mean(self, split: str, measure: Measure) -> float:
        evaluation = self.evaluations.get(split)
        return evaluation.mean(measure) if evaluation else float("nan")

    def average(self, measure: Measure) -> float:
        """Unweighted mean of the board splits' means (NaN unless all are present)."""
        values = [self.mean(s, measure) for s in self.board_splits]
        return float(np.mean(values)) if values and all(np.isfinite(values)) else float("nan")

    def value(self, split: str | None, measure: Measure) -> float:
        """The split mean, or the board average when ``split`` is None."""
        return self.average(measure) if split is None else self.mean(split, measure)


@dataclass(frozen=True)
class HeldOutProgress:
    """A declared held-out test whose entries are not all complete yet: it is reported once,
    when every declared entry is complete, and until then only this progress is shown."""

    rows: int
    """Declared held-out rows."""
    splits: tuple[tuple[str, str, int], ...]
    """(name, title, pairs) of each held-out split."""
    entries: int
    """Declared (row, split) entries: rows x splits."""
    complete: int
    """Entries complete and valid."""
    scored: int
    """Pairs scored over every declared entry (partial entries included)."""
    pairs: int
    """Pairs to score over every declared entry."""
    to_compute: tuple[str, ...]
    """What is missing or partial, each with the command that computes or resumes it."""


@dataclass
class Leaderboard:
    """Rows on one dataset's board splits, ordered by the Avg of the first measure."""

    dataset: Dataset
    splits: list[Split]
    rows: list[Row]
    stale: list[str]
    measures: tuple[Measure, ...] = LEADERBOARD_MEASURES
    best: dict[tuple[str | None, Measure], str] = field(default_factory=dict)
    heldout: Leaderboard | None = None
    """The declared held-out test: a board of its own over the held-out splits."""
    heldout_pending: HeldOutProgress | None = None
    """The declared held-out test while some of its entries are missing or partial."""
    tasks: list[Leaderboard] = field(default_factory=list)
    """Other datasets' boards declared beside this one (``[[tasks]]``)."""
    note: str = ""
    """A task board's declared note (Markdown)."""
    inputs_sha256: str = ""
    """The sha256 of the board's inputs (:func:`sourcesum.board.collect.inputs_sha256`)."""
    merged: list[str] = field(default_factory=list)
    """Configurations shown as another row, their scores agreeing (``leaderboard --all``), in words."""
    zero_shot_best: dict[tuple[str | None, Measure], str] = field(default_factory=dict)
    """Held-out boards: the label of each column's best zero-shot competing row."""

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
    def zero_shot_rows(self) -> list[Row]:
        """Competing rows trained on no label."""
        return [r for r in self.competing_rows if not r.supervised]

    @property
    def lead(self) -> Row | None:
        """The competing row of the ``lead`` ranker, if there is exactly one."""
        leads = [r for r in self.competing_rows if r.ranker == "lead"]
        return leads[0] if len(leads) == 1 else None

    def row(self, name: str) -> Row:
        """The row labelled or named ``name``, else the only row of ranker ``name``."""
        matches = (
            [r for r in self.rows if r.label == name]
            or [r for r in self.rows if r.name == name]
            or [r for r in self.rows if r.ranker == name]
        )
        if len(matches) != 1:
            raise UnknownNameError(
                f"no single leaderboard row for {name!r}; rows: {', '.join(r.name or r.label for r in self.rows)}"
            )
        return matches[0]

    def split(self, name: str) -> Split:
        return next(s for s in self.splits if s.name == name)
