"""The static site: the leaderboard and a per-pair explorer, as self-contained HTML files.

``build_site(view, explorers, out)`` writes, from the view-model that ``sourcesum leaderboard``
renders (:mod:`sourcesum.board.view`) and each split's explorer data
(:func:`sourcesum.board.explorer.explorer_data`; nothing is recomputed here):

- ``index.html``: the ranked rows, the published systems and the reference rows in separate
  tables (sortable by every column, with CIs and significance marks), the rows significantly
  better than ``lead``, the human-agreement table, the plot (``plot.png``), the ties section,
  each row's parameters and cache keys, and how to cite (``CITATION.cff``, copied alongside);
  on a board with a ``probe`` row, the probe's layer curve (``docs/probe-layers.png``, copied
  alongside as ``probe-layers.png`` when the checkout has it);
- ``explore-<split>.html`` per split: every pair's summary and sentences with their votes, each
  row's scores and ranks, and the per-pair value of every board measure.

No server and no network: the data is embedded in each page as JSON in a
``<script type="application/json">`` element (browsers refuse to read local JSON files over
``file://``), the CSS and JavaScript are inlined, and the output is byte-identical for the same
board. Scores are shown rounded to 4 significant digits; ranks come from the exact scores.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from sourcesum import __version__
from sourcesum.board import prose
from sourcesum.board.view import BoardView, RowView
from sourcesum.data import Dataset
from sourcesum.errors import SourceSumError
from sourcesum.outputs.templating import TEMPLATES, environment
from sourcesum.paths import PROJECT_ROOT
from sourcesum.stats.bootstrap import ALPHA
from sourcesum.util.files import check_folder_target, owned_files, write_bytes_atomic, write_text_atomic
from sourcesum.util.numbers import fmt

CITATION_PATH = PROJECT_ROOT / "CITATION.cff"
LAYER_CURVE_PATH = PROJECT_ROOT / "docs" / "probe-layers.png"
"""The committed figure of ``sourcesum probe-layers`` (docs/probe-layers.md)."""
LAYER_CURVE_FILE = "probe-layers.png"
PLOT_FILE = "plot.png"
INDEX_FILE = "index.html"
INDEX_BUDGET = 500 * 1024
"""Bytes allowed for the index page: ``index.html`` plus the plot it shows."""
EXPLORER_BUDGET = 3 * 1024 * 1024
"""Bytes allowed for one split's explorer page."""
TASK_EXPLORER_BUDGET = 16 * 1024 * 1024
"""Bytes allowed for the explorer of a transfer task's board split (WiCE test holds 45,153
candidate sentences, QMSum test 65,811, each with every row's score). A row adds up to about
700 KB to QMSum's (13,380 KB with its 25 rows, as `sourcesum site` reports it; each probe row
added about 480 KB); 16 MiB leaves room for the one more row declared on QMSum
(``contextcite``)."""
BOARD_INDEX_BUDGET = 1024 * 1024
"""Bytes allowed for the committed board's index page with its plot (SourceSum's board, the
held-out test, each transfer task's board and the transfer summary)."""
INDEX_NAME = "sourcesum-site.json"
"""Lists every file a build wrote; a later build replaces only those (never a file of someone
else's)."""


def explorer_file(split: str) -> str:
    return f"explore-{split}.html"


@dataclass(frozen=True)
class SitePage:
    """One written file and its size in bytes."""

    path: Path
    size: int


