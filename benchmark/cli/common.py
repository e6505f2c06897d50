"""What the command modules share: the argument parser's error style, typed argument parsers,
``-p RANKER.NAME=VALUE`` parameters, the JSON schema names, and the results table with its
notes."""

from __future__ import annotations

import argparse
import json
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sourcesum.errors import SourceSumError
from sourcesum.evaluation.measures import Measure, measure_forms
from sourcesum.outputs.escape import terminal
from sourcesum.stats.bootstrap import MAX_RESAMPLES, MIN_RESAMPLES

if TYPE_CHECKING:
    from sourcesum.store.stores import StoreStack

SCHEMAS = {
    "run": "sourcesum-run/3",
    "evaluate": "sourcesum-evaluate/4",
    "compare": "sourcesum-compare/1",
    "list": "sourcesum-list/1",
    "verify": "sourcesum-verify/1",
    "explain": "sourcesum-explain/1",
    "show": "sourcesum-show/1",
    "pairs": "sourcesum-pairs/1",
    "cite": "sourcesum-cite/2",
    "probe-layers": "sourcesum-probelayers/1",
}
"""The ``schema`` field of each command's JSON output: ``<name>/<version>``; the version goes
up when a field changes meaning or disappears (docs/json.md documents every field). The board's
JSON (``leaderboard --format json``) is :data:`sourcesum.outputs.tables.SCHEMA`, written by
:func:`sourcesum.outputs.tables.render_json`."""


def print_json(schema: str, payload: dict[str, Any]) -> None:
    """``payload`` as indented JSON on stdout, ``schema`` its first field."""
    print(json.dumps({"schema": schema, **payload}, indent=2))


class Parser(argparse.ArgumentParser):
    """argparse with the harness's error style: one ``error: ...`` line, exit 2."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not >= 1")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (random seeds)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is not >= 0")
    return value


def resamples(text: str) -> int:
    """argparse type: a resample count between :data:`~sourcesum.stats.bootstrap.MIN_RESAMPLES`
    and :data:`~sourcesum.stats.bootstrap.MAX_RESAMPLES`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not MIN_RESAMPLES <= value <= MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(f"{value} is not between {MIN_RESAMPLES:,} and {MAX_RESAMPLES:,}")
    return value


def measures_help() -> str:
    return f"comma-separated measures ({measure_forms()})"


def parse_params(items: Sequence[str], rankers: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``["random.seed=3"]`` -> ``{"random": {"seed": "3"}}``; the ranker parses each value by its
    declared type (:meth:`Ranker.canonical_params`)."""
    params: dict[str, dict[str, Any]] = {name: {} for name in rankers}
    for item in items:
        target, _, value = item.partition("=")
        ranker, dot, key = target.partition(".")
        if not key or not dot:
            raise SourceSumError(f"--param {item!r}: expected RANKER.NAME=VALUE, e.g. random.seed=3")
        if ranker not in params:
            raise SourceSumError(f"--param {item!r}: ranker {ranker!r} is not in --ranker")
        params[ranker][key] = value
    return params


def emit(
    records: list[dict[str, Any]], as_json: bool, system_key: str, measures: Sequence[Measure], schema: str
) -> None:
    """Results of ``run`` / ``evaluate``: JSON (``schema``), or a table followed by one note per
    caveat."""
    from sourcesum.outputs.text import format_table

    if as_json:
        print_json(schema, {"results": records})
        return
    columns = [system_key, "split", "pairs"] + [m.json_key for m in measures]
    shown = {m.json_key: m.display_name for m in measures}  # people read names; JSON keeps keys
    print(terminal(format_table(records, columns, [shown.get(c, c) for c in columns])))
    notes: list[str] = []
    for record in records:
        for key, reasons in (record.get("undefined_reasons") or {}).items():
            why = ", ".join(
                f"{reason} on {count} pair{'s' if count != 1 else ''}" for reason, count in reasons.items()
            )
            notes.append(
                f"note: {record[system_key]} on {record['split']}: {shown.get(key, key)} is undefined ({why}), "
                "left out of its mean"
            )
        if record.get("partial"):
            notes.append(
                f"note: {record[system_key]} on {record['split']}: {record['partial']}, cached in the "
                f"normal entry (a full run resumes from them); the leaderboard shows complete entries only"
            )
        if record.get("report"):
            details = ", ".join(f"{k}={v}" for k, v in record["report"].items())
            notes.append(f"note: {record[system_key]} in this run: {details}")
        if record.get("nan_replaced"):
            notes.append(
                f"note: {record['nan_replaced']} NaN scores replaced by 0 in {record['split']} (as the "
                f"paper did); in {record.get('all_nan_pairs', 0)} pair(s) every score was NaN, so all "
                "their sentences tie"
            )
    for note in notes:
        print(terminal(note))


def is_committed_declaration(declaration: str | None) -> bool:
    """``--declaration`` names the committed ``leaderboard.toml`` (or is not given)."""
    from sourcesum import paths

    return declaration is None or (
        Path(declaration).expanduser().resolve() == paths.DECLARATION_PATH.resolve()
    )


def declared_stores(scores_dir: str | None, declaration: str | None) -> StoreStack:
    """The stores a declared board reads (``leaderboard``, ``site``, ``cite``): the committed
    board (the committed declaration, no ``--scores-dir``) reads the committed ``data/scores``
    alone; any other declared board reads your store (``--scores-dir``, which must exist, else
    ``$SOURCESUM_SCORES_DIR``, else ``$XDG_DATA_HOME/sourcesum/scores``) over the committed one,
    as ``--all`` does (a :class:`~sourcesum.store.stores.StoreStack`, read only)."""
    from sourcesum import paths
    from sourcesum.store.stores import ScoreStore, StoreStack, open_stores

    if scores_dir and not Path(scores_dir).expanduser().is_dir():
        raise SourceSumError(f"--scores-dir {scores_dir}: no such folder")
    if not scores_dir and is_committed_declaration(declaration):
        return StoreStack([ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False)])
    stack = open_stores(scores_dir, must_exist=True)
    for store in stack.stores:
        store.writable = False  # a board only reads
    return stack
