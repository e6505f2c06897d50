"""How rankers transfer across boards: each zero-shot method on every board, its ranks, and the
boards' rank correlations (the metrics kernel's Spearman)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sourcesum.board.model import Leaderboard, RankerFacts, Row
from sourcesum.board.view.types import TransferView
from sourcesum.data import dataset
from sourcesum.evaluation.metrics import spearman


def same_method(a: Row, b: Row) -> bool:
    """Rows of two boards that run one method: the same label, or the same registered ranker
    whose parameters differ only where complete entries score alike, or in the training protocol
    where both rows are fitted outside the scored corpus on one dataset's board pairs: every
    parameter equal (a missing one holds its default), except

    * an unscorable-policy parameter where one side holds its default
      (:meth:`~sourcesum.rankers.base.Ranker.same_scores_when_complete`), and
    * the training-protocol parameter where both rows fit on the board pairs of one dataset,
      none of the scored corpus (:attr:`Row.outside_source`: e.g. ``cross-corpus`` on SourceSum
      and ``from-sourcesum`` on a task),

    read from the rows' :class:`~sourcesum.board.model.RankerFacts`."""
    if a.ranker != b.ranker:
        return False
    if a.label == b.label:
        return True
    facts = a.facts
    if not facts.known:
        return False
    for key in sorted(set(a.params) | set(b.params)):
        if key not in facts.defaults:
            return False
        default = facts.defaults[key]
        x, y = a.params.get(key, default), b.params.get(key, default)
        if x == y:
            continue
        if key in facts.policies and default in (x, y):
            continue
        if key in facts.protocol_params and a.outside_source is not None:
            if a.outside_source == b.outside_source:
                continue
        return False
    return True


def _counterpart(row: Row, board: Leaderboard) -> Row | None:
    """The zero-shot row of ``board`` that runs ``row``'s method: the one with its label, else
    the only one that :func:`same_method` matches (None when there is none, or several)."""
    matches = [t for t in board.zero_shot_rows if not t.reference and same_method(row, t)]
    exact = [t for t in matches if t.label == row.label]
    if exact:
        return exact[0]
    return matches[0] if len(matches) == 1 else None


def _method_note(name: str, facts: RankerFacts, rows: Sequence[tuple[str, Row]]) -> tuple[str, str]:
    """One sentence on a method whose rows differ in an unscorable-policy or training-protocol
    parameter (:func:`same_method`): ``(row name, the sentence after it)``."""
    parts: list[str] = []
    defaults: list[str] = []
    protocols = False
    for key in sorted({k for _, r in rows for k in r.params}):
        if key not in facts.policies | facts.protocol_params:
            continue
        default = facts.defaults[key]
        by_value: dict[Any, list[str]] = {}
        for title, r in rows:
            by_value.setdefault(r.params.get(key, default), []).append(title)
        if len(by_value) > 1:
            parts += [f"{key}={value} on {' and '.join(where)}" for value, where in by_value.items()]
            if key in facts.protocol_params:
                protocols = True
            else:
                defaults.append(f"{key}={default}")
    why = []
    if defaults:
        why.append(
            f"{' and '.join(defaults)} (the default) stops on every pair another value would change, "
            "so its complete entries hold the scores that value gives, within the ranker's "
            "reproduction tolerance"
        )
    if protocols:
        source = dataset(str(rows[0][1].outside_source)).title
        why.append(f"each is fitted on {source}'s board pairs, none of the scored corpus")
    return name, f"runs with {', '.join(parts)}. These rows are one method: {'; '.join(why)}."


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
        _method_note(
            names.get(label, label),
            matched[label][0].facts,
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
        tuple(b.dataset.name for b in boards),
        measure.json_key,
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
