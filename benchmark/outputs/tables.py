"""Tables for machines and terminals: the board as JSON and CSV, and aligned text tables.

JSON (``sourcesum leaderboard --format json``, docs/json.md): every board of the view. ``boards``
names the main board and each task board; ``results`` holds one record per (row, split) of each
of them (:func:`records`; ``board`` and ``group`` say where the row is shown) and ``averages``
one per row with every split of its board for the Avg columns (:func:`average_records`);
``human_agreement``, ``transfer`` (:func:`transfer_record`) and ``heldout``
(:func:`heldout_records`) follow. Measures are named by their JSON keys. A test is given as
``<key>_p_vs_best`` (Holm's adjustment of the point p-value) with ``_interval``, ``_decision``,
``_raw``, ``_mc_se``, ``_flips`` and ``_exact`` (:func:`test_record`).

CSV (:func:`render_csv`): one line per record of JSON's ``results`` and ``heldout.results``,
one header: the record's fields (nested keys joined by ``.``, an interval as ``_low`` and
``_high``), then the row's Avg record on its board with each field prefixed ``avg_``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from sourcesum import __version__
from sourcesum.board.view import BoardView, RowView
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


def shown_rows(view: BoardView, grouped: bool) -> list[RowView]:
    """A board's rows as the Markdown shows them: the main table group by group (``grouped``:
    :attr:`BoardView.groups`), other boards (task boards, the held-out test) in board order."""
    if grouped:
        return [row for _, _, rows in view.groups for row in rows]
    return list(view.ordered)


def _ties(ties: dict[str, Any], view: BoardView) -> dict[str, Any]:
    """A tie report with each measure's values under its JSON key."""
    names = {m.name: m.json_key for m in view.measures}
    return {names.get(key, key): value for key, value in ties.items()}


def records(view: BoardView, board: str, grouped: bool = False) -> list[dict[str, Any]]:
    """One flat record per (row, split) of the board named ``board``, rows as shown
    (:func:`shown_rows`): means, CIs, p vs best and vs lead, ties, NaN counts of published
    outputs (JSON and CSV)."""
    out = []
    for row in shown_rows(view, grouped):
        for split, summary in row.summaries:
            record: dict[str, Any] = {"board": board, "group": row.group, **summary}
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
                record["ties"] = _ties(row.stats.ties[split], view)
            if split in row.nan_replaced:
                record["nan_replaced"], record["all_nan_pairs"] = row.nan_replaced[split]
            out.append(record)
    return out


def average_records(view: BoardView, board: str, grouped: bool = False) -> list[dict[str, Any]]:
    """One record per row with values on every split of the board named ``board``: the Avg
    column's means (the mean of the split means), CIs and test against the Avg column's best
    (JSON)."""
    out = []
    averages = [i for i, column in enumerate(view.columns) if column.split is None]
    for row in shown_rows(view, grouped):
        if not row.complete:
            continue
        record: dict[str, Any] = {
            "board": board,
            "group": row.group,
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


def boards(view: BoardView) -> list[tuple[str, BoardView, bool]]:
    """The boards of the results list: ``(name, board, grouped)`` for the main board (its
    dataset's name; grouped as the Markdown groups it), then each task board."""
    return [(view.dataset.name, view, True)] + [(task.name, task.board, False) for task in view.tasks]


HELDOUT = "heldout"
"""The ``board`` of the held-out test's records."""


def human_records(view: BoardView) -> dict[str, Any] | None:
    """The human-agreement table for JSON: coverage per split, then one record per cell
    (measures under their JSON keys)."""
    table = view.human_table
    if table is None:
        return None
    keys = {m.name: m.json_key for m in table.measures}
    coverage = {
        split: {
            field: {keys.get(k, k): v for k, v in value.items()} if isinstance(value, dict) else value
            for field, value in fields.items()
        }
        for split, fields in table.coverage.items()
    }
    cells = []
    for (label, split), _ in table.per_pair.items():
        for measure in table.measures:
            cell: dict[str, Any] = {
                "system": label,
                "split": split,
                "measure": measure.json_key,
                "mean": table.mean(label, split, measure),
            }
            if (label, split, measure) in table.ci:
                cell["ci"] = list(table.ci[(label, split, measure)])
            if (label, split, measure) in table.vs_human:
                cell.update(test_record("p_vs_human", table.vs_human[(label, split, measure)]))
            cells.append(cell)
    return {"coverage": coverage, "results": cells}


def transfer_record(view: BoardView) -> dict[str, Any] | None:
    """The transfer summary for JSON (None without task boards)."""
    transfer = view.transfer
    if transfer is None:
        return None
    names = dict(zip(transfer.boards, transfer.names, strict=True))
    return {
        "measure": transfer.measure_key,
        "boards": list(transfer.names),
        "rows": [
            {"name": name, "ranks": dict(zip(transfer.names, ranks, strict=True))}
            for name, ranks in transfer.rows
        ],
        "correlations": [
            {"a": names[a], "b": names[b], "spearman": rho} for a, b, rho in transfer.correlations
        ],
        "policy_notes": dict(transfer.policy_notes),
        "left_out": [{"reason": reason, "names": list(left)} for reason, left in transfer.left_out],
    }


def render_json(view: BoardView) -> str:
    """The board's JSON (docs/json.md): every board of the view (the main board, each task
    board, the transfer summary, the held-out test)."""
    payload: dict[str, Any] = {
        "schema": SCHEMA,
        "version": __version__,
        "inputs_sha256": view.inputs_sha256,
        "unpinned_splits": list(view.unpinned),
        "boards": [
            {"board": name, "title": board.dataset.title, "splits": [s for s, _, _ in board.splits]}
            for name, board, _ in boards(view)
        ],
        "results": [r for name, board, grouped in boards(view) for r in records(board, name, grouped)],
        "averages": [
            r for name, board, grouped in boards(view) for r in average_records(board, name, grouped)
        ],
    }
    human = human_records(view)
    if human is not None:
        payload["human_agreement"] = human
    transfer = transfer_record(view)
    if transfer is not None:
        payload["transfer"] = transfer
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


def heldout_records(view: BoardView) -> dict[str, Any]:
    """The held-out test for JSON: its splits, records like the board's, the best zero-shot row
    of each column, and every row's difference to ``lead`` and to that row (``split`` null:
    Avg)."""
    assert view.heldout is not None
    heldout = view.heldout
    columns = heldout.board.columns

    def differences(rows: Any) -> list[dict[str, Any]]:
        return [
            {
                "ranker": row.label,
                "split": column.split,
                "measure": column.measure.json_key,
                "difference": cell[0],
                "ci": [cell[1], cell[2]],
                "decision": cell[3] or None,
            }
            for row in rows
            for column, cell in zip(columns, row.cells, strict=True)
            if cell is not None
        ]

    return {
        "splits": [name for name, _, _ in heldout.board.splits],
        "results": records(heldout.board, HELDOUT),
        "averages": average_records(heldout.board, HELDOUT),
        "zero_shot_best": [
            {"split": column.split, "measure": column.measure.json_key, "name": label}
            for column, label in zip(columns, heldout.zero_shot_best, strict=True)
            if label
        ],
        "against_lead": differences(heldout.against_lead),
        "against_zero_shot": differences(heldout.against_zero_shot),
    }


def _flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A record's leaves as CSV columns: nested keys joined by ``.``, an interval ``[low, high]``
    as ``<key>_low`` and ``<key>_high`` (``{"ties": {"ndcg": {"default": x}}}`` ->
    ``{"ties.ndcg.default": x}``; ``{"ndcg_ci": [a, b]}`` -> ``ndcg_ci_low``, ``ndcg_ci_high``)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, f"{name}."))
        elif isinstance(value, list) and len(value) == 2 and not any(isinstance(v, str) for v in value):
            out[f"{name}_low"], out[f"{name}_high"] = value
        else:
            out[name] = value
    return out


