"""Perplexity gain: how much the summary's loss rises when one sentence leaves the document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sourcesum.data import Pair
from sourcesum.params import Param
from sourcesum.rankers.base import register
from sourcesum.rankers.lm.base import LMRanker
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
    the document, then the summary; the loss covers summary tokens only.
    """

    name = "perplexity_gain"
    reproduction_tolerance = 5e-6
    """Leave-one-out variants are batched and float32 sums differ in their last bits with the row
    layout: the committed float32 scores are reproduced within 5e-6 (a test)."""
    version = "1"

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
            self.check_fits(context, pairs, 0)
            return seq2seq_ablation_nll(lm.model, context, summaries, self.ablation, self.batch_size)
        context = causal_context(lm.tokenizer, sentences, self.template)
        summaries = [causal_summary(lm.tokenizer, p.summary) for p in pairs]
        self.check_fits(context, pairs, max(map(len, summaries)))
        return causal_ablation_nll(lm.model, context, summaries, self.ablation, self.batch_size)

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        losses = self.losses(pairs)
        if self.gain == "perplexity":
            losses = np.exp(losses)
        return [(row[1:] - row[0]).tolist() for row in losses]
