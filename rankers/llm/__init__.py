"""Prompted-LLM rankers: ``llm_judge`` (pointwise expected rating or listwise ranking), run on a
local Hugging Face causal LM or on any OpenAI-compatible server. Registered lazily (see
:data:`sourcesum.rankers.BUILTIN_RANKERS`)."""
