"""The board declaration (``leaderboard.toml``): exactly which rows a declared board shows.

Format (TOML)::

    dataset = "sourcesum"        # optional; default sourcesum: the board's columns are its
                                 # board splits
    [[rows]]                     # ranked rows: a ranker and optional parameters
    ranker = "bm25"
    params = { k1 = 1.2 }
    [[references]]               # reference rows (not compared), e.g. the oracle
    ranker = "oracle"
    [[published]]                # a published system's outputs (the dataset's published source)
    method = "perplexity"

Every row must have a complete, valid, current entry on each board split; otherwise
:func:`sourcesum.board.collect.collect_declared` names every missing one and the command that
computes it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sourcesum.data import DATASETS
from sourcesum.errors import SourceSumError
from sourcesum.published import published_method


@dataclass(frozen=True)
class DeclaredRow:
    """One configuration named in the declaration."""

    ranker: str
    params: dict[str, Any]
    reference: bool = False
    published: bool = False
    """A published output: ``ranker`` is the method (its output field), e.g. ``perplexity``."""


@dataclass(frozen=True)
class Declaration:
    """A parsed declaration: the dataset whose board it is and its rows in file order
    (published rows first, then ranked and reference rows)."""

    dataset: str
    rows: tuple[DeclaredRow, ...]
    path: Path


def read_declaration(path: Path) -> Declaration:
    """Parse and check ``path`` (module docstring); problems name the file and the table."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SourceSumError(f"{path}: cannot read the leaderboard declaration ({exc})") from exc
    unknown = set(raw) - {"dataset", "rows", "references", "published"}
    if unknown:
        raise SourceSumError(
            f'{path}: unknown table(s) {sorted(unknown)}; use dataset = "name", [[rows]], [[references]] '
            "and [[published]]"
        )
    name = raw.get("dataset", "sourcesum")
    if not isinstance(name, str) or name not in DATASETS:
        raise SourceSumError(
            f"{path}: dataset = {name!r} is not a registered dataset ({', '.join(DATASETS.names())})"
        )
    declared = []
    for i, item in enumerate(raw.get("published", [])):
        if set(item) != {"method"} or not isinstance(item["method"], str):
            raise SourceSumError(f'{path}: [[published]] #{i + 1} needs exactly method = "name"')
        declared.append(DeclaredRow(published_method(item["method"]).key, {}, published=True))
    for table, reference in (("rows", False), ("references", True)):
        for i, item in enumerate(raw.get(table, [])):
            extra = set(item) - {"ranker", "params"}
            if (
                not isinstance(item.get("ranker"), str)
                or extra
                or not isinstance(item.get("params", {}), dict)
            ):
                raise SourceSumError(
                    f'{path}: [[{table}]] #{i + 1} needs ranker = "name" and optional params = {{...}}'
                    + (f"; unknown keys {sorted(extra)}" if extra else "")
                )
            declared.append(DeclaredRow(item["ranker"], dict(item.get("params", {})), reference))
    if not declared:
        raise SourceSumError(f"{path}: declares no rows")
    return Declaration(name, tuple(declared), Path(path))
