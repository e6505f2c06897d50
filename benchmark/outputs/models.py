"""A trained ranker's fitted model in words (``sourcesum explain``)."""

from __future__ import annotations

from typing import Any


def format_model(model: dict[str, Any]) -> str:
    """One fitted model: training data, hyper-parameters, inner CV, weights by size."""
    names = ["C", "l1_ratio"] if model["model"] == "logistic" else ["trees"]
    lines = [
        f"  {model['model']} fitted on {' + '.join(model['trained_on'])} ({model['pairs']} pairs), "
        + ", ".join(f"{n} = {model[n]:g}" for n in names)
        + (" (chosen by inner CV)" if model["cv"] else " (fixed)")
    ]
    for row in model["cv"]:
        mark = "  <- chosen" if row.get("selected") else ""
        tried = ", ".join(f"{n}={row[n]:g}" for n in names if n in row)
        lines.append(f"    inner CV {tried}: nDCG {row['ndcg']:.4f}  AP {row['ap']:.4f}{mark}")
    what = "weight (standardised feature)" if model["model"] == "logistic" else "share of split gain"
    lines.append(f"    {what}:")
    for feature, weight in sorted(model["weights"].items(), key=lambda kv: -abs(kv[1])):
        lines.append(f"      {weight:+.4f}  {feature}")
    return "\n".join(lines)
