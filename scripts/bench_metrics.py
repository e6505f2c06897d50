"""Speed of the vectorized metrics against a per-pair scikit-learn loop, same numbers.

Evaluates nDCG and AP for all 1,211 pairs of the four main splits, with tie-heavy scores
(rounded to one decimal), both ways; prints the best-of-N times and their ratio.

    python scripts/bench_metrics.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.metrics import average_precision_score, ndcg_score
from sourcesum.data import load_split, main_splits
from sourcesum.evaluation import evaluate


def sklearn_loop(splits, scores):
    out = []
    for split in splits:
        for pair in split:
            s = np.asarray(scores[split.name][pair.id])
            out.append((ndcg_score([pair.graded], [s]), average_precision_score(pair.binary(), s)))
    return np.array(out)


def vectorized(splits, scores):
    parts = [evaluate(split, scores[split.name], "bench").per_pair.to_numpy() for split in splits]
    return np.concatenate(parts)


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    splits = [load_split(name) for name in main_splits()]
    rng = np.random.default_rng(0)
    scores = {s.name: {p.id: np.round(rng.random(p.n_sentences), 1).tolist() for p in s} for s in splits}
    n_pairs = sum(len(s) for s in splits)
    slow, reference = best_time(lambda: sklearn_loop(splits, scores), max(2, args.repeat // 10))
    fast, ours = best_time(lambda: vectorized(splits, scores), args.repeat)
    diff = np.abs(reference - ours).max()
    print(f"pairs: {n_pairs}")
    print(f"scikit-learn per-pair loop: {slow * 1e3:9.2f} ms")
    print(f"vectorized (benchmark):     {fast * 1e3:9.2f} ms")
    print(f"speed-up: {slow / fast:.0f}x   max |difference|: {diff:.2e}")


if __name__ == "__main__":
    main()
