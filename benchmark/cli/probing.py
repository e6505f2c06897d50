"""``sourcesum probe-layers``: the ``probe`` ranker's layer curve, from stored entries.

Each point of the curve is one configuration of the ``probe`` ranker (a layer, or ``all``; a
``mode``; ``weights``; a training ``protocol``; the fixed :data:`CURVE_PARAMS` otherwise), read
from the score store like any other entry, so the curve is reproducible and resumable;
``--compute`` runs the missing ones through the normal runner first. For every point it gives
the mean NDCG, MAP, NDCG@10 and Spearman per split and their average over the splits, each with
a percentile bootstrap CI (the board's: documents resampled within each split, the average's
interval from the mean of the splits' resampled means, resample by resample), and per protocol,
weights, mode and measure the peak layer.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sourcesum.cli.common import SCHEMAS, non_negative_int, parse_params, print_json, resamples
from sourcesum.errors import SourceSumError

CURVE_PARAMS: dict[str, Any] = {"probe": "linear", "pool": "mean", "C": 1.0, "dtype": "float32"}
"""What every point of the curve fixes: the linear probe at C = 1 (the C at which ``layer=cv``
compares layers), mean pooling, float32 passes."""
MODES = ("blind", "conditioned")
WEIGHTS = ("pretrained", "random")
PROTOCOLS = ("kfold", "cross-corpus")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "probe-layers",
        help="the probe ranker's layer curve: NDCG, MAP, NDCG@10 and Spearman per layer, mode and weights",
    )
    p.add_argument(
        "--model", default=None, help="the LM (default: the probe's default, SmolLM2-135M-Instruct)"
    )
    p.add_argument(
        "--layers",
        help="comma-separated layers, ranges (0-30) and 'all' (default: 0..L of the model, then all)",
    )
    p.add_argument("--modes", default=",".join(MODES), help="comma-separated: blind, conditioned")
    p.add_argument("--weights", default=",".join(WEIGHTS), help="comma-separated: pretrained, random")
    p.add_argument("--protocols", default=",".join(PROTOCOLS), help="comma-separated training protocols")
    p.add_argument(
        "--split", default="sourcesum", help="splits or a dataset (default: SourceSum's board splits)"
    )
    p.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="probe.NAME=VALUE",
        help="other fixed parameters",
    )
    p.add_argument("--scores-dir", help="your store (read over data/scores; --compute writes into it)")
    p.add_argument("--compute", action="store_true", help="compute the missing entries first (resumable)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--resamples", type=resamples, default=10_000, help="bootstrap resamples (default 10,000)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--plot", metavar="PNG", help="also draw the curve into this PNG file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_probe_layers)


def _choices(text: str, allowed: Sequence[str], option: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in values if v not in allowed]
    if unknown or not values:
        raise SourceSumError(f"{option} {text!r}: expected a comma-separated subset of {', '.join(allowed)}")
    return list(dict.fromkeys(values))


def layer_names(model: str, text: str | None) -> list[str]:
    """The curve's layers: ``--layers`` (indices, ranges ``A-B`` with both ends, ``all``; canonical,
    each once), else ``0..L`` of ``model`` and ``all``."""
    from sourcesum.rankers.lm.probe import parse_layer

    if text:
        names: list[str] = []
        for item in (v.strip() for v in text.split(",") if v.strip()):
            first, dash, last = item.partition("-")
            if dash:  # a range of indices, both ends included
                low, high = int(parse_layer(first, "--layers")), int(parse_layer(last, "--layers"))
                if low > high:
                    raise SourceSumError(f"--layers {item!r}: a range runs from the lower index up")
                names += [str(i) for i in range(low, high + 1)]
            else:
                names.append(parse_layer(item, "--layers"))
        return list(dict.fromkeys(names))
    from sourcesum.rankers.lm.hidden_states import n_states
    from sourcesum.rankers.lm.loading import load_lm

    return [*(str(i) for i in range(n_states(load_lm(model, "cpu", "float32").model))), "all"]


def configurations(args: argparse.Namespace) -> tuple[str, list[tuple[dict[str, str], Any]]]:
    """The model and every point's ``(coordinates, Configuration)``, in the order they are
    computed (the costly concatenated layers last; pretrained weights before random ones),
    every parameter checked."""
    from sourcesum.rankers.lm.probe import ProbeRanker
    from sourcesum.runner.configs import Configuration

    extra = parse_params(args.param, ["probe"])["probe"]
    reserved = {"layer", "mode", "weights", "protocol", "model"} & set(extra)
    if reserved:
        raise SourceSumError(f"--param probe.{sorted(reserved)[0]}: the curve sets it; use its own option")
    model = args.model or str(ProbeRanker.default_of("model"))
    modes = _choices(args.modes, MODES, "--modes")
    weights = _choices(args.weights, WEIGHTS, "--weights")
    protocols = _choices(args.protocols, PROTOCOLS, "--protocols")
    layers = layer_names(model, args.layers)
    if "cv" in layers:
        raise SourceSumError("--layers: cv is not a layer of the curve (it chooses one)")
    points = []
    for concatenated in (False, True):
        for weight in weights:
            for protocol in protocols:
                for mode in modes:
                    for layer in layers:
                        if (layer == "all") != concatenated:
                            continue
                        coordinates = {"protocol": protocol, "weights": weight, "mode": mode, "layer": layer}
                        params = {**CURVE_PARAMS, **extra, **coordinates, "model": model}
                        points.append((coordinates, Configuration.of("probe", params)))
    return model, points


def _entries(config: Any, splits: Sequence[Any], store: Any) -> dict[str, Any] | None:
    """The configuration's complete entries on ``splits`` (None unless every one is)."""
    found = {}
    for split in splits:
        entry = store.load(config.ranker, split.name, config.entry_key(split.name, split.sha256))
        if entry is None or not entry.complete:
            return None
        found[split.name] = entry
    return found


