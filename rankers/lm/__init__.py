"""Language-model rankers: perplexity gain, PMI and attention, for causal and seq2seq models."""

from sourcesum.rankers.lm import attention, perplexity, pmi  # noqa: F401  (register the rankers)
