"""The per-pair view in a terminal (``sourcesum show``): the summary, then every sentence with
its votes and each row's score and rank (data: :func:`sourcesum.board.explorer.pair_view`)."""

from __future__ import annotations

import textwrap
from typing import Any

from sourcesum.errors import UnknownNameError

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