def point_values(
    entries: dict[str, Any], splits: Sequence[Any], measures: Sequence[Any], resamples: int, seed: int
) -> dict[str, Any]:
    """Per split and averaged: each measure's mean and 95% bootstrap CI (module docstring)."""
    import numpy as np
    from sourcesum import stats
    from sourcesum.evaluation import evaluate_split

    out: dict[str, Any] = {"splits": {}, "average": {}}
    resampled: dict[str, list[np.ndarray]] = {m.json_key: [] for m in measures}
    for split in splits:
        evaluation = evaluate_split(split, entries[split.name].scores, "probe", measures)
        vectors = [evaluation.values(m) for m in measures]
        means = stats.bootstrap_means_each(vectors, resamples, seed, list(split.clusters))
        cells = {}
        for measure, draws in zip(measures, means, strict=True):
            low, high = stats.percentile_interval(draws)
            cells[measure.json_key] = {
                "mean": _round(evaluation.mean(measure)),
                "ci": [_round(low), _round(high)],
            }
            resampled[measure.json_key].append(draws)
        out["splits"][split.name] = cells
    for measure in measures:
        key = measure.json_key
        mean = float(np.mean([out["splits"][s.name][key]["mean"] for s in splits]))
        low, high = stats.percentile_interval(np.mean(resampled[key], axis=0))
        out["average"][key] = {"mean": _round(mean), "ci": [_round(low), _round(high)]}
    return out


def _round(value: float) -> float:
    return round(float(value), 6) if math.isfinite(value) else float("nan")


def peaks(points: Sequence[dict[str, Any]], measures: Sequence[Any]) -> list[dict[str, Any]]:
    """Per protocol, mode and measure: the pretrained and random curves' peak layers (highest
    average; ties: the lower layer) and values, the random curve at the pretrained peak, and
    both at ``all``."""
    out = []
    keys = sorted({(p["protocol"], p["mode"]) for p in points}, key=lambda k: (PROTOCOLS.index(k[0]), k[1]))
    for protocol, mode in keys:
        for measure in measures:
            key = measure.json_key
            curve: dict[str, dict[str, float]] = {}
            for p in points:
                if (p["protocol"], p["mode"]) == (protocol, mode):
                    curve.setdefault(p["weights"], {})[p["layer"]] = p["average"][key]["mean"]
            record: dict[str, Any] = {"protocol": protocol, "mode": mode, "measure": key}
            for weights, values in curve.items():
                layers = [name for name in values if name != "all"]
                if layers:
                    best = max(layers, key=lambda name: (values[name], -int(name)))
                    record[weights] = {
                        "peak_layer": int(best),
                        "peak": values[best],
                        "all": values.get("all"),
                    }
            if "pretrained" in record and "random" in record:
                at = str(record["pretrained"]["peak_layer"])
                random_at = curve["random"].get(at)
                record["random_at_pretrained_peak"] = random_at
                if random_at is not None:
                    record["gap_at_peak"] = _round(record["pretrained"]["peak"] - random_at)
            out.append(record)
    return out


