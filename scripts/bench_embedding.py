"""Speed of the embedding ranker, paper-style pairwise encoding vs batched unique-text encoding:
on one split and one model (default all-MiniLM-L6-v2, offline), prints the split's pair and
text counts, the seconds of the paper-style loop, of the harness and of the encoding floor,
their ratios, and the largest score difference between paper-style and harness (expected below
1e-5).

It times
  1. paper-style: for every (summary, sentence) pair, encode both texts in one call, then cosine;
  2. this harness: ``EmbeddingRanker`` over the split (each unique text encoded once, batched);
  3. the floor: one ``encode`` call over the split's unique texts, nothing else.

    python scripts/bench_embedding.py [--split cnn_pegasus] [--model all-MiniLM-L6-v2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sourcesum.data import load_split
from sourcesum.rankers.device import resolve_device, resolve_sentence_model
from sourcesum.rankers.embedding import EmbeddingRanker


def paper_style(model, split) -> dict[str, list[float]]:
    scores = {}
    for pair in split:
        row = []
        for sentence in pair.sentences:
            a, b = model.encode([pair.summary, sentence], convert_to_numpy=True)
            row.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
        scores[pair.id] = row
    return scores


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="cnn_pegasus")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    split = load_split(args.split)

    ranker = EmbeddingRanker(model=args.model, device=args.device)
    model = ranker.encoder()  # load once, outside every timing
    model.encode(["warm-up"])

    start = time.perf_counter()
    reference = paper_style(model, split)
    t_paper = time.perf_counter() - start

    start = time.perf_counter()
    ours = {}
    for i in range(0, len(split), ranker.batch_pairs):
        chunk = split.pairs[i : i + ranker.batch_pairs]
        ours.update(zip((p.id for p in chunk), ranker.score_batch(chunk), strict=False))
    t_ours = time.perf_counter() - start

    unique = list(dict.fromkeys(t for p in split for t in (p.summary, *p.sentences)))
    start = time.perf_counter()
    model.encode(unique, batch_size=ranker.batch_size, normalize_embeddings=True)
    t_floor = time.perf_counter() - start

    diff = max(abs(a - b) for pid in reference for a, b in zip(reference[pid], ours[pid], strict=False))
    n_pairs = sum(p.n_sentences for p in split)
    print(f"split {split.name}: {len(split)} pairs, {n_pairs} sentence pairs, {len(unique)} unique texts")
    print(f"model {resolve_sentence_model(args.model)} on {resolve_device(args.device)}")
    print(f"paper-style pairwise : {t_paper:8.2f} s")
    print(f"harness (batched)    : {t_ours:8.2f} s   {t_paper / t_ours:5.1f}x faster")
    print(f"encode unique once   : {t_floor:8.2f} s   harness / floor = {t_ours / t_floor:.2f}")
    print(f"max |score difference| = {diff:.2e}")


if __name__ == "__main__":
    main()
