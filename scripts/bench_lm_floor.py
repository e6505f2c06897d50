"""The least time the LM rankers can take on this machine: their matmul work at the machine's
measured matmul throughput. Prints JSON: the model, the torch threads, the GFLOP per token of the
model body and of its output layer, the measured GFLOP/s per dtype, and per ranker
(``perplexity_gain``, ``pmi``, ``attention``, ``attribution``) the tokens through the body and
through the output layer and the floor in minutes per dtype and matmul path, plus the total
floor of the four per dtype and path (``attribution``, which needs gradients, counted on the
default path under every path, as it runs). The ``probe`` ranker's passes are counted apart
(``probe:blind``, ``probe:conditioned``: the states of every pair of the splits, from an empty
cache; not in the total), and so are ``contextcite`` (its default 32 ablations: the full context
once, the passes of the prefix tree of each design's distinct ablated contexts, every summary
after each context) and ``at2`` (its features' pass over the scored pairs; its fit reads the
training pairs' features with the same pass).

For the default model (or ``--model``) it counts the tokens each ranker must run through the
model over SourceSum's four board splits (or ``--split``; the engine's own inputs: the runner's
cross-split document groups; leave-one-out suffixes for ``perplexity_gain``, over its
``--shortlist`` only when given, as ``contextcite`` ablates only each pair's; every sentence once
per summary plus once unconditioned for ``pmi``; the document once per document and each summary
once for ``attention``; for ``attribution`` with its default method, saliency, the document
once, each summary once forward with its logits, and one backward pass per summary through the
summary and the document, input gradients only, which costs what a forward pass does; ``probe``,
the body only, once per document in ``blind`` mode and once per summary in ``conditioned``
mode). Summaries whose document reading exceeds the model's window are left out for the rankers that
read the whole document, as they run nothing there under ``overflow=ties``. It multiplies by the
FLOPs per token of the model's Linear layers (``2 x in x out`` per layer, plus the output layer
where logits are needed), and divides by the throughput of the Linear layers measured here on the
model's own layer shapes, per dtype and per **matmul path** the installed torch offers: ``default``
(``torch.nn.functional.linear``: torch's BLAS, MKL on x86 wheels) and ``onednn`` (the layer
converted as the engine converts it with ``matmul=onednn``: ``torch.utils.mkldnn.MkldnnLinear``,
oneDNN, dense inputs converted on the way in and out). It prints the CPU model and vendor, torch's
BLAS and oneDNN build facts, the path with the highest throughput per dtype (``favoured``), the path
the engine's ``matmul=auto`` takes here (``auto_path``, chosen from CPU and library facts, never
from a timing) and the floor under every path. Norms, attention scores, padding and Python overhead
are left out, so real runs can only be slower.

    python scripts/bench_lm_floor.py [--threads 2] [--dtypes float32,bfloat16] [--paths default,onednn]
                                     [--split wice_test] [--shortlist K] [--window N]
                                     [--documents FILE] [--counts-only]

``--counts-only`` measures nothing: it prints the tokens per ranker alone (with the summaries of
each document counted), so a test can hold them against the tokens a ranker runs (the model
``--model`` names, e.g. a local folder: only its tokenizer and window are read).
``--documents FILE`` counts a JSON list of ``[sentences, summaries]`` documents (or
``[sentences, summaries, document text]``: ``contextcite`` seeds its masks from the text, by
default the sentences joined by newlines) instead of splits; ``--window N`` counts as if the
model's window were N tokens (0: no limit).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time
from collections import defaultdict

import torch
from sourcesum.data import dataset, load_split
from sourcesum.rankers.lm.floor import RANKERS, documents, token_counts
from sourcesum.rankers.lm.loading import load_lm
from sourcesum.rankers.lm.matmul import MATMUL_PATHS, cpu_vendor, favoured_path
from sourcesum.rankers.lm.weights import DEFAULT_LM


def linear_shapes(model) -> tuple[list[tuple[int, int]], tuple[int, int]]:
    """``(in, out)`` of every body Linear layer, and of the output layer."""
    head = model.get_output_embeddings()
    body = [
        (m.in_features, m.out_features)
        for m in model.modules()
        if isinstance(m, torch.nn.Linear) and m is not head
    ]
    return body, (head.in_features, head.out_features)


PATHS = MATMUL_PATHS


def available_paths() -> list[str]:
    """The matmul paths this torch can run on the CPU."""
    return ["default"] + (["onednn"] if torch.backends.mkldnn.is_available() else [])


def layer(n_in: int, n_out: int, dtype: torch.dtype, path: str) -> torch.nn.Module:
    """A bias-free Linear layer of the shape, on ``path`` (``onednn``: as the engine converts it)."""
    linear = torch.nn.Linear(n_in, n_out, bias=False, dtype=dtype)
    if path == "onednn":
        from torch.utils.mkldnn import MkldnnLinear

        return MkldnnLinear(linear, dtype)
    return linear


def throughput(
    shapes: list[tuple[int, int]],
    dtype: torch.dtype,
    path: str = "default",
    rows: int = 512,
    repeats: int = 5,
) -> float:
    """GFLOP/s of a Linear layer on ``path`` over one pass through ``shapes`` (each distinct
    shape timed once, weighted by how often it occurs), ``rows`` tokens at a time, best of
    ``repeats``."""
    flops = seconds = 0.0
    distinct: dict[tuple[int, int], int] = defaultdict(int)
    for shape in shapes:
        distinct[shape] += 1
    with torch.inference_mode():
        for (n_in, n_out), times in distinct.items():
            x, module = torch.randn(rows, n_in, dtype=dtype), layer(n_in, n_out, dtype, path)
            module(x)
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                module(x)
                best = min(best, time.perf_counter() - start)
            flops += times * 2 * rows * n_in * n_out
            seconds += times * best
    return flops / seconds / 1e9


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor()
    return next(
        (line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), ""
    )


def build_facts() -> dict[str, str]:
    """The BLAS and oneDNN lines of ``torch.__config__.show()``."""
    import re

    text = torch.__config__.show()
    blas = re.search(r"BLAS_INFO=([^,\s]+)", text)
    onednn = re.search(r"(?:oneDNN|MKL-DNN) (v[\d.]+)", text)
    return {
        "torch": torch.__version__,
        "blas": blas.group(1) if blas else "",
        "onednn": onednn.group(1) if onednn else "",
    }


def measured_rates(paths: list[str], dtypes: list[str], body, head) -> dict[str, dict[str, dict[str, float]]]:
    """GFLOP/s per path and dtype, ``{"body": ..., "head": ...}`` (or ``{"error": ...}`` where
    the path cannot run the dtype on this CPU)."""
    rates: dict[str, dict[str, dict[str, float]]] = {}
    for path in paths:
        rates[path] = {}
        for name in dtypes:
            dtype = getattr(torch, name)
            try:
                rates[path][name] = {
                    "body": throughput(body, dtype, path),
                    "head": throughput([head], dtype, path),
                }
            except RuntimeError as exc:  # e.g. a dtype this path does not run on this CPU
                rates[path][name] = {"error": str(exc).splitlines()[0]}  # type: ignore[dict-item]
    return rates


def floor_seconds(
    count: dict[str, int], body_flops: float, head_flops: float, rate: dict[str, float]
) -> float:
    """Seconds of matmuls: tokens through the body x body FLOPs / body rate, plus tokens whose
    logits are needed x output-layer FLOPs / its rate."""
    return count["body"] * body_flops / 1e9 / rate["body"] + count["logits"] * head_flops / 1e9 / rate["head"]


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=DEFAULT_LM)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--paths", default=",".join(PATHS), help="matmul paths to measure (if available)")
    parser.add_argument(
        "--split", default=None, help="splits to count (default: SourceSum's four board splits)"
    )
    parser.add_argument(
        "--shortlist", type=int, default=0, help="the shortlist=K of perplexity_gain and contextcite"
    )
    parser.add_argument(
        "--window",
        type=int,
        default=None,
        help="the window to count with (0: no limit; default: the model's)",
    )
    parser.add_argument(
        "--documents",
        default=None,
        help="a JSON file of [sentences, summaries(, document text)] documents to count instead",
    )
    parser.add_argument(
        "--counts-only", action="store_true", help="print the token counts only (no throughput measured)"
    )
    args = parser.parse_args()
    paths = [p for p in args.paths.split(",") if p in available_paths()]
    if args.threads:
        torch.set_num_threads(args.threads)
    lm = load_lm(args.model, "cpu", "float32")
    body, head = linear_shapes(lm.model)
    body_flops = sum(2 * i * o for i, o in body)
    head_flops = 2 * head[0] * head[1]
    if args.documents:
        names = []
        with open(args.documents, encoding="utf-8") as f:
            docs = [(tuple(doc[0]), list(doc[1]), *doc[2:3]) for doc in json.load(f)]
    else:
        names = args.split.split(",") if args.split else dataset("sourcesum").board_splits()
        docs = documents([load_split(s) for s in names])
    window = lm.model.config.max_position_embeddings if args.window is None else args.window or None
    counts = token_counts(lm.tokenizer, docs, args.shortlist, window)
    if args.counts_only:
        summaries = [len(doc[1]) for doc in docs]
        report = {"model": args.model, "splits": list(names), "shortlist": args.shortlist, "window": window}
        print(json.dumps({**report, "summaries": summaries, "rankers": counts}, indent=2))
        return
    rates = measured_rates(paths, args.dtypes.split(","), body, head)
    report: dict[str, object] = {
        "model": args.model,
        "splits": list(names),
        "shortlist": args.shortlist,
        "window": window,
        "cpu": cpu_model(),
        "cpu_vendor": cpu_vendor(),
        "build": build_facts(),
        "auto_path": {"float32": favoured_path("cpu", "float32")},
        "threads": torch.get_num_threads(),
        "gflop_per_token": {"body": body_flops / 1e9, "logits": head_flops / 1e9},
        "gflops_per_s": rates,
        "favoured": {},
        "rankers": {},
    }
    for name in args.dtypes.split(","):
        measured = {p: r[name]["body"] for p, r in rates.items() if "body" in r[name]}
        if measured:
            report["favoured"][name] = max(measured, key=measured.__getitem__)  # type: ignore[index]
    totals: dict[str, float] = defaultdict(float)
    for ranker, count in counts.items():
        entry: dict[str, object] = dict(count)
        for path, by_dtype in rates.items():
            for name, rate in by_dtype.items():
                if "body" not in rate:
                    continue
                # attribution needs gradients: it runs on the default path whatever the others use
                default = rates.get("default", {}).get(name, {})
                own = default if ranker == "attribution" and "body" in default else rate
                seconds = floor_seconds(count, body_flops, head_flops, own)
                if ranker != "attribution" or own is rate:
                    entry[f"floor_min_{path}_{name}"] = round(seconds / 60, 1)
                if ranker in RANKERS:
                    totals[f"floor_min_total_{path}_{name}"] += seconds / 60
        report["rankers"][ranker] = entry  # type: ignore[index]
    report.update({key: round(minutes, 1) for key, minutes in sorted(totals.items())})
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
