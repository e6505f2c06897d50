"""An example SourceSum Bench plugin: the ``overlap`` ranker.

Score of sentence ``i`` (0-based) of ``n``, with ``S`` the summary's distinct content words and
``W_i`` the sentence's (lower-cased, stop words out, Porter-stemmed, as ``bm25`` tokenizes)::

    overlap_i = |S ∩ W_i| / |S|              (measure="recall": share of the summary covered)
              = |S ∩ W_i| / |S ∪ W_i|        (measure="jaccard")
    score_i   = (1 - lead_weight) * overlap_i + lead_weight * (1 - i / n)

``lead_weight = 0`` is pure overlap; ``1`` is the ``lead`` ranker's order.
"""

from __future__ import annotations

from collections.abc import Sequence

from sourcesum.data import Pair
from sourcesum.params import Param
from sourcesum.rankers import Ranker, register
from sourcesum.rankers.text import tokenize

__all__ = ["OverlapRanker"]


@register
class OverlapRanker(Ranker):
    """Summary content words found in the sentence, mixed with a lead prior."""

    name = "overlap"
    version = "1"  # bump whenever the scoring changes: the cache key includes it
    param_specs = {
        "measure": Param(str, "recall = |S∩W|/|S|, jaccard = |S∩W|/|S∪W|", choices=("recall", "jaccard")),
        "lead_weight": Param(float, "weight of the position prior 1 - i/n", min=0.0, max=1.0),
    }
    libraries = ("nltk", "scikit-learn")  # tokenizer: Porter stemmer, English stop words

    def __init__(self, measure: str = "recall", lead_weight: float = 0.0):
        self.measure = measure
        self.lead_weight = lead_weight

    def score(self, pair: Pair) -> Sequence[float]:
        summary = set(tokenize(pair.summary))
        n = pair.n_sentences
        scores = []
        for i, sentence in enumerate(pair.sentences):
            words = set(tokenize(sentence))
            shared = len(summary & words)
            denominator = len(summary) if self.measure == "recall" else len(summary | words)
            overlap = shared / denominator if denominator else 0.0
            scores.append((1.0 - self.lead_weight) * overlap + self.lead_weight * (1.0 - i / n))
        return scores
