"""The per-pair view: the summary, then every sentence with its votes and each ranker's
score and rank (1 = ranked first; tied scores share their best rank)."""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

from sourcesum.data import Pair, load_split, split_names
from sourcesum.errors import UnknownNameError
from sourcesum.leaderboard import Leaderboard


def find_pair(pair_id: str) -> Pair:
    """The pair with this id, searched in every split (main splits first)."""
    for name in split_names():
        pair = load_split(name).by_id.get(pair_id)
        if pair is not None:
            return pair
    raise UnknownNameError(f"no pair {pair_id!r} in any split; ids look like xsum__test__19296638__pegasus-xsum__0")


def _ranks(scores: Sequence[float]) -> list[int]:
    return [1 + sum(other > value for other in scores) for value in scores]


def pair_view(pair: Pair, board: Leaderboard, rankers: Sequence[str] | None) -> dict[str, Any]:
    """JSON-ready view of a pair with the chosen rankers' scores (all with scores by default)."""
    rows = [board.row(name) for name in rankers] if rankers else [r for r in board.rows if pair.split in r.entries]
    view: dict[str, Any] = {
        "id": pair.id, "split": pair.split, "summary": pair.summary, "sentences": [],
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
        view["sentences"].append({
            "index": i, "text": sentence, "votes": list(pair.votes[i]), "graded": int(pair.graded[i]),
            "scores": {label: {"score": s[i], "rank": r[i]} for label, (s, r) in columns.items()},
        })
    return view


def format_view(view: dict[str, Any], width: int = 60) -> str:
    """Terminal table: index, votes, sentence (wrapped), then score (rank) per ranker."""
    lines = [f"pair {view['id']} ({view['split']})", "summary: " + view["summary"], ""]
    labels = view["rankers"]
    header = f"{'#':>2}  {'votes':<9} {'sentence':<{width}}" + "".join(f"  {l[:18]:>18}" for l in labels)
    lines += [header, "-" * len(header)]
    for s in view["sentences"]:
        wrapped = textwrap.wrap(s["text"], width) or [""]
        cells = "".join(f"  {s['scores'][l]['score']:>11.4f} ({s['scores'][l]['rank']:>2})" for l in labels)
        lines.append(f"{s['index']:>2}  {','.join(map(str, s['votes'])):<9} {wrapped[0]:<{width}}{cells}")
        lines += [f"{'':>2}  {'':<9} {more}" for more in wrapped[1:]]
    return "\n".join(lines)
