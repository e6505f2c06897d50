"""The leaderboard's data model: rows (one configuration each) with their evaluations and,
once statistics are added, CIs and p-values.

Row kinds: *ranked* (store entries of rankers), *published* (a published system's outputs, on
the splits it was published on) and *reference* (e.g. the oracle; not compared). Ranked and
published rows *compete*: they share the best-of-column, the significance tests and the test
against ``lead``. *Supervised* ranked rows (trained on labels under a protocol) compete too;
outputs may show them apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sourcesum.data import Dataset, Split
from sourcesum.errors import UnknownNameError
from sourcesum.evaluation import Evaluation
from sourcesum.human import HumanAgreement
from sourcesum.measures import AP, NDCG, Measure
from sourcesum.significance import Marked
from sourcesum.store import ScoreEntry

LEADERBOARD_MEASURES = (NDCG, AP)
"""The board's default measures: the paper's two."""


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
    name: str = ""
    """The display name (:mod:`sourcesum.board.names`); set for every row of a collected board."""
    board_splits: tuple[str, ...] = ()
    """The splits the Avg columns average (the board's columns)."""
    entries: dict[str, ScoreEntry] = field(default_factory=dict)
    evaluations: dict[str, Evaluation] = field(default_factory=dict)
    ci: dict[tuple[str | None, Measure], tuple[float, float]] = field(default_factory=dict)
    vs_best: dict[tuple[str | None, Measure], Marked] = field(default_factory=dict)
    """The test against the column's best (split columns and, ``None``, the Avg column): the
    Monte Carlo count, the Holm-adjusted interval and the decision
    (:mod:`sourcesum.significance`)."""
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
    nan_replaced: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Published rows: per split, (NaN scores replaced by 0, pairs whose scores were all NaN)."""

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

    def versus_best(self, split: str | None, measure: Measure) -> str:
        """``not significant`` (not significantly worse than the best), ``significant``
        (significantly worse), ``undecided`` (at the resampling cap) or ``untested``."""
        marked = self.vs_best.get((split, measure))
        return marked.decision if marked is not None else "untested"


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
    human: HumanAgreement | None = None
    scores_from: str = "the committed files in `data/scores/`"
    """Where the rows' scores were read, in words (the Markdown header says it)."""
    regenerate: str = "`bash scripts/leaderboard.sh` (or `sourcesum leaderboard`)"
    """The command that renders this board again, in words."""
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

    def against_lead(self, split: str, measure: Measure, decision: str = "significant") -> list[Row]:
        """Competing rows above ``lead`` in a column whose test against it has ``decision``
        (``significant``: significantly better; ``undecided``: not decided at the cap)."""
        lead = self.lead
        if lead is None:
            return []
        return [
            r
            for r in self.competing_rows
            if (split, measure) in r.vs_lead
            and r.vs_lead[(split, measure)].decision == decision
            and r.mean(split, measure) > lead.mean(split, measure)
        ]

    def better_than_lead(self, split: str, measure: Measure) -> list[Row]:
        """Competing rows significantly above ``lead`` in a column (decided significant)."""
        return self.against_lead(split, measure, "significant")

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
