"""A trained ranker's fitted model in words (``sourcesum explain``)."""

from __future__ import annotations

from typing import Any


def format_model(model: dict[str, Any]) -> str:
    """One fitted model: training data, hyper-parameters, their search (an inner CV, or a grid
    scored on the training pairs), weights by size."""
    if "probe" in model:
        return format_probe(model)
    if model.get("model") == "at2":
        return format_at2(model)
    default = ["C", "l1_ratio"] if model["model"] == "logistic" else ["trees"]
    names = model.get("hyper_names", default)
    search = "grid on the training pairs" if model["model"] == "grid" else "inner CV"
    lines = [
        f"  {model['model']} fitted on {' + '.join(model['trained_on'])} ({model['pairs']} pairs), "
        + ", ".join(f"{n} = {model[n]:g}" for n in names)
        + (f" (chosen by {search})" if model["cv"] else " (fixed)")
    ]
    for row in model["cv"]:
        mark = "  <- chosen" if row.get("selected") else ""
        tried = ", ".join(f"{n}={row[n]:g}" for n in names if n in row)
        lines.append(f"    {search} {tried}: nDCG {row['ndcg']:.4f}  AP {row['ap']:.4f}{mark}")
    what = {"logistic": "weight (standardised feature)", "grid": "weight"}.get(
        model["model"], "share of split gain"
    )
    lines.append(f"    {what}:")
    for feature, weight in sorted(model["weights"].items(), key=lambda kv: -abs(kv[1])):
        lines.append(f"      {weight:+.4f}  {feature}")
    return "\n".join(lines)


def format_probe(model: dict[str, Any]) -> str:
    """A fitted ``probe``: its layer and the inner CV that chose it, then the linear probe's C and
    its inner CV, or the MLP's epochs."""
    left_out = f", {model['left_out_pairs']} beyond the window left out" if model["left_out_pairs"] else ""
    lines = [
        f"  {model['probe']} probe on layer {model['layer']}, fitted on {' + '.join(model['trained_on'])} "
        f"({model['pairs']} pairs{left_out})"
        + (" (layer chosen by inner CV at C = 1)" if model["layer_cv"] else "")
    ]
    for row in model["layer_cv"]:
        mark = "  <- chosen" if row.get("selected") else ""
        lines.append(f"    inner CV layer {row['layer']}: nDCG {row['ndcg']:.4f}  AP {row['ap']:.4f}{mark}")
    if model["probe"] == "linear":
        lines.append(f"    C = {model['C']:g}" + (" (chosen by inner CV)" if model["cv"] else " (fixed)"))
        for row in model["cv"]:
            mark = "  <- chosen" if row.get("selected") else ""
            lines.append(f"    inner CV C={row['C']:g}: nDCG {row['ndcg']:.4f}  AP {row['ap']:.4f}{mark}")
    else:
        lines.append(f"    {model['epochs_run']} epochs, the weights of epoch {model['best_epoch']} kept")
    return "\n".join(lines)


FIT_SOURCES = {
    "stored": "as stored with the entry (the weights that scored it)",
    "refitted": "refitted: the entry predates stored fits (its scores may come from weights that "
    "differ by float noise)",
    "new": "fitted now (no entry yet)",
}
"""How ``sourcesum explain`` came by a fit a ranker stores (its ``fit`` field)."""


def format_at2(model: dict[str, Any]) -> str:
    """A fitted ``at2``: where its head weights were fitted, and the heads of largest weight."""
    lines = [
        f"  at2 head weights fitted on {' + '.join(model['trained_on'])} ({model['pairs']} pairs, "
        f"votes withheld), {model['features']} heads, "
        + FIT_SOURCES[str(model.get("fit", "new"))]
        + "; largest weights:"
    ]
    for head in model["top_heads"]:
        lines.append(f"      {head['weight']:+.4f}  layer {head['layer']} head {head['head']}")
    return "\n".join(lines)
