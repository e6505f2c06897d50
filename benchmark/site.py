"""The static site: the leaderboard and a per-pair explorer, as self-contained HTML files.

``build_site(board, out)`` writes, from the same :class:`~sourcesum.leaderboard.Leaderboard`
that ``sourcesum leaderboard`` renders (nothing is recomputed here):

- ``index.html``: the ranked rows, the published systems (the paper's own outputs, re-scored)
  and the reference rows in separate tables (sortable by every column, with CIs and
  significance marks), the rows significantly better than ``lead``, the human-agreement table,
  the plot (``plot.png``, from :func:`sourcesum.plot.render_png`), the ties section, each row's
  parameters and cache keys, and how to cite (``CITATION.cff``, copied alongside);
- ``explore-<split>.html`` per split: every pair's summary and sentences with their votes, each
  row's scores and ranks (from :func:`sourcesum.show.pair_view`, as ``sourcesum show``) and the
  per-pair NDCG and AP of the leaderboard's evaluations.

No server and no network: the data is embedded in each page as JSON in a
``<script type="application/json">`` element (browsers refuse to read local JSON files over
``file://``), the CSS and JavaScript are inlined, and the output is byte-identical for the same
leaderboard. Scores are shown rounded to 4 significant digits; ranks come from the exact scores.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sourcesum import __version__
from sourcesum.atomic import write_bytes_atomic, write_text_atomic
from sourcesum.data import manifest
from sourcesum.errors import SourceSumError
from sourcesum.leaderboard import ALPHA, Leaderboard, Row
from sourcesum.measures import AP, NDCG
from sourcesum.paths import PROJECT_ROOT
from sourcesum.render import (
    COVERAGE_HEADERS,
    TIES_TEXT,
    _columns,
    cell_mark,
    fmt,
    human_table,
    lead_comparisons,
    lead_summary,
    published_intro,
    published_notes,
    tie_columns,
    tie_rows,
)

TEMPLATES = Path(__file__).resolve().parent / "templates"
CITATION_PATH = PROJECT_ROOT / "CITATION.cff"
PLOT_FILE = "plot.png"
INDEX_FILE = "index.html"
INDEX_BUDGET = 500 * 1024
"""Bytes allowed for the index page: ``index.html`` plus the plot it shows."""
EXPLORER_BUDGET = 3 * 1024 * 1024
"""Bytes allowed for one split's explorer page."""
SCORE_DIGITS = 4
"""Significant digits of the scores shown in the explorer."""


def explorer_file(split: str) -> str:
    return f"explore-{split}.html"


@dataclass(frozen=True)
class SitePage:
    """One written file and its size in bytes."""

    path: Path
    size: int


