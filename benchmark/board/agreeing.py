"""Configurations that give the same scores, shown once (``leaderboard --all``).

Two ranked rows of one ranker *agree* when they have entries on the same splits, over the same
pairs, and every score of one is within the ranker's ``reproduction_tolerance`` of the other's
(0, bit for bit, for most rankers and for rankers that are not installed): e.g. ``attention`` and
``attention(overflow=ties)`` on splits where no document overflows the window. Agreeing rows are
shown once, the row of the shortest label (then the first in order) named with every agreeing
label (``attention = attention(overflow=ties)``); the others leave the board with a line saying
so."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sourcesum.board.model import Row
from sourcesum.rankers.base import RANKERS


def tolerance_of(ranker: str) -> float:
    """The ranker's ``reproduction_tolerance`` (0 for a ranker that is not installed)."""
    return float(getattr(RANKERS.get(ranker), "reproduction_tolerance", 0.0)) if ranker in RANKERS else 0.0


def agree(a: Row, b: Row, tolerance: float) -> bool:
    """``a`` and ``b`` have entries on the same splits and pairs, every score within ``tolerance``."""
    if a.entries.keys() != b.entries.keys() or not a.entries:
        return False
    for split, entry in a.entries.items():
        other = b.entries[split].scores
        if entry.scores.keys() != other.keys():
            return False
        for pair_id, scores in entry.scores.items():
            if len(scores) != len(other[pair_id]):
                return False
            if np.max(np.abs(np.subtract(scores, other[pair_id])), initial=0.0) > tolerance:
                return False
    return True


def _default(row: Row) -> str:
    """The row's default name (its label when its ranker is not installed)."""
    from sourcesum.board.names import default_name
    from sourcesum.runner.configs import Configuration

    return default_name(Configuration.of(row.ranker, row.params)) if row.ranker in RANKERS else row.label


def joined_name(names: Sequence[str], defaults: Sequence[str]) -> str:
    """The shown names of agreeing rows joined by `` = ``, else (too long,
    :data:`~sourcesum.board.names.MAX_NAME`) their default names joined (cut to fit when the
    board is finished)."""
    from sourcesum.board.names import MAX_NAME

    joined = " = ".join(names)
    return joined if len(joined) <= MAX_NAME else " = ".join(defaults)


def merge_agreeing(rows: Sequence[Row]) -> tuple[list[Row], list[str]]:
    """``rows`` with each group of agreeing ranked rows (module docstring) shown once, and one
    line per row left out (its label, the row it agrees with, the tolerance)."""
    kept: list[Row] = []
    groups: dict[int, list[Row]] = {}
    for row in sorted(rows, key=lambda r: (len(r.label), r.label)):
        if row.published or row.reference:
            kept.append(row)
            continue
        tolerance = tolerance_of(row.ranker)
        same = next(
            (k for k in kept if k.ranker == row.ranker and id(k) in groups and agree(k, row, tolerance)), None
        )
        if same is None:
            groups[id(row)] = [row]
            kept.append(row)
        else:
            groups[id(same)].append(row)
    notes: list[str] = []
    for row in kept:
        members = groups.get(id(row), [row])
        if len(members) == 1:
            continue
        row.same_as = tuple(m.label for m in members[1:])
        row.name = joined_name([m.name or m.label for m in members], [_default(m) for m in members])
        notes += [
            f"{m.label} is shown as {row.label}: every score within {tolerance_of(row.ranker):g} on "
            f"every split (the row {row.name!r})"
            for m in members[1:]
        ]
    order = {id(r): i for i, r in enumerate(rows)}
    return sorted(kept, key=lambda r: order[id(r)]), notes
