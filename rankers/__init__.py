"""Rankers: the base class, the registry, and the built-in rankers (imported to register them).

Heavy dependencies (torch, sentence-transformers, transformers) are imported lazily inside the
rankers that need them, so importing this package stays fast.
"""

from sourcesum.rankers.base import RANKERS, Ranker, create_ranker, register
from sourcesum.rankers import baselines  # noqa: F401  (registers lead, random, oracle)

__all__ = ["RANKERS", "Ranker", "create_ranker", "register"]
from sourcesum.rankers import embedding, graph, lexical  # noqa: E402,F401  (register the built-in rankers)
from sourcesum.rankers import lm  # noqa: E402,F401  (perplexity_gain, pmi, attention)
