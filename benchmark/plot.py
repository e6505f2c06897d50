"""The leaderboard plot: per split, each ranker's mean of every board measure with 95% CI whiskers (PNG)."""

from __future__ import annotations

import io

import numpy as np
from sourcesum.leaderboard import Leaderboard
from sourcesum.render import column_name

COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def render_png(board: Leaderboard) -> bytes:
    """PNG bytes; deterministic for the same leaderboard (no timestamps in the metadata)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = board.ranked_rows + board.published_rows + board.reference_rows
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
        ax.set_xlim(0.25, 1.02)
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
