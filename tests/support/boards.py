"""Board declarations (``leaderboard.toml`` text) for the tests."""

from __future__ import annotations

from collections.abc import Sequence


def declaration(
    rows: Sequence[str | tuple[str, str]] = ("lead", "random", "bm25"),
    references: Sequence[str] = ("oracle",),
    dataset: str | None = "synthnews",
    published: Sequence[str] = (),
) -> str:
    """The text of a board declaration (``leaderboard.toml``): ``rows`` are ranker names or
    ``(name, TOML inline table of params)``."""
    lines = [f'dataset = "{dataset}"', ""] if dataset else []
    for row in rows:
        name, params = (row, "") if isinstance(row, str) else row
        lines += ["[[rows]]", f'ranker = "{name}"'] + ([f"params = {params}"] if params else []) + [""]
    for name in references:
        lines += ["[[references]]", f'ranker = "{name}"', ""]
    for method in published:
        lines += ["[[published]]", f'method = "{method}"', ""]
    return "\n".join(lines)
