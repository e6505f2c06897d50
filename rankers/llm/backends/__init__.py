"""Where the LLM judge's model runs: ``local`` (in-process transformers) or ``openai_compat``
(any OpenAI-compatible server)."""
