"""Tables for machines and terminals: the board as JSON and CSV, and aligned text tables.

JSON (``sourcesum leaderboard --format json``): ``{"version", "results": [record...],
"averages": [record...], "human_agreement": {...}}`` with one record per (row, split)
(:func:`sourcesum.board.view.records`) and one per row with every split for the Avg columns
(:func:`sourcesum.board.view.average_records`). A test is given as ``<key>_p_vs_best`` (Holm's
adjustment of the point p-value) with ``_interval``, ``_decision``, ``_raw``, ``_mc_se``,
``_flips`` and ``_exact`` (:func:`sourcesum.board.view.test_record`).
CSV: one line per row: its display name and full label, per split and measure the mean and CI (``<split> <column>``, ``... CI
low``, ``... CI high``), the Avg columns likewise, then every other field of the row's JSON
records, named ``<split title> <key>`` with nested keys joined by spaces
(``XSum-PEGASUS map_p_vs_best``, ``XSum-PEGASUS ties AP expected``), and of its Avg record
(``Avg map_p_vs_best_decision``); empty where a row has no such field. JSON's human-agreement table is not in the CSV.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from sourcesum import __version__
from sourcesum.board.view import BoardView, fmt


def format_table(records: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain aligned text table of ``records`` (floats to 4 decimals)."""
    cells = [
        [fmt(r.get(c)) if isinstance(r.get(c), float) else str(r.get(c, "")) for c in columns]
        for r in records
    ]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=False))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)) for row in cells]
    return "\n".join(lines)


def render_json(view: BoardView) -> str:
    payload: dict[str, Any] = {
        "schema": "sourcesum-leaderboard/1",
        "version": __version__,
        "inputs_sha256": view.inputs_sha256,
        "results": list(view.records),
        "averages": list(view.average_records),
    }
    if view.human_records is not None:
        payload["human_agreement"] = view.human_records
    if view.heldout is not None:
        payload["heldout"] = heldout_records(view)
    elif view.heldout_pending is not None:
        p = view.heldout_pending
        payload["heldout_pending"] = {
            "splits": [name for name, _, _ in p.splits],
            "rows": p.rows,
            "entries": p.entries,
            "complete": p.complete,
            "pairs_scored": p.scored,
            "pairs": p.pairs,
        }
    return json.dumps(payload, indent=2) + "\n"


def _flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"ties": {"nDCG": {"default": x}}}`` -> ``{"ties nDCG default": x}``."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key} "))
        else:
            out[f"{prefix}{key}"] = value
    return out


def heldout_records(view: BoardView) -> dict[str, Any]:
    """The held-out test for JSON: its splits, records like the board's, and every row's
    difference to ``lead`` and to the column's best zero-shot row (``split`` null: Avg)."""
    assert view.heldout is not None
    heldout = view.heldout

    def differences(rows: Any) -> list[dict[str, Any]]:
        return [
            {
                "ranker": row.label,
                "split": column.split,
                "measure": column.measure.name,
                "difference": cell[0],
                "ci": [cell[1], cell[2]],
                "decision": cell[3] or None,
            }
            for row in rows
            for column, cell in zip(heldout.board.columns, row.cells, strict=True)
            if cell is not None
        ]

    return {
        "splits": [name for name, _, _ in heldout.board.splits],
        "results": list(heldout.board.records),
        "averages": list(heldout.board.average_records),
        "zero_shot_best": {
            column.header: label
            for column, label in zip(heldout.board.columns, heldout.zero_shot_best, strict=True)
        },
        "against_lead": differences(heldout.against_lead),
        "against_zero_shot": differences(heldout.against_zero_shot),
    }


def render_csv(view: BoardView) -> str:
    """The CSV board (module docstring)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["name", "label", "reference", "published"]
    for column in view.columns:
        header += [column.header, f"{column.header} CI low", f"{column.header} CI high"]
    titles = {name: title for name, title, _ in view.splits}
    shown = {"ranker", "name", "split", "reference", "published"}
    shown |= {k for m in view.measures for k in (m.json_key, f"{m.json_key}_ci")}
    extra: dict[str, dict[str, Any]] = {}  # row label -> column -> value
    extra_columns: dict[str, list[str]] = {name: [] for name, _, _ in view.splits}
    for record in view.records:
        for key, value in _flatten(record).items():
            if key in shown:
                continue
            name = f"{titles[record['split']]} {key}"
            if name not in extra_columns[record["split"]]:
                extra_columns[record["split"]].append(name)
            extra.setdefault(record["name"], {})[name] = value
    average_columns: list[str] = []
    for record in view.average_records:
        for key, value in _flatten(record).items():
            if key in shown or key == "splits":
                continue
            name = f"Avg {key}"
            if name not in average_columns:
                average_columns.append(name)
            extra.setdefault(record["name"], {})[name] = value
    more = [name for split, _, _ in view.splits for name in extra_columns[split]] + average_columns
    writer.writerow(header + more)
    for row in view.ordered:
        cells: list[Any] = [row.label, row.full_label, row.kind == "reference", row.kind == "published"]
        for cell in row.cells:
            low, high = cell.ci if cell.ci is not None else (float("nan"), float("nan"))
            cells += [repr(cell.value), repr(low), repr(high)]
        values = extra.get(row.label, {})
        cells += [repr(values[n]) if isinstance(values.get(n), float) else values.get(n, "") for n in more]
        writer.writerow(cells)
    return buffer.getvalue()


def is_our_json(payload: bytes) -> bool:
    try:
        value = json.loads(payload)
    except ValueError:
        return False
    return isinstance(value, dict) and "version" in value and "results" in value


def is_our_csv(payload: bytes) -> bool:
    return payload.startswith(b"ranker,reference,published")
