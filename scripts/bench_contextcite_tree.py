"""``contextcite``'s ablated contexts run as a prefix tree against each context recomputed from
its first deleted sentence (the engine's leave-one-out path), on the same pairs, masks and
inputs. Prints JSON.

For the whole of ``--split`` it counts the tokens each plan runs through the model body for the
ablated contexts, as the ranker runs them (once per document and design; no model pass:
:func:`~sourcesum.rankers.lm.prefix_tree.prefix_tree` against
:func:`~sourcesum.rankers.lm.inputs.recomputed` per distinct context; pairs beyond the window
under ``overflow=ties`` left out). For ``--pairs`` of them (ids, or the first N) it then times
both plans in this process (CPU seconds, after the document's own pass, which both share) and
reports the largest difference between their mean NLLs and between the scores fitted on them.

    OMP_NUM_THREADS=1 python scripts/bench_contextcite_tree.py --split wice_test --shortlist 4 \\
        --pairs 6 [--overflow ties]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np


def token_counts(ranker: Any, split: Any, window: int | None) -> dict[str, int]:
    """Body tokens of the ablated contexts under each plan over ``split``, as the ranker runs
    them (:func:`~sourcesum.rankers.lm.floor.contextcite_plans` over the runner's documents:
    each group of a document's summaries that share a design once, those whose reading exceeds
    ``window`` left out); and the number of summaries counted."""
    from sourcesum.rankers.lm.floor import contextcite_plans, documents
    from sourcesum.rankers.lm.inputs import recomputed
    from sourcesum.rankers.lm.prefix_tree import prefix_tree

    tree = flat = counted = 0
    for plan in contextcite_plans(ranker, ranker.lm().tokenizer, documents([split]), window):
        for keeps, summary_tokens in plan.groups:
            counted += len(summary_tokens)
            tree += sum(node.new_tokens for node in prefix_tree(plan.context, keeps))
            flat += sum(recomputed(len(ids), reuse) for ids, _, reuse in map(plan.context.kept, keeps))
    return {"summaries": counted, "tree_tokens": tree, "flat_tokens": flat}


def time_pair(ranker: Any, pair: Any) -> dict[str, Any]:
    """Both plans on one pair: CPU seconds, and the largest NLL and score differences."""
    from sourcesum.rankers.lm.engine import causal_kept_nll, causal_variants_nll, run_context
    from sourcesum.rankers.lm.inputs import causal_context, causal_summary

    lm = ranker.lm()
    design = ranker.designs([pair])[0]
    keeps, rows = ranker.distinct_keeps(pair.n_sentences, design)
    context = causal_context(lm.tokenizer, pair.sentences, ranker.template)
    summary = causal_summary(lm.tokenizer, pair.summary)
    full = run_context(lm.model, context.ids())
    started = time.process_time()
    tree = causal_kept_nll(lm.model, context, keeps, [summary], ranker.batch_size, full)
    tree_s = time.process_time() - started
    started = time.process_time()
    variants = [context.kept(keep) for keep in keeps]
    flat = causal_variants_nll(lm.model, context, variants, [summary], ranker.batch_size, full)
    flat_s = time.process_time() - started
    scores = [
        np.asarray(ranker.pair_scores(pair, design, nll[0, rows], len(summary))) for nll in (tree, flat)
    ]
    return {
        "pair": pair.id,
        "context_tokens": len(context.ids()),
        "contexts": len(keeps),
        "tree_cpu_s": round(tree_s, 2),
        "flat_cpu_s": round(flat_s, 2),
        "speedup": round(flat_s / tree_s, 3),
        "max_nll_diff": float(np.abs(tree - flat).max()),
        "max_score_diff": float(np.abs(scores[0] - scores[1]).max()),
    }


def main() -> int:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="wice_test")
    parser.add_argument("--pairs", default="4", help="comma-separated pair ids, or a count (the first N)")
    parser.add_argument(
        "--shortlist", type=int, default=0, help="contextcite's shortlist (0: every sentence)"
    )
    parser.add_argument("--overflow", default="error", choices=("error", "ties"))
    args = parser.parse_args()

    import torch
    from bench_lm_floor import cpu_model  # this folder's: lscpu's model name
    from sourcesum.data import load_split
    from sourcesum.rankers import create_ranker

    ranker = create_ranker(
        "contextcite", dtype="float32", device="cpu", shortlist=args.shortlist, overflow=args.overflow
    )
    split = load_split(args.split)
    if args.pairs.isdigit():
        chosen = list(split.pairs[: int(args.pairs)])
    else:
        wanted = args.pairs.split(",")
        chosen = [p for p in split.pairs if p.id in wanted]
        missing = sorted(set(wanted) - {p.id for p in chosen})
        if missing:
            parser.error(f"--pairs: not in {split.name}: {', '.join(missing)}")
    config = ranker.lm().model.config
    window = getattr(config, "max_position_embeddings", None) if args.overflow == "ties" else None
    counts = token_counts(ranker, split, window)
    timed = [time_pair(ranker, pair) for pair in chosen]
    tree_s, flat_s = sum(t["tree_cpu_s"] for t in timed), sum(t["flat_cpu_s"] for t in timed)
    report = {
        "split": split.name,
        "shortlist": args.shortlist,
        "cpu": cpu_model(),
        "torch_threads": torch.get_num_threads(),
        "split_counts": {**counts, "ratio": round(counts["flat_tokens"] / max(1, counts["tree_tokens"]), 3)},
        "timed": {
            "pairs": len(timed),
            "tree_cpu_s": round(tree_s, 1),
            "flat_cpu_s": round(flat_s, 1),
            "speedup": round(flat_s / tree_s, 3) if tree_s else None,
            "max_score_diff": max((t["max_score_diff"] for t in timed), default=0.0),
        },
        "per_pair": timed,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
