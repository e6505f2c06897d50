"""Perplexity gain: how much the summary's loss rises when one sentence leaves the document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sourcesum.data import Pair
from sourcesum.params import Param
from sourcesum.rankers.base import register
from sourcesum.rankers.lm.base import LMRanker, ServerPlan
from sourcesum.rankers.lm.inputs import (
    causal_context,
    causal_summary,
    seq2seq_context,
    seq2seq_summary,
)

ABLATIONS = ("delete", "mask")
GAINS = ("loss", "perplexity")


@register
class PerplexityGainRanker(LMRanker):
    """Leave-one-sentence-out: score_i = loss(summary | doc without i) - loss(summary | doc).

    Loss is the mean token NLL of the summary. ``gain="perplexity"`` uses
    ``exp(loss_-i) - exp(loss)`` (the paper's difference of perplexities); ``ablation="mask"``
    hides sentence i from attention instead of deleting it (the paper's choice). Seq2seq: the
    document is the encoder input, the summary the decoder target. Causal: ``template`` holds
    the document, then the summary; the loss covers summary tokens only. ``backend=openai``:
    the same losses from a server (:mod:`sourcesum.rankers.lm.server`), causal models and
    ``ablation=delete`` only.
    """

    name = "perplexity_gain"
    reproduction_tolerance = 2e-5
    """Leave-one-out variants are batched and float32 sums differ in their last bits with the row
    layout and the CPU's kernels: the committed float32 scores (computed on AMD EPYC) were
    reproduced within 5.7e-6 there and within 5.3e-6 on an Intel Xeon; a test checks 2e-5."""
    version = "1"
    server_refusal = ""

    param_specs = {
        **LMRanker.param_specs,
        "ablation": Param(
            str, "delete the sentence, or mask it from attention (the paper's)", choices=ABLATIONS
        ),
        "gain": Param(str, "loss difference, or perplexity difference (the paper's)", choices=GAINS),
    }

    def __init__(
        self,
        ablation: str = "delete",
        gain: str = "loss",
        **options: Any,
    ):
        if ablation not in ABLATIONS or gain not in GAINS:
            raise ValueError(f"ablation must be in {ABLATIONS} and gain in {GAINS}")
        self.ablation, self.gain = ablation, gain
        super().__init__(**options)

    def losses(self, pairs: Sequence[Pair]) -> np.ndarray:
        """``(n_pairs, n_sentences + 1)`` summary losses; column 0 = full document."""
        from sourcesum.rankers.lm.engine import causal_ablation_nll, seq2seq_ablation_nll  # torch

        lm = self.lm()
        sentences = pairs[0].sentences
        if lm.seq2seq:
            context = seq2seq_context(lm.tokenizer, sentences)
            summaries = [seq2seq_summary(lm.tokenizer, p.summary) for p in pairs]
            self.check_fits(context, pairs, [0] * len(pairs))
            return seq2seq_ablation_nll(lm.model, context, summaries, self.ablation, self.batch_size)
        context = causal_context(lm.tokenizer, sentences, self.template)
        summaries = [causal_summary(lm.tokenizer, p.summary) for p in pairs]
        self.check_fits(context, pairs, [len(s) for s in summaries])
        return causal_ablation_nll(lm.model, context, summaries, self.ablation, self.batch_size)

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        return self.gains(self.losses(pairs))

    def gains(self, losses: np.ndarray) -> list[Sequence[float]]:
        """Per pair, each sentence's gain from the ``(n_pairs, n_sentences + 1)`` losses."""
        if self.gain == "perplexity":
            losses = np.exp(losses)
        return [(row[1:] - row[0]).tolist() for row in losses]

    @classmethod
    def server_problem(cls, params: Mapping[str, Any]) -> str:
        if params.get("ablation") == "mask":
            return "ablation=mask hides the sentence from attention, which a server's completions cannot do; use ablation=delete"
        return ""

    def server_plan(self, pairs: Sequence[Pair]) -> ServerPlan:
        """Each summary after each variant of the document (whole, then without sentence
        ``i``): the ids and texts :func:`~sourcesum.rankers.lm.server.causal_variants` makes."""
        from sourcesum.rankers.lm.server import Continuation, causal_variants, spaced

        tokenizer = self.server().tokenizer
        variants = causal_variants(tokenizer, pairs[0].sentences, self.template)
        summaries = [spaced(tokenizer, p.summary) for p in pairs]
        items = [
            Continuation(
                ids,
                summary,
                text,
                summary_text,
                f"pair {pair.id}: the summary after the document" + (f" without sentence {v}" if v else ""),
            )
            for v, (ids, text) in enumerate(variants)
            for pair, (summary, summary_text) in zip(pairs, summaries, strict=True)
        ]

        def finish(nll: Sequence[float]) -> list[Sequence[float]]:
            return self.gains(np.asarray(nll, dtype=float).reshape(len(variants), len(pairs)).T)

        return items, finish