def _environment():
    try:
        import jinja2
    except ImportError as exc:  # the `site` extra
        raise SourceSumError("sourcesum site needs Jinja2: pip install 'sourcesum-bench[site]'") from exc
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def embed_json(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: ``<``, ``>`` and ``&`` escaped
    as ``\\u003c`` etc. (still valid JSON, so ``JSON.parse`` returns the same data)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _cells(board: Leaderboard, row: Row) -> list[dict[str, Any]]:
    cells = []
    for header, split, measure in _columns(board):
        value = row.value(split, measure)
        low, high = row.ci.get((split, measure), (math.nan, math.nan))
        cells.append(
            {
                "header": header,
                "value": _number(value),
                "text": fmt(value),
                "mark": cell_mark(board, row, split, measure),
                "ci": f"[{fmt(low, 3)}, {fmt(high, 3)}]" if math.isfinite(low) else "",
            }
        )
    return cells


def _ties(board: Leaderboard) -> list[dict[str, Any]]:
    """The Ties section's rows, as the Markdown leaderboard lists them (columns: :func:`tie_columns`)."""
    out = []
    columns = tie_columns(board)
    for row in tie_rows(board):
        for split in board.splits:
            report = row.ties.get(split.name)
            if report is None:
                continue
            out.append(
                {
                    "label": row.label,
                    "split": split.title,
                    "pairs": report["pairs_with_ties"],
                    "sentences": report["sentences_tied"],
                    "values": [
                        {
                            "header": header,
                            "value": report[m.name].get(rule),
                            "text": fmt(report[m.name].get(rule)),
                        }
                        for header, m, rule in columns
                    ],
                }
            )
    return out


def _human(board: Leaderboard) -> dict[str, Any]:
    """The human-agreement section (:func:`sourcesum.render.human_table`) for the template."""
    data = human_table(board)
    if not data:
        return {}
    rows = []
    for row in data["rows"]:
        cells = []
        for header, cell in zip(data["columns"], row["cells"], strict=True):
            mark = {1: "above", -1: "below", 0: ""}[cell["mark"]]
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
    return {**data, "rows": rows, "coverage_headers": COVERAGE_HEADERS}


def _configurations(board: Leaderboard) -> list[dict[str, Any]]:
    """Each row's ranker, version, parameters and per-split cache key."""
    out = []
    for row in board.rows:
        entries = [
            (split.title, row.entries[split.name]) for split in board.splits if split.name in row.entries
        ]
        out.append(
            {
                "label": row.label,
                "ranker": row.ranker,
                "reference": row.reference,
                "published": row.published,
                "params": json.dumps(row.params, sort_keys=True),
                "versions": sorted({entry.version for _, entry in entries}),
                "cache_keys": []
                if row.published
                else [{"split": title, "key": entry.key} for title, entry in entries],
            }
        )
    return out


def index_context(board: Leaderboard) -> dict[str, Any]:
    """Everything ``index.html`` shows, taken from ``board`` and the rendering helpers."""
    data = manifest()
    return {
        "version": __version__,
        "data": {"repository": data["repository"], "commit": data["commit"][:10]},
        "alpha": ALPHA,
        "columns": [header for header, _, _ in _columns(board)],
        "ranked": [{"label": r.label, "cells": _cells(board, r)} for r in board.ranked_rows],
        "published": [{"label": r.label, "cells": _cells(board, r)} for r in board.published_rows],
        "published_intro": published_intro(board, quote=""),
        "published_notes": published_notes(board),
        "reference": [{"label": r.label, "cells": _cells(board, r)} for r in board.reference_rows],
        "lead": [
            {"column": title, "text": lead_summary(better, family, quote="")}
            for title, better, family in lead_comparisons(board)
        ],
        "human": _human(board),
        "ties": _ties(board),
        "ties_text": TIES_TEXT,
        "tie_columns": [header for header, _, _ in tie_columns(board)],
        "configurations": _configurations(board),
        "explorers": [
            {"title": s.title, "file": explorer_file(s.name), "pairs": len(s)} for s in board.splits
        ],
        "stale": board.stale,
        "citation": CITATION_PATH.read_text(encoding="utf-8") if CITATION_PATH.is_file() else "",
    }


def explorer_data(board: Leaderboard, split_name: str) -> dict[str, Any]:
    """The embedded data of one split's explorer.

    ``rankers``: the rows with scores on the split, ranked rows first (in leaderboard order),
    then published rows, then reference rows. ``docs``: each distinct
    sentence list once (pairs of one document share it). Per pair: ``votes[i]`` the annotators'
    0/1 votes on sentence ``i``; ``scores[j][i]`` / ``ranks[j][i]`` ranker ``j``'s score
    (rounded to :data:`SCORE_DIGITS` significant digits) and rank (1 = first, tied scores share
    their best rank) of sentence ``i``; ``ndcg[j]`` / ``ap[j]`` the pair's values in the
    leaderboard's evaluation of ranker ``j``.
    """
    from sourcesum.data import load_split
    from sourcesum.show import pair_view

    split = next(s for s in board.splits if s.name == split_name)
    rows = [
        r for r in board.ranked_rows + board.published_rows + board.reference_rows if split.name in r.entries
    ]
    labels = [r.label for r in rows]
    per_pair = {
        measure: [r.evaluations[split.name].per_pair[measure.name] for r in rows] for measure in (NDCG, AP)
    }
    docs: dict[tuple[str, ...], int] = {}
    pairs = []
    for pair in load_split(split.name):
        view = pair_view(pair, board, labels) if labels else {"sentences": []}
        doc = docs.setdefault(pair.sentences, len(docs))
        pairs.append(
            {
                "id": pair.id,
                "doc": doc,
                "summary": pair.summary,
                "votes": [list(v) for v in pair.votes],
                "scores": [
                    [float(f"{s['scores'][label]['score']:.{SCORE_DIGITS}g}") for s in view["sentences"]]
                    for label in labels
                ],
                "ranks": [[s["scores"][label]["rank"] for s in view["sentences"]] for label in labels],
                "ndcg": [_number(column[pair.id]) for column in per_pair[NDCG]],
                "ap": [_number(column[pair.id]) for column in per_pair[AP]],
            }
        )
    return {
        "split": split.name,
        "title": split.title,
        "rankers": [{"label": r.label, "reference": r.reference} for r in rows],
        "docs": [list(sentences) for sentences in docs],
        "pairs": pairs,
    }


def check_output(out: Path) -> Path:
    """``out`` as a path, unless it exists and is not a folder (an error naming it)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SourceSumError(f"site: output {out} exists and is not a folder")
    return out


def build_site(board: Leaderboard, out: Path) -> list[SitePage]:
    """Write the site into ``out`` (created if missing; our files are replaced) and return the
    pages written with their sizes. ``out`` must not be an existing file."""
    from sourcesum.plot import render_png

    out = check_output(out)
    env = _environment()
    assets = {
        "css": (TEMPLATES / "site.css").read_text(encoding="utf-8"),
        "sort_js": (TEMPLATES / "sort.js").read_text(encoding="utf-8"),
        "explore_js": (TEMPLATES / "explore.js").read_text(encoding="utf-8"),
    }
    nav = [{"title": s.title, "file": explorer_file(s.name)} for s in board.splits]
    written = []
    write_bytes_atomic(out / PLOT_FILE, render_png(board))
    written.append(out / PLOT_FILE)
    context = index_context(board)
    if context["citation"]:
        write_text_atomic(out / CITATION_PATH.name, context["citation"])
        written.append(out / CITATION_PATH.name)
    html = env.get_template("index.html.j2").render(
        page="index", nav=nav, plot=PLOT_FILE, **assets, **context
    )
    write_text_atomic(out / INDEX_FILE, html)
    written.append(out / INDEX_FILE)
    for split in board.splits:
        data = explorer_data(board, split.name)
        html = env.get_template("explore.html.j2").render(
            page=split.name, nav=nav, title=split.title, data=embed_json(data), version=__version__, **assets
        )
        write_text_atomic(out / explorer_file(split.name), html)
        written.append(out / explorer_file(split.name))
    return [SitePage(path, path.stat().st_size) for path in written]


def page_sizes(pages: list[SitePage]) -> dict[str, int]:
    """Bytes per page as the budgets count them: the index page with its plot, each explorer."""
    by_name = {p.path.name: p.size for p in pages}
    sizes = {INDEX_FILE: by_name[INDEX_FILE] + by_name.get(PLOT_FILE, 0)}
    sizes.update({name: size for name, size in by_name.items() if name.startswith("explore-")})
    return sizes
