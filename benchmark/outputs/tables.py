"""Tables for machines and terminals: the board as JSON and CSV, and aligned text tables.

JSON (``sourcesum leaderboard --format json``): ``{"version", "results": [record...],
"averages": [record...], "human_agreement": {...}}`` with one record per (row, split)
(:func:`records`) and one per row with every split for the Avg columns
(:func:`average_records`). A test is given as ``<key>_p_vs_best`` (Holm's
adjustment of the point p-value) with ``_interval``, ``_decision``, ``_raw``, ``_mc_se``,
``_flips`` and ``_exact`` (:func:`test_record`).
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
import math
from typing import Any

from sourcesum import __version__
from sourcesum.board.view import BoardView
from sourcesum.stats.significance import Marked

SCHEMA = "sourcesum-leaderboard/3"
"""The ``schema`` field of the board's JSON (docs/json.md)."""


def test_record(name: str, marked: Marked) -> dict[str, Any]:
    """A test for JSON: ``name`` = Holm's adjustment of the point p-value, then its Holm-adjusted
    Monte Carlo interval (the decision's basis), the decision, the raw p with its Monte Carlo
    standard error, and the sign patterns counted (all of them when exact)."""
    return {
        name: marked.p_holm,
        f"{name}_interval": list(marked.adjusted),
        f"{name}_decision": marked.decision,
        f"{name}_raw": marked.count.p,
        f"{name}_mc_se": marked.count.standard_error,
        f"{name}_flips": marked.count.flips,
        f"{name}_exact": marked.count.exact,
    }


def records(view: BoardView) -> list[dict[str, Any]]:
    """One flat record per (row, split): means, CIs, p vs best and vs lead, ties, NaN counts of
    published outputs (JSON and CSV)."""
    out = []
    for row in view.ordered:
        for split, summary in row.summaries:
            record = dict(summary)
            record["ranker"] = row.full_label
            record["name"] = row.label
            record["reference"] = row.reference
            record["published"] = row.published
            for measure in view.measures:
                key = measure.json_key
                if (split, measure) in row.stats.ci:
                    record[f"{key}_ci"] = list(row.stats.ci[(split, measure)])
                for name, tests in (("best", row.stats.vs_best), ("lead", row.stats.vs_lead)):
                    marked = tests.get((split, measure))
                    if marked is not None:
                        record.update(test_record(f"{key}_p_vs_{name}", marked))
            if split in row.stats.ties:
                record["ties"] = row.stats.ties[split]
            if split in row.nan_replaced:
                record["nan_replaced"], record["all_nan_pairs"] = row.nan_replaced[split]
            out.append(record)
    return out


def average_records(view: BoardView) -> list[dict[str, Any]]:
    """One record per row with values on every board split: the Avg column's means (the mean of
    the split means), CIs and test against the Avg column's best (JSON)."""
    out = []
    averages = [i for i, column in enumerate(view.columns) if column.split is None]
    for row in view.ordered:
        if not row.complete:
            continue
        record: dict[str, Any] = {
            "ranker": row.full_label,
            "name": row.label,
            "reference": row.reference,
            "published": row.published,
            "splits": [name for name, _, _ in view.splits],
        }
        for i in averages:
            measure = view.columns[i].measure
            key = measure.json_key
            value = row.cells[i].value
            record[key] = value if math.isfinite(value) else None
            if (None, measure) in row.stats.ci:
                record[f"{key}_ci"] = list(row.stats.ci[(None, measure)])
            marked = row.stats.vs_best.get((None, measure))
            if marked is not None:
                record.update(test_record(f"{key}_p_vs_best", marked))
        out.append(record)
    return out


def human_records(view: BoardView) -> dict[str, Any] | None:
    """The human-agreement table for JSON: coverage per split, then one record per cell."""
    table = view.human_table
    if table is None:
        return None
    cells = []
    for (label, split), _ in table.per_pair.items():
        for measure in table.measures:
            cell: dict[str, Any] = {
                "system": label,
                "split": split,
                "measure": measure.name,
                "mean": table.mean(label, split, measure),
            }
            if (label, split, measure) in table.ci:
                cell["ci"] = list(table.ci[(label, split, measure)])
            if (label, split, measure) in table.vs_human:
                cell.update(test_record("p_vs_human", table.vs_human[(label, split, measure)]))
            cells.append(cell)
    return {"coverage": table.coverage, "results": cells}


def render_json(view: BoardView) -> str:
    payload: dict[str, Any] = {
        "schema": SCHEMA,
        "version": __version__,
        "inputs_sha256": view.inputs_sha256,
        "results": records(view),
        "averages": average_records(view),
    }
    human = human_records(view)
    if human is not None:
        payload["human_agreement"] = human
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
        "results": records(heldout.board),
        "averages": average_records(heldout.board),
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
    for record in records(view):
        for key, value in _flatten(record).items():
            if key in shown:
                continue
            name = f"{titles[record['split']]} {key}"
            if name not in extra_columns[record["split"]]:
                extra_columns[record["split"]].append(name)
            extra.setdefault(record["name"], {})[name] = value
    average_columns: list[str] = []
    for record in average_records(view):
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
