"""The least time the LM rankers can take on this machine: their matmul work at the machine's
measured matmul throughput. Prints JSON: the model, the torch threads, the GFLOP per token of the
model body and of its output layer, the measured GFLOP/s per dtype, and per ranker
(``perplexity_gain``, ``pmi``, ``attention``) the tokens through the body and through the output
layer and the floor in minutes per dtype, plus the total floor per dtype.

For the default model (or ``--model``) it counts the tokens each ranker must run through the
model over SourceSum's four board splits (the engine's own inputs: the runner's cross-split
document groups, leave-one-out suffixes for ``perplexity_gain``, every sentence once per summary
plus once unconditioned for ``pmi``, the document once per document and each summary once for
``attention``), multiplies by the FLOPs per token of the model's Linear layers (``2 x in x out``
per layer, plus the output layer where logits are needed), and divides by the throughput of
``torch.nn.functional.linear`` measured here on the model's own layer shapes, per dtype. Norms,
attention scores, padding and Python overhead are left out, so real runs can only be slower.

    python scripts/bench_lm_floor.py [--threads 2] [--dtypes float32,bfloat16]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

import torch
from sourcesum.data import dataset, load_split
from sourcesum.rankers.lm.inputs import DEFAULT_TEMPLATE, causal_context, causal_summary
from sourcesum.rankers.lm.models import DEFAULT_LM, load_lm


def documents(splits):
    """``(sentences, distinct summaries)`` per document, across all splits (as the runner groups)."""
    groups: dict[tuple, dict[str, None]] = defaultdict(dict)
    for split in splits:
        for pair in split.pairs:
            groups[(pair.document_key, pair.sentences)][pair.summary] = None
    return [(key[1], list(summaries)) for key, summaries in groups.items()]


def token_counts(tokenizer, docs) -> dict[str, dict[str, int]]:
    """Tokens through the model body, and tokens whose logits are needed, per ranker."""
    counts = {name: {"body": 0, "logits": 0} for name in ("perplexity_gain", "pmi", "attention")}
    counts["pmi"]["body"] += 1  # the start token's own pass, once per run
    for sentences, summaries in docs:
        context = causal_context(tokenizer, sentences, DEFAULT_TEMPLATE)
        length = len(context.ids())
        summary_tokens = [len(causal_summary(tokenizer, s)) for s in summaries]
        # full context + the suffix after each deleted sentence; summaries after each variant
        suffixes = sum(
            length - start - len(seg) for start, seg in zip(context.starts, context.segments, strict=True)
        )
        variants = len(sentences) + 1
        counts["perplexity_gain"]["body"] += length + suffixes + variants * sum(summary_tokens)
        counts["perplexity_gain"]["logits"] += variants * sum(summary_tokens)
        sentence_tokens = sum(len(causal_summary(tokenizer, s)) for s in sentences)
        # each summary is read after the start token; the sentences once per summary + once alone
        pmi = sentence_tokens * (len(summaries) + 1) + sum(1 + n for n in summary_tokens)
        counts["pmi"]["body"] += pmi
        counts["pmi"]["logits"] += sentence_tokens * (len(summaries) + 1)
        counts["attention"]["body"] += length + sum(summary_tokens)
    return counts


def linear_shapes(model) -> tuple[list[tuple[int, int]], tuple[int, int]]:
    """``(in, out)`` of every body Linear layer, and of the output layer."""
    head = model.get_output_embeddings()
    body = [
        (m.in_features, m.out_features)
        for m in model.modules()
        if isinstance(m, torch.nn.Linear) and m is not head
    ]
    return body, (head.in_features, head.out_features)


def throughput(shapes: list[tuple[int, int]], dtype: torch.dtype, rows: int = 512, repeats: int = 5) -> float:
    """GFLOP/s of ``F.linear`` over one pass through ``shapes`` (each distinct shape timed once,
    weighted by how often it occurs), ``rows`` tokens at a time, best of ``repeats``."""
    flops = seconds = 0.0
    distinct: dict[tuple[int, int], int] = defaultdict(int)
    for shape in shapes:
        distinct[shape] += 1
    for (n_in, n_out), times in distinct.items():
        x, w = torch.randn(rows, n_in, dtype=dtype), torch.randn(n_out, n_in, dtype=dtype)
        torch.nn.functional.linear(x, w)
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            torch.nn.functional.linear(x, w)
            best = min(best, time.perf_counter() - start)
        flops += times * 2 * rows * n_in * n_out
        seconds += times * best
    return flops / seconds / 1e9


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=DEFAULT_LM)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--dtypes", default="float32,bfloat16")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    lm = load_lm(args.model, "cpu", "float32")
    body, head = linear_shapes(lm.model)
    body_flops = sum(2 * i * o for i, o in body)
    head_flops = 2 * head[0] * head[1]
    splits = [load_split(s) for s in dataset("sourcesum").board_splits()]
    counts = token_counts(lm.tokenizer, documents(splits))
    rates = {}
    for name in args.dtypes.split(","):
        dtype = getattr(torch, name)
        rates[name] = {"body": throughput(body, dtype), "head": throughput([head], dtype)}
    report = {
        "model": args.model,
        "threads": torch.get_num_threads(),
        "gflop_per_token": {"body": body_flops / 1e9, "logits": head_flops / 1e9},
        "gflops_per_s": rates,
        "rankers": {},
    }
    for ranker, count in counts.items():
        entry: dict[str, object] = dict(count)
        for name, rate in rates.items():
            seconds = (
                count["body"] * body_flops / 1e9 / rate["body"]
                + count["logits"] * head_flops / 1e9 / rate["head"]
            )
            entry[f"floor_min_{name}"] = round(seconds / 60, 1)
        report["rankers"][ranker] = entry
    for name in rates:
        report[f"floor_min_total_{name}"] = round(
            sum(r[f"floor_min_{name}"] for r in report["rankers"].values()), 1
        )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
