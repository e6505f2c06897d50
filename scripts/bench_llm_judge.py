"""llm_judge on a sample of pairs: throughput, NDCG / MAP, and ties beside the paper's
text-davinci-003 row on the same pairs. Prints one JSON line for the published text-davinci-003
scores on the sample (NDCG, MAP, share of pairs with ties, share of sentences tied), then one per
configuration with its pairs, sentences, seconds, pairs/s, the same quality figures and the
ranker's report (fallbacks, tokens).

    python scripts/bench_llm_judge.py --split xsum_pegasus --pairs 12 '{"chat": true}' '{"chat": false}'

Each positional argument is one configuration (JSON parameters of ``llm_judge``); the pairs are
evenly spaced over the split. The model is loaded before timing. The paper's published
text-davinci-003 scores come from :func:`sourcesum.store.published.load_published`.
"""

from __future__ import annotations

import argparse
import json
import time

from sourcesum.data import Split, load_split
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.ties import tie_shares
from sourcesum.rankers import create_ranker
from sourcesum.store.published import load_published


def quality(sample: Split, scores: dict[str, list[float]], system: str) -> dict[str, float]:
    """NDCG / MAP (the harness's evaluation) and tie shares on the sample."""
    summary = evaluate_split(sample, scores, system).summary()
    tied_pairs, tied_sentences = tie_shares(sample, scores)
    return {
        "ndcg": round(summary["ndcg"], 4),
        "map": round(summary["map"], 4),
        "pairs_with_ties": round(tied_pairs, 3),
        "sentences_tied": round(tied_sentences, 3),
    }


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "configs", nargs="*", default=["{}"], help="JSON parameters of llm_judge, one per run"
    )
    parser.add_argument("--split", default="xsum_pegasus")
    parser.add_argument("--pairs", type=int, default=12)
    args = parser.parse_args()
    split = load_split(args.split)
    pairs = split.pairs[:: max(1, len(split.pairs) // args.pairs)][: args.pairs]
    sample = split.subset([p.id for p in pairs])  # the sample's pairs with their judgments
    published = load_published(args.split, "text-davinci-003").entry.scores
    row = quality(sample, {p.id: published[p.id] for p in pairs}, "text-davinci-003")
    print(json.dumps({"published": "text-davinci-003 (prompt v2, greedy 0-100)", **row}))
    for text in args.configs:
        config = json.loads(text)
        ranker = create_ranker("llm_judge", **config)
        if config.get("backend", "local") == "local":
            ranker.backend_impl().lm()  # load outside the timing
        start = time.perf_counter()
        scores = ranker.score_batch(pairs)
        seconds = time.perf_counter() - start
        print(
            json.dumps(
                {
                    "config": config,
                    "pairs": len(pairs),
                    "sentences": sum(p.n_sentences for p in pairs),
                    "seconds": round(seconds, 1),
                    "pairs_per_s": round(len(pairs) / seconds, 4),
                    **quality(sample, {p.id: s for p, s in zip(pairs, scores, strict=True)}, "llm_judge"),
                    "report": ranker.report(),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