CSV_LEADING = ("board", "group", "name", "ranker", "split", "pairs", "reference", "published")
"""The CSV's first columns; the measures' means and CIs follow."""
_AVERAGE_IDENTITY = {"board", "group", "ranker", "name", "reference", "published", "splits"}


def _csv_value(value: Any) -> str:
    """A value as JSON would write it: ``true``/``false``, floats exactly (``repr``), empty for
    null."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def render_csv(view: BoardView) -> str:
    """The CSV board: one line per record of the JSON's ``results`` and ``heldout.results``
    (every board's rows), one header. The columns are each record's fields as
    :func:`_flatten` names them, then the row's Avg record on that board (JSON ``averages``)
    with each field prefixed ``avg_`` (``avg_ndcg``, ``avg_ndcg_ci_low``); empty where a line
    has no such field. JSON's human-agreement table and transfer summary are not in the CSV."""
    lines: list[tuple[dict[str, Any], dict[str, Any]]] = []
    parts = [(name, board, grouped) for name, board, grouped in boards(view)]
    if view.heldout is not None:
        parts.append((HELDOUT, view.heldout.board, False))
    for name, board, grouped in parts:
        averages = {r["name"]: r for r in average_records(board, name, grouped)}
        for record in records(board, name, grouped):
            average = averages.get(record["name"], {})
            avg = {f"avg_{k}": v for k, v in _flatten(average).items() if k not in _AVERAGE_IDENTITY}
            lines.append((_flatten(record), avg))
    header = list(CSV_LEADING)
    for measure in view.measures:
        header += [measure.json_key, f"{measure.json_key}_ci_low", f"{measure.json_key}_ci_high"]
    rest = list(dict.fromkeys(key for fields, _ in lines for key in fields if key not in header))
    averages_header = [
        f"avg_{m.json_key}{suffix}" for m in view.measures for suffix in ("", "_ci_low", "_ci_high")
    ]
    more = list(dict.fromkeys(key for _, avg in lines for key in avg if key not in averages_header))
    header += rest + averages_header + more
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for fields, avg in lines:
        values = {**fields, **avg}
        writer.writerow([_csv_value(values.get(column)) for column in header])
    return buffer.getvalue()


def is_our_json(payload: bytes) -> bool:
    try:
        value = json.loads(payload)
    except ValueError:
        return False
    return isinstance(value, dict) and "version" in value and "results" in value


def is_our_csv(payload: bytes) -> bool:
    return payload.startswith(",".join(CSV_LEADING).encode())
