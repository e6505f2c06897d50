"""The board declaration (``leaderboard.toml``): exactly which rows a declared board shows.

Format (TOML)::

    dataset = "sourcesum"        # optional; default sourcesum: the board's columns are its
                                 # board splits
    [[rows]]                     # ranked rows: a ranker, optional parameters and display name
    ranker = "bm25"
    params = { k1 = 1.2 }
    name = "BM25 (k1 1.2)"       # optional: at most 48 characters (default: sourcesum.board.names)
    [[references]]               # reference rows (not compared), e.g. the oracle
    ranker = "oracle"
    [[published]]                # a published system's outputs (the dataset's published source)
    method = "perplexity"
    [[tasks]]                    # optional: another dataset's board shown beside this one
    dataset = "wice"
    note = "..."                 # optional: one paragraph shown with its table (Markdown)
    [[tasks.rows]]               # its rows, as [[rows]]; [[tasks.references]] likewise
    ranker = "bm25"
    [heldout]                    # optional: a held-out test on splits outside the board
    splits = ["xsum_pegasus_heldout", ...]
    [[heldout.rows]]             # its rows, as [[rows]] (declared before any score on them)
    ranker = "lead"

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
from sourcesum.store.published import published_method


@dataclass(frozen=True)
class DeclaredRow:
    """One configuration named in the declaration."""

    ranker: str
    params: dict[str, Any]
    reference: bool = False
    published: bool = False
    """A published output: ``ranker`` is the method (its output field), e.g. ``perplexity``."""
    name: str | None = None
    """The display name declared for the row (None: the default name)."""


@dataclass(frozen=True)
class HeldOut:
    """The declared held-out test: splits outside the board and the rows scored on them."""

    splits: tuple[str, ...]
    rows: tuple[DeclaredRow, ...]


@dataclass(frozen=True)
class Task:
    """Another dataset's board declared beside the main one (a transfer task)."""

    dataset: str
    rows: tuple[DeclaredRow, ...]
    note: str = ""


@dataclass(frozen=True)
class Declaration:
    """A parsed declaration: the dataset whose board it is and its rows in file order
    (published rows first, then ranked and reference rows), and its held-out test if any."""

    dataset: str
    rows: tuple[DeclaredRow, ...]
    path: Path
    heldout: HeldOut | None = None
    tasks: tuple[Task, ...] = ()


def _ranker_rows(path: Path, table: str, items: Any, reference: bool) -> list[DeclaredRow]:
    if not isinstance(items, list):
        raise SourceSumError(f"{path}: [[{table}]] must be an array of tables")
    from sourcesum.board.names import check_name

    out = []
    for i, item in enumerate(items):
        extra = set(item) - {"ranker", "params", "name"} if isinstance(item, dict) else set()
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("ranker"), str)
            or extra
            or not isinstance(item.get("params", {}), dict)
        ):
            raise SourceSumError(
                f'{path}: [[{table}]] #{i + 1} needs ranker = "name" and optional params = {{...}}, name = "..."'
                + (f"; unknown keys {sorted(extra)}" if extra else "")
            )
        name = check_name(item["name"], f"{path}: [[{table}]] #{i + 1}") if "name" in item else None
        out.append(DeclaredRow(item["ranker"], dict(item.get("params", {})), reference, name=name))
    names = [row.name for row in out if row.name is not None]
    for name in names:
        if names.count(name) > 1:
            raise SourceSumError(f"{path}: [[{table}]]: two rows are named {name!r}; names are unique")
    return out


def _heldout(path: Path, raw: Any, dataset_name: str) -> HeldOut:
    from sourcesum.data import dataset

    if not isinstance(raw, dict) or set(raw) - {"splits", "rows"}:
        raise SourceSumError(f"{path}: [heldout] takes splits = [...] and [[heldout.rows]] only")
    splits = raw.get("splits")
    if not isinstance(splits, list) or not splits or not all(isinstance(x, str) for x in splits):
        raise SourceSumError(f'{path}: [heldout] needs splits = ["split", ...]')
    ds = dataset(dataset_name)
    names = [spec.name for spec in ds.splits]
    for split in splits:
        if split not in names:
            raise SourceSumError(f"{path}: [heldout] split {split!r} is not a split of dataset {ds.name}")
        if split in ds.board_splits():
            raise SourceSumError(f"{path}: [heldout] split {split!r} is a board split, not held out")
    rows = _ranker_rows(path, "heldout.rows", raw.get("rows", []), False)
    if not rows:
        raise SourceSumError(f"{path}: [heldout] declares no rows")
    return HeldOut(tuple(splits), tuple(rows))


def _tasks(path: Path, raw: Any, main: str) -> tuple[Task, ...]:
    if not isinstance(raw, list):
        raise SourceSumError(f"{path}: [[tasks]] must be an array of tables")
    out: list[Task] = []
    for i, item in enumerate(raw):
        where = f"[[tasks]] #{i + 1}"
        if not isinstance(item, dict) or set(item) - {"dataset", "note", "rows", "references"}:
            raise SourceSumError(
                f"{path}: {where} takes dataset, note, [[tasks.rows]] and [[tasks.references]]"
            )
        name = item.get("dataset")
        if not isinstance(name, str) or name not in DATASETS:
            raise SourceSumError(f"{path}: {where}: dataset = {name!r} is not a registered dataset")
        if name == main or name in [t.dataset for t in out]:
            raise SourceSumError(f"{path}: {where}: dataset {name} already has a board here")
        note = item.get("note", "")
        if not isinstance(note, str):
            raise SourceSumError(f"{path}: {where}: note must be a string")
        rows = _ranker_rows(path, "tasks.rows", item.get("rows", []), False)
        rows += _ranker_rows(path, "tasks.references", item.get("references", []), True)
        if not rows:
            raise SourceSumError(f"{path}: {where} declares no rows")
        out.append(Task(name, tuple(rows), note))
    return tuple(out)


def read_declaration(path: Path) -> Declaration:
    """Parse and check ``path`` (module docstring); problems name the file and the table."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SourceSumError(f"{path}: cannot read the leaderboard declaration ({exc})") from exc
    unknown = set(raw) - {"dataset", "rows", "references", "published", "heldout", "tasks"}
    if unknown:
        raise SourceSumError(
            f'{path}: unknown table(s) {sorted(unknown)}; use dataset = "name", [[rows]], [[references]], '
            "[[published]], [heldout] and [[tasks]]"
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
    declared += _ranker_rows(path, "rows", raw.get("rows", []), False)
    declared += _ranker_rows(path, "references", raw.get("references", []), True)
    if not declared:
        raise SourceSumError(f"{path}: declares no rows")
    names = [row.name for row in declared if row.name is not None]
    for row_name in names:
        if names.count(row_name) > 1:
            raise SourceSumError(f"{path}: two rows are named {row_name!r}; names are unique on a board")
    heldout = _heldout(path, raw["heldout"], name) if "heldout" in raw else None
    tasks = _tasks(path, raw["tasks"], name) if "tasks" in raw else ()
    return Declaration(name, tuple(declared), Path(path), heldout, tasks)
