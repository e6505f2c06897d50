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
from sourcesum.rankers.lm.shortlist import bm25_shortlist, tie_below

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

    ``shortlist=K`` (K > 0) ablates only the K sentences with the highest BM25 (Okapi, the
    ``bm25`` ranker's defaults) against the pair's summary, ties broken by position: the cost
    falls from ``n + 1`` document variants per pair to ``K + 1``. Every other sentence scores
    the largest float below the pair's lowest shortlisted gain, so it ranks below every
    shortlisted one and ties with the rest. ``shortlist=0`` (the default, left out of keys)
    ablates every sentence.
    """

    name = "perplexity_gain"
    reproduction_tolerance = 2e-5
    """Leave-one-out variants are batched and float32 sums differ in their last bits with the row
    layout and the CPU's kernels: the committed float32 scores (computed on AMD EPYC) were
    reproduced within 5.7e-6 there; on an Intel Xeon (model 207, MKL) all 1,211 pairs of the
    four splits were within 9.8e-6, every pair ranked the same."""
    version = "1"
    server_refusal = ""

    param_specs = {
        **LMRanker.param_specs,
        "ablation": Param(
            str, "delete the sentence, or mask it from attention (the paper's)", choices=ABLATIONS
        ),
        "gain": Param(str, "loss difference, or perplexity difference (the paper's)", choices=GAINS),
        "shortlist": Param(
            int, "ablate only the K sentences BM25 ranks highest for the summary (0: all)", min=0
        ),
    }
    unkeyed_defaults = {**LMRanker.unkeyed_defaults, "shortlist": 0}

    def __init__(
        self,
        ablation: str = "delete",
        gain: str = "loss",
        shortlist: int = 0,
        **options: Any,
    ):
        if ablation not in ABLATIONS or gain not in GAINS:
            raise ValueError(f"ablation must be in {ABLATIONS} and gain in {GAINS}")
        self.ablation, self.gain, self.shortlist = ablation, gain, int(shortlist)
        super().__init__(**options)

    def shortlisted(self, pair: Pair) -> list[int]:
        """The sentences ``shortlist`` keeps for ``pair`` (all when it is 0 or covers them)."""
        return bm25_shortlist(pair, self.shortlist)

    def shortlists(self, pairs: Sequence[Pair]) -> tuple[list[list[int]], list[int] | None]:
        """Each pair's shortlist, and their union (None: every sentence)."""
        lists = [self.shortlisted(p) for p in pairs]
        union = sorted({i for keep in lists for i in keep})
        return lists, (None if len(union) == pairs[0].n_sentences else union)

    def losses(self, pairs: Sequence[Pair], only: Sequence[int] | None = None) -> np.ndarray:
        """``(n_pairs, n_sentences + 1)`` summary losses; column 0 = full document. With
        ``only``, the variants without the other sentences are not run (their columns are NaN)."""
        from sourcesum.rankers.lm.engine import causal_ablation_nll, seq2seq_ablation_nll  # torch

        lm = self.lm()
        sentences = pairs[0].sentences
        if lm.seq2seq:
            context = seq2seq_context(lm.tokenizer, sentences)
            summaries = [seq2seq_summary(lm.tokenizer, p.summary) for p in pairs]
            self.check_fits(context, pairs, [0] * len(pairs))
            return seq2seq_ablation_nll(lm.model, context, summaries, self.ablation, self.batch_size, only)
        context = causal_context(lm.tokenizer, sentences, self.template)
        summaries = [causal_summary(lm.tokenizer, p.summary) for p in pairs]
        self.check_fits(context, pairs, [len(s) for s in summaries])
        return causal_ablation_nll(lm.model, context, summaries, self.ablation, self.batch_size, only)

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        keep, only = self.shortlists(pairs)
        return self.gains(self.losses(pairs, only), keep)

    def gains(self, losses: np.ndarray, keep: Sequence[Sequence[int]] | None = None) -> list[Sequence[float]]:
        """Per pair, each sentence's gain from the ``(n_pairs, n_sentences + 1)`` losses; with
        ``keep`` (per pair, its shortlist), the other sentences just below its lowest gain."""
        if self.gain == "perplexity":
            losses = np.exp(losses)
        out: list[Sequence[float]] = []
        for r, row in enumerate(losses):
            gain = row[1:] - row[0]
            if keep is not None and len(keep[r]) < len(gain):
                listed = np.zeros(len(gain), dtype=bool)
                listed[list(keep[r])] = True
                gain = tie_below(gain, listed)
            out.append(gain.tolist())
        return out

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
        keep, only = self.shortlists(pairs)
        every = causal_variants(tokenizer, pairs[0].sentences, self.template)
        columns = [0] + ([v for v in range(1, len(every))] if only is None else [i + 1 for i in only])
        summaries = [spaced(tokenizer, p.summary) for p in pairs]
        items = [
            Continuation(
                every[v][0],
                summary,
                every[v][1],
                summary_text,
                f"pair {pair.id}: the summary after the document" + (f" without sentence {v}" if v else ""),
            )
            for v in columns
            for pair, (summary, summary_text) in zip(pairs, summaries, strict=True)
        ]

        def finish(nll: Sequence[float]) -> list[Sequence[float]]:
            losses = np.full((len(pairs), len(every)), np.nan)
            losses[:, columns] = np.asarray(nll, dtype=float).reshape(len(columns), len(pairs)).T
            return self.gains(losses, keep)

        return items, finish
