"""Graph centrality: LexRank (Erkan & Radev, 2004), query-independent, as in the paper."""

from __future__ import annotations

from collections.abc import Sequence

from sourcesum.data import Pair
from sourcesum.params import Param
from sourcesum.rankers.base import Ranker, register


@register
class LexRankRanker(Ranker):
    """Continuous LexRank centrality of each sentence within its document (ignores the summary).

    The ``lexrank`` package, configured as the paper's code: English stop words, IDF over the
    split's distinct documents (the paper grouped CNN/DM pairs by document before building
    LexRank), ``idf(w) = ln(N / df(w))``, IDF-modified cosine
    similarities, row-normalised into a Markov matrix (``threshold=None``: continuous, no
    damping) and the unnormalised stationary distribution by plain power iteration per
    connected component. ``threshold`` (e.g. 0.1) switches to discrete LexRank.

    Scores are rounded to 10 decimals: the package sums over Python sets, whose order changes
    with the process's hash seed, so sentences that tie exactly (e.g. isolated ones) otherwise
    differ in the last bits and the tie is broken at random from run to run (XSum-PEGASUS MAP
    moved between .5302 and .5304). Rounded, they tie exactly, the tie rule decides, and the
    numbers are reproducible.
    """

    name = "lexrank"
    version = "3"
    batch_pairs = 256

    libraries = ("lexrank",)
    param_specs = {
        "threshold": Param(
            float, "cosine threshold of discrete LexRank; none = continuous", min=0.0, max=1.0, optional=True
        ),
    }

    def __init__(self, threshold: float | None = None):
        self.threshold = threshold
        self._model = None

    def fit(self, pairs: Sequence[Pair]) -> None:
        from lexrank import LexRank
        from lexrank.mappings.stopwords import STOPWORDS

        documents = {p.document_key: list(p.sentences) for p in pairs}
        self._model = LexRank(list(documents.values()), stopwords=STOPWORDS["en"])

    def score(self, pair: Pair) -> Sequence[float]:
        if self._model is None:
            raise RuntimeError("LexRank needs fit(pairs) with the split before scoring")
        scores = self._model.rank_sentences(
            list(pair.sentences), threshold=self.threshold, fast_power_method=False
        )
        return [round(float(x), 10) for x in scores]
