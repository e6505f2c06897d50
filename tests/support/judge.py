"""The LLM judge's test inputs: a hand-made pair's text, a pointwise template, and a tiny
judge model (a randomly initialised Llama whose digits are likely) registered as ``tiny-judge``."""

from __future__ import annotations

DOC = [
    "The council voted to build a bridge over the river.",
    "It rained all week.",
    "The bridge will cost forty million dollars.",
]
SUMMARY = "A new bridge costing forty million dollars was approved."
TEMPLATE = (
    "Rate from {lo} to {hi} how much the sentence contributes to the summary.\n\n"
    "Summary: {summary}\nSentence: {sentence}\nRating: "
)
"""A pointwise template of the paper's shape (the summary before the sentence), without its text."""


def load_tiny_judge():
    """(model, tokenizer) of a tiny Llama with a chat template, registered as ``tiny-judge``; the
    same weights on every call."""
    import torch
    from sourcesum.rankers.llm.backends.local import candidate_tokens
    from sourcesum.rankers.lm.loading import register_loaded

    from support.models import tiny_llama, tiny_tokenizer

    tokenizer = tiny_tokenizer()
    tokenizer.chat_template = (
        "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} {% endfor %}[assistant]"
    )
    model = tiny_llama(tokenizer)
    with torch.no_grad():  # make digit tokens likely, so the rating tree is deep and varied
        digits = candidate_tokens(tokenizer, "0123456789", False)[0]
        model.lm_head.weight[digits] *= 40
    register_loaded("tiny-judge", model, tokenizer)
    return model, tokenizer
