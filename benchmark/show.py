"""The per-pair view: the summary, then every sentence with its votes and each ranker's
score and rank (1 = ranked first; tied scores share their best rank)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from sourcesum.data import Pair, load_split, split_names
from sourcesum.errors import UnknownNameError
from sourcesum.leaderboard import Leaderboard


def find_pair(pair_id: str) -> Pair:
    """The pair with this id, searched in every split (main splits first)."""
    for name in split_names():
        pair = load_split(name).by_id.get(pair_id)
        if pair is not None:
            return pair
    raise UnknownNameError(
        f"no pair {pair_id!r} in any split; ids look like xsum__test__19296638__pegasus-xsum__0"
    )


def _ranks(scores: Sequence[float]) -> list[int]:
    return [1 + sum(other > value for other in scores) for value in scores]


def default_rows(board: Leaderboard, declared_labels: Sequence[str], count: int = 4) -> list[str]:
    """The ``count`` best declared ranked rows of ``board`` (by average of its first measure)."""
    ranked = [r.label for r in board.ranked_rows if r.label in declared_labels]
    return ranked[:count]


def pair_view(pair: Pair, board: Leaderboard, rankers: Sequence[str] | None) -> dict[str, Any]:
    """JSON-ready view of a pair with the chosen rankers' scores (all with scores by default)."""
    rows = (
        [board.row(name) for name in rankers]
        if rankers
        else [r for r in board.rows if pair.split in r.entries]
    )
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
        columns[row.label] = (scores, _ranks(scores))
    for i, sentence in enumerate(pair.sentences):
        view["sentences"].append(
            {
                "index": i,
                "text": sentence,
                "votes": list(pair.votes[i]),
                "graded": int(pair.graded[i]),
                "scores": {label: {"score": s[i], "rank": r[i]} for label, (s, r) in columns.items()},
            }
        )
    return view


CELL = 15
"""Width of one ranker's ``rank (score)`` cell in :func:`format_view`."""


def format_view(view: dict[str, Any], width: int = 100) -> str:
    """Terminal view at most ``width`` columns wide: a legend naming each ranker column by a
    letter, then per sentence one line of index, votes and each ranker's rank and score, and the
    sentence wrapped beneath it. Too many rankers for the width is an error suggesting --json."""
    labels = view["rankers"]
    fixed = 2 + 2 + 9
    if fixed + CELL * len(labels) > width:
        fit = (width - fixed) // CELL
        raise UnknownNameError(
            f"{len(labels)} rankers do not fit in {width} columns (at most {fit}); choose them with "
            "--ranker A,B or use --json"
        )
    wrap = textwrap.TextWrapper(width=width - 4, initial_indent="    ", subsequent_indent="    ")
    lines = [f"pair {view['id']} ({view['split']})"]
    lines += textwrap.wrap("summary: " + view["summary"], width, subsequent_indent="         ")
    lines.append("")
    letters = [chr(ord("A") + i) for i in range(len(labels))]
    for letter, label in zip(letters, labels, strict=False):  # long labels (e.g. learned rows) wrap
        lines += textwrap.wrap(f"{letter} = {label}", width, initial_indent="  ", subsequent_indent="      ")
    lines.append("")
    header = f"{'#':>2}  {'votes':<9}" + "".join(f"{letter + ' rank (score)':>{CELL}}" for letter in letters)
    lines += [header, "-" * len(header)]
    for s in view["sentences"]:
        cells = "".join(
            f"{s['scores'][label]['rank']:>4} ({_short(s['scores'][label]['score'])})".rjust(CELL)
            for label in labels
        )
        lines.append(f"{s['index']:>2}  {','.join(map(str, s['votes'])):<9}{cells}")
        lines += wrap.wrap(s["text"]) or [""]
    return "\n".join(lines)


def _short(value: float) -> str:
    """A score in at most 6 characters."""
    text = f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}" if abs(value) < 1000 else f"{value:.0e}"
    return text[:6]
