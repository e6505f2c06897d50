"""Time the ``attribution`` ranker against a straightforward per-pair implementation: on the first
``--docs`` documents of a split (their pairs, plus the other split of the same corpus's pairs on
those documents), prints the pairs/s of both, the largest score difference and the lowest
per-pair Spearman correlation between them; with ``--dtype bfloat16`` (or float16) also the
ranker's per-pair Spearman against float32 (reduced precision is acceptable only where it stays
>= 0.99).

The reference reads one pair at a time: the same token ids, an embedding leaf tensor fed through
``inputs_embeds`` (weights requiring gradients, as in a plain training-style script), full logits,
``loss.backward()``, then the sum over each sentence's tokens of the L2 norm of the embedding
gradient. The ranker batches the pairs of a document (padding + attention masks), computes
gradients for the embeddings only, and keeps logits for the summary positions only.

    python scripts/bench_attribution.py --split xsum_pegasus --docs 3
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch
from scipy.stats import spearmanr
from sourcesum.data import Pair, dataset_of, load_split, split_spec
from sourcesum.rankers import create_ranker


def companion_pairs(split_name: str, pairs: list[Pair]) -> list[Pair]:
    """Pairs of the other board splits of the same corpus as ``split_name`` that share a document
    with ``pairs`` (SourceSum: the two XSum splits share their 119 documents, the two CNN/DM
    splits their 191), which the runner scores in the same document groups."""
    keys = {p.document_key for p in pairs}
    corpus = split_spec(split_name).corpus
    out: list[Pair] = []
    for name in dataset_of(split_name).board_splits():
        if name != split_name and split_spec(name).corpus == corpus:
            out.extend(p for p in load_split(name) if p.document_key in keys)
    return out


def reference_scores(ranker, pair) -> list[float]:
    """Saliency (sum of token L2 norms per sentence) for one pair, the plain way (causal LMs)."""
    lm = ranker.lm()
    if lm.seq2seq:
        raise SystemExit("the reference implementation covers causal LMs; the tests cover seq2seq")
    model = lm.model
    context = ranker.context(lm, pair.sentences)
    summary = list(ranker.summary_tokens(lm, pair.summary))
    model.requires_grad_(True)
    try:
        ids = torch.tensor([context.ids() + summary], device=model.device)
        embeddings = model.get_input_embeddings()(ids).detach().requires_grad_()
        logits = model(inputs_embeds=embeddings).logits[0, len(context.ids()) - 1 : -1]
        targets = ids[0, len(context.ids()) :]
        loss = torch.nn.functional.cross_entropy(logits.float(), targets, reduction="sum")
        loss.backward()
    finally:
        model.requires_grad_(False)
        model.zero_grad(set_to_none=True)
    norms = embeddings.grad[0].norm(dim=-1)
    return [
        float(norms[s : s + len(seg)].sum()) for s, seg in zip(context.starts, context.segments, strict=True)
    ]


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="xsum_pegasus")
    parser.add_argument(
        "--docs", type=int, default=3, help="documents (with the other split's pairs on them)"
    )
    parser.add_argument("--model", default=None)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--dtype", default=None, help="also score in this dtype and compare with float32")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # show each timing as it lands

    split = load_split(args.split)
    keys = list(dict.fromkeys(p.document_key for p in split))[: args.docs]
    pairs = [p for p in split if p.document_key in keys]
    pairs += companion_pairs(args.split, pairs)
    model = {"model": args.model} if args.model else {}
    ranker = create_ranker("attribution", device="cpu", batch_size=args.batch_size, **model)
    ranker.lm()  # load outside the timings
    print(
        f"{len(pairs)} pairs on {len(keys)} documents of {args.split} (with the other split's pairs), "
        f"{torch.get_num_threads()} threads"
    )

    start = time.perf_counter()
    reference = [reference_scores(ranker, p) for p in pairs]
    naive = time.perf_counter() - start
    print(f"reference (per pair, plain backward): {naive:.1f} s, {len(pairs) / naive:.3f} pairs/s")

    start = time.perf_counter()
    ranker.fit(pairs)
    scores = ranker.score_batch(pairs)
    fast = time.perf_counter() - start
    print(
        f"ranker (batch_size={args.batch_size}): {fast:.1f} s, {len(pairs) / fast:.3f} pairs/s, "
        f"{naive / fast:.2f}x"
    )
    diff = max(
        float(np.max(np.abs(np.subtract(a, b)) / np.max(np.abs(b))))
        for a, b in zip(scores, reference, strict=True)
    )
    rho = min(spearmanr(a, b)[0] for a, b in zip(scores, reference, strict=True))
    print(
        f"agreement: max |ranker - reference| / max|reference| per pair = {diff:.2e}, "
        f"min per-pair Spearman = {rho:.6f}"
    )

    if args.dtype:
        reduced = create_ranker(
            "attribution", device="cpu", batch_size=args.batch_size, dtype=args.dtype, **model
        )
        reduced.lm()
        start = time.perf_counter()
        reduced.fit(pairs)
        low = reduced.score_batch(pairs)
        took = time.perf_counter() - start
        rhos = [spearmanr(a, b)[0] for a, b in zip(low, scores, strict=True)]
        print(
            f"{args.dtype}: {took:.1f} s, {len(pairs) / took:.3f} pairs/s ({fast / took:.2f}x float32); "
            f"per-pair Spearman vs float32: min {min(rhos):.4f}, mean {np.mean(rhos):.4f}, "
            f"{sum(r >= 0.99 for r in rhos)}/{len(rhos)} >= 0.99"
        )


if __name__ == "__main__":
    main()