def embed_json(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: ``<``, ``>`` and ``&`` escaped
    as ``\\u003c`` etc. (still valid JSON, so ``JSON.parse`` returns the same data)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _cells(view: BoardView, row: RowView) -> list[dict[str, Any]]:
    return [
        {
            "header": column.header,
            "value": _number(cell.value),
            "text": cell.text,
            "mark": cell.mark,
            "ci": cell.ci_text,
        }
        for column, cell in zip(view.columns, row.cells, strict=True)
    ]


def _ties(view: BoardView) -> list[dict[str, Any]]:
    """The Ties section's rows, as the Markdown leaderboard lists them."""
    return [
        {
            "label": row.label,
            "split": row.split,
            "pairs": row.pairs_with_ties,
            "sentences": row.sentences_tied,
            "values": [
                {"header": column.header, "value": value, "text": fmt(value)}
                for column, value in zip(view.tie_columns, row.values, strict=True)
            ],
        }
        for row in view.ties
    ]


def _human(view: BoardView) -> dict[str, Any]:
    """The human-agreement section for the template."""
    data = view.human
    if not data:
        return {}
    rows = []
    for row in data["rows"]:
        cells = []
        for header, cell in zip(data["columns"], row["cells"], strict=True):
            mark = {1: "above", -1: "below", 0: "", None: "undecided"}[cell["mark"]]
            cells.append(
                {
                    "header": header,
                    "value": _number(cell["value"]),
                    "text": fmt(cell["value"]),
                    "mark": mark,
                    "ci": cell["ci"],
                }
            )
        rows.append({"label": row["label"], "cells": cells})
    return {**data, "rows": rows}


def _configurations(view: BoardView) -> list[dict[str, Any]]:
    """Each row's name, full label, ranker, version, parameters, per-split cache key and
    library versions."""
    return [
        {
            "label": row.label,
            "full_label": " = ".join((row.full_label, *row.same_as)),
            "ranker": row.ranker,
            "reference": row.kind == "reference",
            "published": row.kind == "published",
            "supervised": row.supervised,
            "params": json.dumps(row.params, sort_keys=True),
            "versions": list(row.versions),
            "cache_keys": [{"split": title, "key": key} for title, key in row.keys],
            "libraries": [f"{name} {version}" for name, version in row.libraries],
        }
        for row in view.ordered
    ]


LEAD_SYMBOLS = {"above": "▲", "below": "▼", "not significant": "=", "undecided": "?"}


def _lead_table(view: BoardView) -> dict[str, Any]:
    """The compact table of every competing row against ``lead``."""
    columns = [c.header for c in view.columns if c.split is not None]
    return {
        "columns": columns,
        "rows": [
            {
                "label": name,
                "cells": [
                    {"header": header, "mark": mark, "symbol": LEAD_SYMBOLS.get(mark, "")}
                    for header, mark in zip(columns, marks, strict=True)
                ],
            }
            for name, marks in view.lead_marks
        ],
    }


def _heldout(view: BoardView) -> dict[str, Any] | None:
    """The held-out section: its board's tables and the two difference tables."""
    if view.heldout is None:
        return None
    board = view.heldout.board

    def differences(rows: Any) -> list[dict[str, Any]]:
        return [
            {
                "label": row.label,
                "cells": [
                    {
                        "header": column.header,
                        "value": None if cell is None else cell[0],
                        "text": "-" if cell is None else f"{cell[0]:+.4f}",
                        "ci": "" if cell is None else f"[{cell[1]:+.3f}, {cell[2]:+.3f}]",
                        "mark": "" if cell is None else cell[3],
                    }
                    for column, cell in zip(board.columns, row.cells, strict=True)
                ],
            }
            for row in rows
        ]

    return {
        "intro": prose.heldout_intro(view, quote=""),
        "columns": [column.header for column in board.columns],
        "rows": [{"label": r.label, "cells": _cells(board, r)} for r in board.ordered],
        "zero_shot_best": prose.zero_shot_best_text(view),
        "against_lead": differences(view.heldout.against_lead),
        "against_zero_shot": differences(view.heldout.against_zero_shot),
    }


def index_context(view: BoardView) -> dict[str, Any]:
    """Everything ``index.html`` shows, taken from the view-model."""
    source = next(iter(view.dataset.sources().values()))
    return {
        "version": __version__,
        "dataset": view.dataset,
        "split_count": prose.count_word(len(view.splits)),
        "measure_names": " and ".join(m.display_name for m in view.measures),
        "data": {"repository": source.repository, "commit": source.commit[:10]},
        "alpha": ALPHA,
        "columns": [column.header for column in view.columns],
        "zero_shot": [{"label": r.label, "cells": _cells(view, r)} for r in view.ranked if not r.supervised],
        "supervised": [{"label": r.label, "cells": _cells(view, r)} for r in view.ranked if r.supervised],
        "published": [{"label": r.label, "cells": _cells(view, r)} for r in view.published],
        "published_intro": prose.published_intro(view, quote="") if view.published else "",
        "published_notes": list(view.published_notes),
        "reference": [{"label": r.label, "cells": _cells(view, r)} for r in view.reference],
        "significance_rule": prose.significance_rule(view.dataset.shared_documents_text),
        "lead": _lead_table(view) if view.lead_marks else None,
        "lead_text": prose.LEAD_TABLE_TEXT.replace("`", ""),
        "heldout": _heldout(view),
        "heldout_pending": prose.heldout_pending_text(view, quote="") if view.heldout_pending else "",
        "tasks": [
            {
                "id": f"task-{task.name}",
                "title": task.title,
                "description": task.board.dataset.description,
                "labels": prose.labels_text(task.board),
                "note": task.note,
                "columns": [column.header for column in task.board.columns],
                "rows": [{"label": r.label, "cells": _cells(task.board, r)} for r in task.board.ordered],
            }
            for task in view.tasks
        ],
        "transfer": None
        if view.transfer is None
        else {
            "boards": list(view.transfer.boards),
            "measure": view.transfer.measure,
            "rows": [{"label": name, "ranks": list(ranks)} for name, ranks in view.transfer.rows],
            "correlations": [f"{a} vs {b} {rho:.2f}" for a, b, rho in view.transfer.correlations],
            "policy_notes": list(view.transfer.policy_notes),
            "left_out": list(view.transfer.left_out),
        },
        "inputs_sha256": view.inputs_sha256,
        "unpinned": list(view.unpinned),
        "human": _human(view),
        "ties": _ties(view),
        "ties_text": prose.TIES_TEXT,
        "tie_columns": [column.header for column in view.tie_columns],
        "configurations": _configurations(view),
        "explorers": [
            {"title": page.title, "file": explorer_file(page.split), "pairs": page.pairs}
            for page in explorer_splits(view)
        ],
        "stale": list(view.stale),
        "citation": CITATION_PATH.read_text(encoding="utf-8") if CITATION_PATH.is_file() else "",
    }


def layer_curve(view: BoardView) -> bytes | None:
    """The probe's layer curve to show beside ``view``: the committed figure's bytes when the
    board has a ``probe`` row and the checkout holds the figure, else None."""
    if not any(row.ranker == "probe" for row in view.ranked) or not LAYER_CURVE_PATH.is_file():
        return None
    return LAYER_CURVE_PATH.read_bytes()


def check_output(out: Path) -> Path:
    """``out`` as a path, unless it exists and is not a folder (an error naming it)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SourceSumError(f"site: output {out} exists and is not a folder")
    return out


class ExplorerPage(NamedTuple):
    """One explorer page: a split, its title, its number of pairs and its dataset."""

    split: str
    title: str
    pairs: int
    dataset: Dataset


def explorer_splits(view: BoardView) -> list[ExplorerPage]:
    """The explorer's pages: the board's splits, then each transfer task's board splits."""
    return [ExplorerPage(name, title, n, view.dataset) for name, title, n in view.splits] + [
        ExplorerPage(name, title, n, task.board.dataset)
        for task in view.tasks
        for name, title, n in task.board.splits
    ]


def check_site_target(out: Path, splits: list[str], extra: tuple[str, ...] = ()) -> None:
    """Refuse to build into ``out`` when it is a file or holds a file the build would replace
    that no earlier build wrote (its index, :data:`INDEX_NAME`, lists what ours did)."""
    planned = [PLOT_FILE, INDEX_FILE, *extra, *(explorer_file(name) for name in splits)]
    planned += [CITATION_PATH.name] if CITATION_PATH.is_file() else []
    check_folder_target(check_output(out), planned, INDEX_NAME, "site -o")


def build_site(view: BoardView, explorers: Mapping[str, dict[str, Any]], out: Path) -> list[SitePage]:
    """Write the site into ``out`` (created if missing; our files are replaced) and return the
    pages written with their sizes. ``explorers``: split name -> its explorer data. ``out``
    must not be an existing file."""
    from sourcesum.outputs.plot import render_png

    pages = explorer_splits(view)
    curve = layer_curve(view)
    check_site_target(out, [page.split for page in pages], (LAYER_CURVE_FILE,) if curve is not None else ())
    env = environment(autoescape=True)
    assets = {
        "css": (TEMPLATES / "site.css").read_text(encoding="utf-8"),
        "sort_js": (TEMPLATES / "sort.js").read_text(encoding="utf-8"),
        "explore_js": (TEMPLATES / "explore.js").read_text(encoding="utf-8"),
    }
    nav = [{"title": page.title, "file": explorer_file(page.split)} for page in pages]
    written = []
    write_bytes_atomic(out / PLOT_FILE, render_png(view))
    written.append(out / PLOT_FILE)
    context = index_context(view)
    if curve is not None:
        write_bytes_atomic(out / LAYER_CURVE_FILE, curve)
        written.append(out / LAYER_CURVE_FILE)
    context["layer_curve"] = LAYER_CURVE_FILE if curve is not None else None
    if context["citation"]:
        write_text_atomic(out / CITATION_PATH.name, context["citation"])
        written.append(out / CITATION_PATH.name)
    html = env.get_template("index.html.j2").render(
        page="index", nav=nav, plot=PLOT_FILE, **assets, **context
    )
    write_text_atomic(out / INDEX_FILE, html)
    written.append(out / INDEX_FILE)
    for page in pages:
        name, ds = page.split, page.dataset
        html = env.get_template("explore.html.j2").render(
            page=name,
            nav=nav,
            title=page.title,
            dataset=ds,
            graded=explorers[name]["relevance"] == "graded",
            relevance_text=ds.relevance_text,
            notice=ds.text_notice,
            data=embed_json(explorers[name]),
            version=__version__,
            **assets,
        )
        write_text_atomic(out / explorer_file(name), html)
        written.append(out / explorer_file(name))
    files = sorted({p.name for p in written} | owned_files(out, INDEX_NAME))
    write_text_atomic(
        out / INDEX_NAME, json.dumps({"format": "sourcesum-site/1", "files": files}, indent=2) + "\n"
    )
    return [SitePage(path, path.stat().st_size) for path in written]
