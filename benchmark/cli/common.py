"""What the command modules share: the argument parser's error style, typed argument parsers,
``-p RANKER.NAME=VALUE`` parameters, and the results table with its notes."""

from __future__ import annotations

import argparse
import json
import typing
from collections.abc import Sequence
from typing import Any

from sourcesum.errors import SourceSumError
from sourcesum.measures import Measure, measure_forms


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


def emit(records: list[dict[str, Any]], as_json: bool, system_key: str, measures: Sequence[Measure]) -> None:
    """Results of ``run`` / ``evaluate``: JSON, or a table followed by one note per caveat."""
    from sourcesum.outputs.tables import format_table

    if as_json:
        print(json.dumps({"results": records}, indent=2))
        return
    columns = [system_key, "split", "examples"] + [m.json_key for m in measures]
    print(format_table(records, columns))
    for record in records:
        if record.get("undefined"):
            print(
                f"note: {record[system_key]} on {record['split']}: measure undefined (no relevant "
                f"sentence) on {record['undefined']} pairs, left out of the mean"
            )
        if record.get("partial"):
            print(
                f"note: {record[system_key]} on {record['split']}: {record['partial']}, cached in the "
                f"normal entry (a full run resumes from them); the leaderboard shows complete entries only"
            )
        if record.get("report"):
            details = ", ".join(f"{k}={v}" for k, v in record["report"].items())
            print(f"note: {record[system_key]} in this run: {details}")
        if record.get("nan_replaced"):
            print(
                f"note: {record['nan_replaced']} NaN scores replaced by 0 in {record['split']} (as the "
                f"paper did); in {record.get('all_nan_pairs', 0)} pair(s) every score was NaN, so all "
                "their sentences tie"
            )
