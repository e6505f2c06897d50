"""The leaderboard plot: per split, each row's mean of every board measure with 95% CI whiskers (PNG).

Drawing costs about a second (importing matplotlib, then rendering), so the PNG bytes are
memoised (:mod:`sourcesum.util.memo`, kind ``plots``) under everything the drawing reads
(:func:`plot_inputs`: labels, split titles, measure names, every mean and CI bound, exactly),
this module's source and the matplotlib version (:func:`plot_parts`). An unchanged board reuses
the drawing; any change draws anew.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from sourcesum.board.view import BoardView, RowView
from sourcesum.util.hashing import sha256_bytes
from sourcesum.util.versions import installed_version

PLOT_MARK = "sourcesum-bench leaderboard plot"
"""Written into every plot's PNG metadata: how a later run knows the file is ours to replace."""


PNG_END = b"IEND\xaeB`\x82"
"""The last bytes of every complete PNG (the IEND chunk and its CRC)."""


def is_our_plot(payload: bytes) -> bool:
    return payload.startswith(b"\x89PNG") and PLOT_MARK.encode() in payload


COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
X_MIN = 0.25
"""Left end of the x axis, unless a value or CI bound lies within 0.02 of it or below (then 0.02 below that)."""


def _split_cells(view: BoardView, row: RowView, split: str) -> list[tuple[float, tuple[float, float]]]:
    """``(mean, CI)`` of ``row`` on ``split`` for each measure (NaN CI where there is none)."""
    return [
        (cell.value, cell.ci if cell.ci is not None else (float("nan"), float("nan")))
        for column, cell in zip(view.columns, row.cells, strict=True)
        if column.split == split
    ]


def plot_inputs(view: BoardView) -> dict[str, Any]:
    """Everything :func:`render_png` draws, as JSON-ready values (floats by ``repr``)."""
    return {
        "labels": [r.label for r in view.rows],
        "splits": [[name, title] for name, title, _ in view.splits],
        "measures": [[m.name, m.display_name] for m in view.measures],
        "values": [
            [repr(mean), *map(repr, ci)]
            for r in view.rows
            for name, _, _ in view.splits
            for mean, ci in _split_cells(view, r, name)
        ],
    }


def plot_parts(view: BoardView) -> list[Any]:
    """What the plot depends on: :func:`plot_inputs`, this module's source and the matplotlib
    version."""
    return [plot_inputs(view), sha256_bytes(Path(__file__).read_bytes()), installed_version("matplotlib")]


def render_png(view: BoardView) -> bytes:
    """PNG bytes; deterministic for the same leaderboard (no timestamps in the metadata), from
    the memo (:mod:`sourcesum.util.memo`) when an identical board was drawn before. A recalled
    record that does not hold one of our plots is drawn again (with a note), never used."""
    from sourcesum.util import memo

    def from_record(record: memo.Record) -> bytes:
        data = record.arrays.get("png")
        png = data.tobytes() if data is not None and data.dtype == np.uint8 and data.ndim == 1 else b""
        if not (is_our_plot(png) and png.endswith(PNG_END)):
            raise memo.MemoMismatch("not one of our plots")
        return png

    return memo.memoised(
        "plots",
        plot_parts(view),
        lambda: draw_png(view),
        lambda png: memo.Record(None, {"png": np.frombuffer(png, dtype=np.uint8)}),
        from_record,
    )


def x_range(view: BoardView) -> tuple[float, float]:
    """``(X_MIN, 1.02)``, extended left to 0.02 below the lowest finite mean or CI bound."""
    lowest = min(
        (float(v) for values in plot_inputs(view)["values"] for v in values if np.isfinite(float(v))),
        default=X_MIN,
    )
    return (min(X_MIN, lowest - 0.02), 1.02)


def draw_png(view: BoardView) -> bytes:
    """Draw the plot with matplotlib (Agg) and return the PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = view.rows
    low, high = x_range(view)
    labels = [r.label for r in rows]
    fig, axes = plt.subplots(
        1, len(view.splits), figsize=(4.2 * len(view.splits), 0.38 * len(rows) + 1.6), sharey=True
    )
    y = np.arange(len(rows))[::-1]
    for ax, (split, title, _) in zip(np.atleast_1d(axes), view.splits, strict=False):
        count = len(view.measures)
        offsets = np.linspace(0.17, -0.17, count) if count > 1 else [0.0]
        cells = [_split_cells(view, r, split) for r in rows]
        for index, (offset, measure, color) in enumerate(
            zip(offsets, view.measures, COLORS * 2, strict=False)
        ):
            values = np.array([c[index][0] for c in cells])
            ci = np.array([c[index][1] for c in cells], dtype=float).reshape(-1, 2)
            err = np.abs(np.vstack([values - ci[:, 0], ci[:, 1] - values]))
            ax.errorbar(
                values,
                y + offset,
                xerr=np.nan_to_num(err),
                fmt="o",
                ms=3.5,
                capsize=2.5,
                color=color,
                label=measure.display_name,
            )
        ax.set_title(title, fontsize=10)
        ax.set_xlim(low, high)
        ax.grid(axis="x", alpha=0.3)
    first = np.atleast_1d(axes)[0]
    first.set_yticks(y)
    first.set_yticklabels(labels, fontsize=8)
    first.legend(loc="lower left", fontsize=8)
    names = " and ".join(m.display_name for m in view.measures)
    fig.suptitle(
        f"{view.dataset.title}: mean {names} with 95% bootstrap CIs (documents resampled)", fontsize=11
    )
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None, "Comment": PLOT_MARK})
    plt.close(fig)
    return buffer.getvalue()