def cmd_probe_layers(args: argparse.Namespace) -> int:
    from sourcesum.data import load_split, resolve_split_names
    from sourcesum.evaluation.measures import AP, NDCG, Measure
    from sourcesum.runner import run_splits
    from sourcesum.store import open_stores
    from tqdm.auto import tqdm

    if args.plot and not args.plot.endswith(".png"):
        raise SourceSumError(f"--plot {args.plot}: the figure is a PNG; name a .png file")
    model, points = configurations(args)
    splits = [load_split(name) for name in resolve_split_names(args.split)]
    measures = (NDCG, AP, Measure.of("nDCG", k=10), Measure.of("Spearman"))
    store = open_stores(args.scores_dir)
    started = time.monotonic()
    missing: list[str] = []
    records: list[dict[str, Any]] = []
    computed = 0
    bar = tqdm(points, desc="probe-layers", unit="configuration", disable=args.no_progress or None)
    for coordinates, config in bar:
        entries = _entries(config, splits, store)
        if entries is None and args.compute:
            bar.set_postfix_str(config.label)
            run_splits(config.create(), splits, store, progress=not args.no_progress)
            computed += 1
            entries = _entries(config, splits, store)
        if entries is None:
            missing.append(config.label)
            continue
        records.append({**coordinates, **point_values(entries, splits, measures, args.resamples, args.seed)})
    if missing:
        raise SourceSumError(
            f"probe-layers: {len(missing)} of {len(points)} configurations lack complete entries on "
            f"{', '.join(s.name for s in splits)} (first: {missing[0]}); compute them with the same "
            "command and --compute (resumable)"
        )
    shared = {k: v for k, v in points[0][1].params.items() if k not in (*points[0][0], "model")}
    curve = {
        "model": model,
        "fixed": shared,
        "splits": [s.name for s in splits],
        "measures": [m.json_key for m in measures],
        "resamples": args.resamples,
        "seed": args.seed,
        "points": records,
        "peaks": peaks(records, measures),
    }
    if args.plot:
        from sourcesum.outputs.layer_curve import draw_layer_curve
        from sourcesum.util.files import write_bytes_atomic

        write_bytes_atomic(Path(args.plot), draw_layer_curve(curve))
    if args.json:
        print_json(SCHEMAS["probe-layers"], curve)
    else:
        print(render_table(curve))
    if computed:
        print(
            f"note: computed {computed} configurations in {time.monotonic() - started:.0f} s", file=sys.stderr
        )
    return 0


def render_table(curve: dict[str, Any]) -> str:
    """Per protocol, weights and mode: one line per layer with each measure's average and CI,
    then the peaks."""
    lines = []
    keys = curve["measures"]
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for point in curve["points"]:
        groups.setdefault((point["protocol"], point["weights"], point["mode"]), []).append(point)
    for (protocol, weights, mode), points in groups.items():
        lines.append(
            f"{curve['model']}, protocol={protocol}, weights={weights}, mode={mode} (average of {len(curve['splits'])} splits)"
        )
        lines.append("layer  " + "  ".join(f"{k:>24}" for k in keys))
        for point in points:
            cells = [
                f"{point['average'][k]['mean']:.4f} [{point['average'][k]['ci'][0]:.4f}, {point['average'][k]['ci'][1]:.4f}]"
                for k in keys
            ]
            lines.append(f"{point['layer']:>5}  " + "  ".join(f"{c:>24}" for c in cells))
        lines.append("")
    for peak in curve["peaks"]:
        parts = [
            f"{weights} peak at layer {peak[weights]['peak_layer']} ({peak[weights]['peak']:.4f})"
            for weights in WEIGHTS
            if weights in peak
        ]
        lines.append(f"{peak['protocol']}, {peak['mode']}, {peak['measure']}: " + "; ".join(parts))
    return "\n".join(lines)
