"""Per-pair views: one pair's summary, sentences, votes and every row's scores and ranks
(``sourcesum show``), and a split's explorer data (the site).

Ranks are 1-based (1 = first) with tied scores sharing their best rank; scores are exact here
(the site rounds them for display). Votes and graded relevance come from the split's judgments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sourcesum.board.model import Leaderboard, Row
from sourcesum.data import Pair, Split, dataset_of, load_split, split_names, split_spec
from sourcesum.errors import UnknownNameError

SCORE_DIGITS = 4
"""Significant digits of the scores shown in the explorer."""


def find_pair(pair_id: str) -> tuple[Split, Pair]:
    """The split holding pair ``pair_id`` and the pair, searched in every split (board splits
    first), splits with a local copy before those that would need a download."""
    names = split_names()
    local = [n for n in names if dataset_of(n).available(split_spec(n))]
    for name in local + [n for n in names if n not in local]:
        split = load_split(name)
        pair = split.by_id.get(pair_id)
        if pair is not None:
            return split, pair
    example = load_split(split_names()[0]).pairs[0].id
    raise UnknownNameError(
        f"no pair {pair_id!r} in any split; ids look like {example} (`sourcesum show --list SPLIT` lists them)"
    )


def ranks(scores: Sequence[float]) -> list[int]:
    """1-based rank of each score, tied scores sharing their best rank: ``1 + #{j: s_j > s_i}``."""
    import numpy as np

    values = np.asarray(scores, dtype=float)
    ascending = np.sort(values)
    return [int(n) for n in 1 + len(values) - np.searchsorted(ascending, values, side="right")]


def explorer_ranks(scores: Sequence[float], shown: Sequence[float]) -> dict[str, int] | None:
    """The exact ranks of the sentences whose rank among the ``shown`` (rounded) ``scores``
    differs from their rank among the exact ones, keyed by the sentence's index as a string
    (``None`` where none differs). Rounding is monotone, so only sentences whose distinct scores
    it merged change rank; the explorer ranks the shown scores itself, by the same rule, and
    takes these ranks over its own."""
    exact, rounded = ranks(scores), ranks(shown)
    changed = {str(i): e for i, (e, r) in enumerate(zip(exact, rounded, strict=True)) if e != r}
    return changed or None


def default_rows(board: Leaderboard, declared_labels: Sequence[str], count: int = 4) -> list[str]:
    """The ``count`` best declared ranked rows of ``board`` (by average of its first measure)."""
    return [r.label for r in board.ranked_rows if r.label in declared_labels][:count]


def pair_view(split: Split, pair: Pair, board: Leaderboard, rankers: Sequence[str] | None) -> dict[str, Any]:
    """JSON-ready view of a pair with the chosen rows' scores (all rows with scores by default)."""
    rows: list[Row] = (
        [board.row(name) for name in rankers]
        if rankers
        else [r for r in board.rows if pair.split in r.entries]
    )
    judgment = split.judgment(pair.id)
    view: dict[str, Any] = {
        "id": pair.id,
        "split": pair.split,
        "summary": pair.summary,
        "sentences": [],
        "rankers": [r.label for r in rows if pair.split in r.entries],
    }
    columns = {}
    for row in rows:
        entry = row.entries.get(pair.split)
        if entry is None:
            raise UnknownNameError(f"ranker {row.label} has no scores on split {pair.split}")
        scores = entry.scores[pair.id]
        columns[row.label] = (scores, ranks(scores))
    for i, sentence in enumerate(pair.sentences):
        view["sentences"].append(
            {
                "index": i,
                "text": sentence,
                "votes": list(judgment.votes[i]) if judgment.votes is not None else [],
                "graded": float(judgment.graded[i]) if judgment.votes is None else int(judgment.graded[i]),
                "scores": {label: {"score": s[i], "rank": r[i]} for label, (s, r) in columns.items()},
            }
        )
    return view


def _number(value: float) -> float | None:
    import math

    return float(value) if math.isfinite(value) else None


def explorer_data(board: Leaderboard, split_name: str) -> dict[str, Any]:
    """The embedded data of one split's explorer.

    ``relevance``: ``votes`` (per-annotator votes) or ``graded`` (the dataset's graded relevance
    only: each sentence's ``votes`` is then that one number). ``rankers``: the rows with scores on the split, ranked rows first (in leaderboard order),
    then published rows, then reference rows. ``measures``: the board's measures (``key``,
    ``name``). ``docs``: each distinct sentence list once (pairs of one document share it). Per
    pair: ``votes[i]`` the annotators' 0/1 votes on sentence ``i`` (or its graded relevance as a
    one-item list where the dataset has no per-annotator votes); ``scores[j][i]`` row ``j``'s score
    of sentence ``i`` (rounded to :data:`SCORE_DIGITS` significant digits); ``ranks[j]`` the
    exact rank of each sentence whose rank the rounding changed, keyed by ``str(i)`` (``null``
    where none changed: see :func:`explorer_ranks`); ``values[key][j]`` the pair's value of each measure in the board's
    evaluation of row ``j``.
    """
    split = board.split(split_name)
    rows = [
        r for r in board.ranked_rows + board.published_rows + board.reference_rows if split.name in r.entries
    ]
    per_pair = {
        m.json_key: [r.evaluations[split.name].per_pair[m.name] for r in rows] for m in board.measures
    }
    docs: dict[tuple[str, ...], int] = {}
    pairs = []
    for pair, judgment in zip(split.pairs, split.judgments, strict=True):
        doc = docs.setdefault(pair.sentences, len(docs))
        scores = [row.entries[split.name].scores[pair.id] for row in rows]
        shown = [[float(f"{s:.{SCORE_DIGITS}g}") for s in row_scores] for row_scores in scores]
        votes = (
            [list(v) for v in judgment.votes]
            if judgment.votes is not None
            else [[float(g)] for g in judgment.graded]
        )
        pairs.append(
            {
                "id": pair.id,
                "doc": doc,
                "summary": pair.summary,
                "votes": votes,
                "scores": shown,
                "ranks": [
                    explorer_ranks(exact, rounded) for exact, rounded in zip(scores, shown, strict=True)
                ],
                "values": {
                    key: [_number(column[pair.id]) for column in columns] for key, columns in per_pair.items()
                },
            }
        )
    return {
        "split": split.name,
        "title": split.title,
        "relevance": "votes" if split.judgments and split.judgments[0].votes is not None else "graded",
        "rankers": [{"label": r.label, "name": r.name or r.label, "reference": r.reference} for r in rows],
        "measures": [{"key": m.json_key, "name": m.display_name} for m in board.measures],
        "docs": [list(sentences) for sentences in docs],
        "pairs": pairs,
    }
