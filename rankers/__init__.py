"""Rankers: the base class, the registry, and the built-in rankers (registered lazily).

Each built-in ranker is declared as ``"module:Class"`` and imported on first use, so importing
this package, listing names or reading a leaderboard loads no model library; heavy dependencies
(torch, transformers, sentence-transformers) are imported inside the rankers that need them.
"""

from sourcesum.rankers.base import RANKERS, Ranker, create_ranker, register

__all__ = ["RANKERS", "Ranker", "create_ranker", "register"]

BUILTIN_RANKERS = {
    "lead": "sourcesum.rankers.baselines:LeadRanker",
    "random": "sourcesum.rankers.baselines:RandomRanker",
    "oracle": "sourcesum.rankers.baselines:OracleRanker",
    "bm25": "sourcesum.rankers.lexical:BM25Ranker",
    "rouge1": "sourcesum.rankers.lexical:Rouge1Ranker",
    "rouge2": "sourcesum.rankers.lexical:Rouge2Ranker",
    "rougeL": "sourcesum.rankers.lexical:RougeLRanker",
    "tfidf": "sourcesum.rankers.lexical:TfidfRanker",
    "lexrank": "sourcesum.rankers.graph:LexRankRanker",
    "embedding": "sourcesum.rankers.embedding:EmbeddingRanker",
    "bertscore": "sourcesum.rankers.embedding:BERTScoreRanker",
    "perplexity_gain": "sourcesum.rankers.lm.perplexity:PerplexityGainRanker",
    "pmi": "sourcesum.rankers.lm.pmi:PMIRanker",
    "attention": "sourcesum.rankers.lm.attention:AttentionRanker",
    "fusion": "sourcesum.rankers.fusion:FusionRanker",
    "learned": "sourcesum.rankers.learned:LearnedRanker",
    "llm_judge": "sourcesum.rankers.llm.ranker:LLMJudgeRanker",
    "attribution": "sourcesum.rankers.lm.attribution:AttributionRanker",
    "overlap_prior": "sourcesum.rankers.prior:OverlapPriorRanker",
    "probe": "sourcesum.rankers.lm.probe:ProbeRanker",
    "contextcite": "sourcesum.rankers.lm.contextcite:ContextCiteRanker",
    "at2": "sourcesum.rankers.lm.at2:AT2Ranker",
}
"""Built-in rankers, ``name -> "module:Class"``; add a line here for each new built-in."""

RANKERS.register_lazy(BUILTIN_RANKERS)
