"""Speed of the vectorized metrics against a per-pair scikit-learn loop, same numbers: evaluates
nDCG and AP for every pair of a dataset's board splits (default SourceSum's four, 1,211 pairs;
``--dataset wice`` or ``qmsum`` for those boards, with candidate lists up to 2,417), with
tie-heavy scores (random, rounded to one decimal, seed 0), both ways, and prints the number of
pairs and candidates, the best-of-N time of each, their ratio and the largest difference between
their per-pair values (pairs where a measure is undefined, no relevant sentence, are left out of
the difference: scikit-learn gives them a number, the harness NaN).

    python scripts/bench_metrics.py [--repeat 20] [--dataset sourcesum]

The scikit-learn loop (``ndcg_score`` on graded relevance, ``average_precision_score`` on binary
relevance, one pair at a time) is timed best of ``max(2, repeat // 10)``; the harness's
``evaluate_split`` best of ``repeat``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.metrics import average_precision_score, ndcg_score
from sourcesum.data import dataset, load_split
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG


def sklearn_loop(splits, scores):
    out = []
    for split in splits:
        for pair in split:
            s = np.asarray(scores[split.name][pair.id])
            graded, binary = split.graded(pair.id), split.binary(pair.id)
            ndcg = ndcg_score([graded], [s]) if len(s) > 1 else np.nan  # sklearn needs 2 documents
            ap = average_precision_score(binary, s) if np.any(binary) else np.nan  # undefined, warns
            out.append((ndcg, ap))
    return np.array(out)


def vectorized(splits, scores):
    parts = [
        evaluate_split(split, scores[split.name], "bench", (NDCG, AP)).per_pair.to_numpy() for split in splits
    ]
    return np.concatenate(parts)


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=20, help="timed runs of the vectorized metrics")
    parser.add_argument("--dataset", default="sourcesum", help="whose board splits (default sourcesum)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    splits = [load_split(name) for name in dataset(args.dataset).board_splits()]
    rng = np.random.default_rng(0)
    scores = {s.name: {p.id: np.round(rng.random(p.n_sentences), 1).tolist() for p in s} for s in splits}
    n_pairs = sum(len(s) for s in splits)
    slow, reference = best_time(lambda: sklearn_loop(splits, scores), max(2, args.repeat // 10))
    fast, ours = best_time(lambda: vectorized(splits, scores), args.repeat)
    defined = np.isfinite(ours)
    diff = np.abs(reference - ours)[defined].max()
    candidates = [p.n_sentences for s in splits for p in s]
    print(f"pairs: {n_pairs}   candidates: {sum(candidates):,} (largest list {max(candidates):,})")
    print(f"scikit-learn per-pair loop: {slow * 1e3:9.2f} ms")
    print(f"vectorized (benchmark):     {fast * 1e3:9.2f} ms")
    print(f"speed-up: {slow / fast:.0f}x   max |difference|: {diff:.2e}")


if __name__ == "__main__":
    main()
