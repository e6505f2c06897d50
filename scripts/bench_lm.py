"""Speed of the perplexity-gain ranker, the paper's naive loop vs the shared-work engine: on the
first ``--docs`` documents of a split (all their pairs), prints the documents, pairs, model,
device and threads, the seconds and pairs/s of both (and the harness's document tokens/s), the
speed-up, and the largest score difference between them (expected below 1e-4).

It times
  1. naive: for every pair and every variant (full document, then each sentence deleted), one
     unbatched, uncached forward pass over context + summary;
  2. this harness: ``perplexity_gain`` (prefix KV-cache reuse, summaries of a document batched).

    python scripts/bench_lm.py [--split cnn_pegasus] [--docs 6] [--model SmolLM2-135M-Instruct]
"""

from __future__ import annotations

import argparse
import time

import torch
from sourcesum.data import load_split
from sourcesum.rankers import create_ranker
from sourcesum.rankers.lm.engine import naive_nll
from sourcesum.rankers.lm.inputs import (
    DEFAULT_TEMPLATE,
    causal_context,
    causal_summary,
    seq2seq_context,
    seq2seq_summary,
)


def naive_scores(lm, pairs):
    out = {}
    for pair in pairs:
        if lm.seq2seq:
            context, summary = (
                seq2seq_context(lm.tokenizer, pair.sentences),
                seq2seq_summary(lm.tokenizer, pair.summary),
            )
        else:
            context = causal_context(lm.tokenizer, pair.sentences, DEFAULT_TEMPLATE)
            summary = causal_summary(lm.tokenizer, pair.summary)
        full = naive_nll(lm.model, lm.seq2seq, context.ids(), context.mask(), summary)
        row = []
        for i in range(pair.n_sentences):
            ids = context.ids(drop=i)
            row.append(naive_nll(lm.model, lm.seq2seq, ids, [1] * len(ids), summary) - full)
        out[pair.id] = row
    return out


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="cnn_pegasus")
    parser.add_argument("--docs", type=int, default=6)
    parser.add_argument("--model", default="SmolLM2-135M-Instruct")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    split = load_split(args.split)
    keys = list(dict.fromkeys(p.document_key for p in split))[: args.docs]
    pairs = [p for p in split if p.document_key in keys]
    ranker = create_ranker("perplexity_gain", model=args.model, device=args.device)
    lm = ranker.lm()
    n_tokens = sum(len(causal_context(lm.tokenizer, p.sentences, DEFAULT_TEMPLATE).ids()) for p in pairs)

    with torch.inference_mode():
        start = time.perf_counter()
        reference = naive_scores(lm, pairs)
        t_naive = time.perf_counter() - start
    start = time.perf_counter()
    ours = dict(zip((p.id for p in pairs), ranker.score_batch(pairs), strict=False))
    t_ours = time.perf_counter() - start

    diff = max(abs(a - b) for pid in reference for a, b in zip(reference[pid], ours[pid], strict=False))
    print(
        f"{args.split}: {len(keys)} documents, {len(pairs)} pairs, model {args.model} on {lm.device}, "
        f"{torch.get_num_threads()} threads"
    )
    print(f"naive loop : {t_naive:8.1f} s  ({len(pairs) / t_naive:.3f} pairs/s)")
    print(
        f"harness    : {t_ours:8.1f} s  ({len(pairs) / t_ours:.3f} pairs/s, "
        f"{n_tokens / t_ours:.0f} document tokens/s)   {t_naive / t_ours:.1f}x faster"
    )
    print(f"max |score difference| = {diff:.2e}")


if __name__ == "__main__":
    main()
