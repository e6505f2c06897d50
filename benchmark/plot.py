"""The leaderboard plot: per split, each ranker's mean of every board measure with 95% CI whiskers (PNG).

Drawing costs about a second (importing matplotlib, then rendering), so the PNG bytes are
memoised in ``$SOURCESUM_CACHE_DIR/plots/<key>.png`` (safe to delete): the key is the sha256 of
everything the drawing reads (:func:`plot_inputs`: labels, split titles, measure names, every
mean and CI bound, exactly), this module's source and the matplotlib version. An unchanged
board reuses the file; any change draws anew.
"""

from __future__ import annotations

import hashlib
import io
import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
from sourcesum import paths
from sourcesum.atomic import write_bytes_atomic
from sourcesum.leaderboard import Leaderboard, Row
from sourcesum.render import column_name

COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
X_MIN = 0.25
"""Left end of the x axis, unless a value or CI bound lies within 0.02 of it or below (then 0.02 below that)."""


def _rows(board: Leaderboard) -> list[Row]:
    return board.ranked_rows + board.published_rows + board.reference_rows


def plot_inputs(board: Leaderboard) -> dict[str, Any]:
    """Everything :func:`render_png` draws, as JSON-ready values (floats by ``repr``)."""
    rows = _rows(board)
    return {
        "labels": [r.label for r in rows],
        "splits": [[s.name, s.title] for s in board.splits],
        "measures": [[m.name, column_name(m)] for m in board.measures],
        "values": [
            [
                repr(r.mean(s.name, m)),
                *map(repr, r.ci.get((s.name, m), (float("nan"), float("nan")))),
            ]
            for r in rows
            for s in board.splits
            for m in board.measures
        ],
    }


def plot_key(board: Leaderboard) -> str:
    """sha256 of :func:`plot_inputs`, this module's source and the matplotlib version."""
    try:
        library = version("matplotlib")
    except PackageNotFoundError:
        library = "not installed"
    digest = hashlib.sha256(json.dumps(plot_inputs(board), sort_keys=True).encode())
    digest.update(Path(__file__).read_bytes())
    digest.update(library.encode())
    return digest.hexdigest()


def render_png(board: Leaderboard) -> bytes:
    """PNG bytes; deterministic for the same leaderboard (no timestamps in the metadata), from
    the memo when an identical board was drawn before (module docstring)."""
    path = paths.cache_dir() / "plots" / f"{plot_key(board)}.png"
    if path.is_file():
        return path.read_bytes()
    png = draw_png(board)
    write_bytes_atomic(path, png)
    return png


def x_range(board: Leaderboard) -> tuple[float, float]:
    """``(X_MIN, 1.02)``, extended left to 0.02 below the lowest finite mean or CI bound."""
    lowest = min(
        (float(v) for values in plot_inputs(board)["values"] for v in values if np.isfinite(float(v))),
        default=X_MIN,
    )
    return (min(X_MIN, lowest - 0.02), 1.02)


def draw_png(board: Leaderboard) -> bytes:
    """Draw the plot with matplotlib (Agg) and return the PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _rows(board)
    low, high = x_range(board)
    labels = [r.label for r in rows]
    fig, axes = plt.subplots(
        1, len(board.splits), figsize=(4.2 * len(board.splits), 0.38 * len(rows) + 1.6), sharey=True
    )
    y = np.arange(len(rows))[::-1]
    for ax, split in zip(np.atleast_1d(axes), board.splits, strict=False):
        count = len(board.measures)
        offsets = np.linspace(0.17, -0.17, count) if count > 1 else [0.0]
        for offset, measure, color in zip(offsets, board.measures, COLORS * 2, strict=False):
            values = np.array([r.mean(split.name, measure) for r in rows])
            ci = np.array([r.ci.get((split.name, measure), (np.nan, np.nan)) for r in rows])
            err = np.abs(np.vstack([values - ci[:, 0], ci[:, 1] - values]))
            ax.errorbar(
                values,
                y + offset,
                xerr=np.nan_to_num(err),
                fmt="o",
                ms=3.5,
                capsize=2.5,
                color=color,
                label=column_name(measure),
            )
        ax.set_title(split.title, fontsize=10)
        ax.set_xlim(low, high)
        ax.grid(axis="x", alpha=0.3)
    first = np.atleast_1d(axes)[0]
    first.set_yticks(y)
    first.set_yticklabels(labels, fontsize=8)
    first.legend(loc="lower left", fontsize=8)
    names = " and ".join(column_name(m) for m in board.measures)
    fig.suptitle(f"SourceSum: mean {names} with 95% bootstrap CIs (documents resampled)", fontsize=11)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()
