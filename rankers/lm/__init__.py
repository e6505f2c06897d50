"""Language-model rankers: perplexity gain, PMI, attention and gradient attribution, for causal and
seq2seq models.

Registered lazily (see :data:`sourcesum.rankers.BUILTIN_RANKERS`); import a submodule to use it.
"""
