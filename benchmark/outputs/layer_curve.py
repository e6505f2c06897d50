"""The probe's layer curve as a figure (PNG), drawn from ``sourcesum probe-layers``' values.

One row of panels per training protocol, one column per measure (NDCG@10 and Spearman, the
measures Zhou et al. (2026) draw): in each panel one line per mode over the layers, the
pretrained weights solid with their 95% CI band, the random-weights control dashed in the same
colour; the concatenated layers (``all``) as points with CI bars right of the last layer.
Deterministic for the same values (no timestamps in the PNG's metadata).
"""

from __future__ import annotations

import io
from typing import Any

MEASURES = (("ndcg_at_10", "NDCG@10"), ("spearman", "Spearman"))
"""(JSON key, panel title) of the measures drawn."""
COLORS = {"blind": "tab:blue", "conditioned": "tab:orange"}
MARK = "sourcesum-bench probe layer curve"
OFFSETS = {
    ("blind", "pretrained"): -0.75,
    ("blind", "random"): -0.25,
    ("conditioned", "pretrained"): 0.25,
    ("conditioned", "random"): 0.75,
}
"""Where each curve's ``all`` point sits around its tick, so the four do not overlap."""


def draw_layer_curve(curve: dict[str, Any]) -> bytes:
    """PNG bytes of the figure for ``curve`` (the ``--json`` payload of ``probe-layers``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = curve["points"]
    protocols = list(dict.fromkeys(p["protocol"] for p in points))
    measures = [(key, title) for key, title in MEASURES if key in curve["measures"]]
    fig, axes = plt.subplots(
        len(protocols), len(measures), figsize=(5.6 * len(measures), 3.4 * len(protocols)), squeeze=False
    )
    numeric = sorted({int(p["layer"]) for p in points if p["layer"] != "all"})
    at_all = (numeric[-1] + 2) if numeric else 0
    for row, protocol in enumerate(protocols):
        for column, (key, title) in enumerate(measures):
            ax = axes[row][column]
            for mode, color in COLORS.items():
                for weights, style in (("pretrained", "-"), ("random", "--")):
                    chosen = [
                        p
                        for p in points
                        if (p["protocol"], p["mode"], p["weights"]) == (protocol, mode, weights)
                    ]
                    if not chosen:
                        continue
                    line = sorted((int(p["layer"]), p["average"][key]) for p in chosen if p["layer"] != "all")
                    label = f"{mode}, {weights}" + (" (control)" if weights == "random" else "")
                    if line:
                        x = [layer for layer, _ in line]
                        ax.plot(x, [v["mean"] for _, v in line], style, color=color, lw=1.6, label=label)
                        if weights == "pretrained":
                            ax.fill_between(
                                x,
                                [v["ci"][0] for _, v in line],
                                [v["ci"][1] for _, v in line],
                                color=color,
                                alpha=0.15,
                            )
                    for p in chosen:
                        if p["layer"] == "all":
                            value = p["average"][key]
                            ax.errorbar(
                                [at_all + OFFSETS[mode, weights]],
                                [value["mean"]],
                                yerr=[[value["mean"] - value["ci"][0]], [value["ci"][1] - value["mean"]]],
                                fmt="o" if weights == "pretrained" else "s",
                                mfc=color if weights == "pretrained" else "white",
                                color=color,
                                ms=4,
                                capsize=2,
                            )
            ticks = [n for n in numeric if n % 5 == 0] + (
                [at_all] if any(p["layer"] == "all" for p in points) else []
            )
            ax.set_xticks(ticks)
            ax.set_xticklabels([str(t) if t != at_all or not numeric else "all" for t in ticks])
            ax.set_title(f"{title}, protocol={protocol}", fontsize=10)
            ax.set_xlabel("layer (0 = embeddings)", fontsize=9)
            ax.grid(alpha=0.3)
            if row == 0 and column == 0:
                ax.legend(fontsize=7, loc="best")
    fig.suptitle(
        f"{curve['model']}: linear probe per layer, mean over {len(curve['splits'])} splits "
        "(95% bootstrap CI, documents resampled)",
        fontsize=11,
    )
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None, "Comment": MARK})
    plt.close(fig)
    return buffer.getvalue()
