"""BM25 shortlists of the ablation rankers (``perplexity_gain``, ``contextcite``): which sentences
they ablate, and where the others rank."""

from __future__ import annotations

import numpy as np
from sourcesum.data import Pair


def bm25_shortlist(pair: Pair, k: int) -> list[int]:
    """The ``k`` sentences of ``pair`` with the highest BM25 (Okapi, the ``bm25`` ranker's
    defaults) against its summary, ties broken by position, in document order; every sentence
    when ``k`` is 0 or covers them."""
    n = pair.n_sentences
    if k == 0 or k >= n:
        return list(range(n))
    from sourcesum.rankers.lexical import BM25Ranker

    bm25 = BM25Ranker().score(pair)
    return sorted(sorted(range(n), key=lambda i: (-bm25[i], i))[:k])


def tie_below(values: np.ndarray, listed: np.ndarray) -> np.ndarray:
    """``values`` where ``listed`` (booleans) is True; elsewhere the largest float below the
    lowest listed value, so the unlisted sentences rank below every listed one and tie."""
    return np.where(listed, values, np.nextafter(values[listed].min(), -np.inf))
