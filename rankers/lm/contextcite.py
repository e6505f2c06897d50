"""ContextCite: a sparse linear surrogate of the summary's probability under random ablations.

Cohen-Wang, Shah, Georgiev and Madry, *ContextCite: Attributing Model Generation to Context*
(NeurIPS 2024; the authors' package ``context-cite``). For a pair, ``m`` ablation masks
``z_r`` in {0, 1}^K are drawn over the K ablated sentences (each kept with probability
``keep``); the model reads the summary after the document with only the kept sentences (the
others deleted), giving the summary's log-probability ``log p_r`` (sum over its T tokens). The
target is its logit ``y_r = log p_r - log(1 - p_r)``, and the surrogate fits
``y_r / T ~ b + w . z_r``:

- ``surrogate=lasso`` (the package's ``LassoRegression``): the masks as float32 (so the fit runs
  in float32, as the package's does), standardised (scikit-learn's ``StandardScaler``),
  ``Lasso(alpha)`` with an intercept, the weights brought back to the masks' scale;
  ``alpha=0.01`` is the package's default;
- ``surrogate=linear``: ordinary least squares with an intercept (minimum-norm where there are
  fewer masks than sentences).

A sentence's score is ``T * w_i``, as the package reports it. With the full document and the
``n`` one-sentence deletions as the masks, the linear surrogate gives
``w_i = (y_full - y_without_i) / T``: leave-one-out (``perplexity_gain``) on the logit scale,
the same ranking.

Masks depend on the pair's document, the ablated sentences and ``seed`` only (a SHA-256 of the
three seeds the generator), so a pair's scores never depend on the pairs it is scored with, and
the summaries of a document with the same ablated sentences (all of them when ``shortlist=0``)
read the same ablated contexts: each distinct context is run once and those summaries are read
after it together. Causal models run a design's distinct contexts as a prefix tree
(:func:`~sourcesum.rankers.lm.prefix_tree.prefix_tree`): the tokens that contexts deciding the same
sentences alike share run once, on the cache of the document or of their shared prefix.
Seq2seq models run one encoder pass per distinct context.

``shortlist=K`` (K > 0) ablates only the pair's K BM25-best sentences (as ``perplexity_gain``'s
shortlist chooses them; the rest always kept) and scores every other sentence just below the
pair's lowest shortlisted weight, one tie group. ``backend=openai``: each distinct ablated
context and summary is one prompt log-probability request, causal models only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
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

SURROGATES = ("lasso", "linear")
Design = tuple[list[int], np.ndarray]
"""A pair's ablation design: the sentences its masks ablate, and the ``(m, K)`` masks (True = kept)."""
PACKAGE_ALPHA = 0.01
"""``context_cite.solver.LassoRegression``'s default regularisation."""


def draw_masks(
    document_key: str, ablated: Sequence[int], ablations: int, keep: float, seed: int
) -> np.ndarray:
    """``(ablations, len(ablated))`` booleans, True = kept, each with probability ``keep``; the
    generator is seeded with SHA-256 of ``seed``, the document and the ablated sentences."""
    text = f"{seed}:{document_key}:{','.join(map(str, ablated))}"
    entropy = int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")
    return np.random.default_rng(entropy).random((ablations, len(ablated))) < keep


def sequence_logit(mean_nll: np.ndarray, tokens: int) -> np.ndarray:
    """``log p - log(1 - p)`` of a sequence of ``tokens`` tokens whose mean NLL is ``mean_nll``
    (``log p = -tokens * mean_nll``), computed without forming ``p``."""
    log_p = np.minimum(-tokens * np.asarray(mean_nll, dtype=float), -np.finfo(float).tiny)
    logit: np.ndarray = log_p - np.log(-np.expm1(log_p))
    return logit


def fit_surrogate(
    masks: np.ndarray, targets: np.ndarray, tokens: int, surrogate: str, alpha: float
) -> np.ndarray:
    """The surrogate's weights ``T * w`` for ``targets`` (``y_r``, one per mask) over ``masks``
    (``(m, K)``, 1 = kept), with ``T = tokens``; see the module docstring."""
    from sklearn.linear_model import Lasso, LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    y = np.asarray(targets, dtype=float) / tokens
    if surrogate == "linear":
        return np.asarray(LinearRegression().fit(np.asarray(masks, dtype=float), y).coef_) * tokens
    x = np.asarray(masks, dtype=np.float32)  # as the package fits it (so in float32)
    scaler, lasso = StandardScaler(), Lasso(alpha=alpha, random_state=0, fit_intercept=True)
    make_pipeline(scaler, lasso).fit(x, y)
    return np.asarray(lasso.coef_ / scaler.scale_, dtype=float) * tokens


@register
class ContextCiteRanker(LMRanker):
    """ContextCite (Cohen-Wang et al. 2024): each sentence's weight in a sparse linear model of
    the summary's logit-probability over random ablations of the document (module docstring)."""

    name = "contextcite"
    version = "1"
    reproduction_tolerance = 2e-4
    """The surrogate is fitted on float32 losses whose last bits move with the batch layout and
    the CPU's kernels: recomputed alone (``sourcesum verify``, 8 sampled pairs of each XSum
    entry, Intel Xeon), scores computed in document groups differed by at most 1.8e-5 (scores
    reach 32); the authors' package, on the same masks, by at most 1.9e-5. Entries computed
    before the contexts ran as a prefix tree, recomputed with it (3 sampled pairs each of
    XSum-PEGASUS, CNN/DM-Reference and WiCE, AMD EPYC): at most 4.2e-5."""
    server_refusal = ""

    param_specs = {
        **LMRanker.param_specs,
        "ablations": Param(int, "ablated contexts per document (masks)", min=2),
        "keep": Param(float, "probability that an ablation keeps a sentence", min=0.01, max=0.99),
        "surrogate": Param(
            str, "lasso (the package's, on standardised masks) or linear (least squares)", choices=SURROGATES
        ),
        "alpha": Param(float, "lasso: regularisation strength (the package's 0.01)", min=1e-9),
        "seed": Param(int, "seed of the masks (with the document and the ablated sentences)", min=0),
        "shortlist": Param(
            int, "ablate only the K sentences BM25 ranks highest for the summary (0: all)", min=0
        ),
    }
    unkeyed_defaults = {**LMRanker.unkeyed_defaults, "shortlist": 0}

    def __init__(
        self,
        ablations: int = 32,
        keep: float = 0.5,
        surrogate: str = "lasso",
        alpha: float = PACKAGE_ALPHA,
        seed: int = 0,
        shortlist: int = 0,
        **options: Any,
    ):
        if surrogate not in SURROGATES:
            raise ValueError(f"surrogate must be in {SURROGATES}")
        self.ablations, self.keep, self.surrogate = int(ablations), float(keep), surrogate
        self.alpha, self.seed, self.shortlist = float(alpha), int(seed), int(shortlist)
        super().__init__(**options)

    # -- which contexts ---------------------------------------------------------------------------
    def ablated(self, pair: Pair) -> list[int]:
        """The sentences the masks of ``pair`` ablate (all, or its BM25 shortlist)."""
        return bm25_shortlist(pair, self.shortlist)

    def designs(self, pairs: Sequence[Pair]) -> list[Design]:
        """Per pair, ``(ablated sentences, masks)``: :func:`draw_masks`."""
        out = []
        for pair in pairs:
            ablated = self.ablated(pair)
            out.append(
                (ablated, draw_masks(pair.document_key, ablated, self.ablations, self.keep, self.seed))
            )
        return out

    @staticmethod
    def sharing(designs: Sequence[Design]) -> list[list[int]]:
        """Indices of the designs that are equal (same ablated sentences and masks: the pairs of a
        document without a shortlist, or with the same one), each group read after the same
        contexts, in order of first appearance."""
        groups: dict[tuple[tuple[int, ...], bytes], list[int]] = {}
        for d, (ablated, masks) in enumerate(designs):
            groups.setdefault((tuple(ablated), np.asarray(masks, dtype=bool).tobytes()), []).append(d)
        return list(groups.values())

    @staticmethod
    def distinct_keeps(n: int, design: Design) -> tuple[list[tuple[bool, ...]], list[int]]:
        """The distinct sentence-keep vectors of ``design``'s masks (over all ``n`` sentences,
        the unablated ones always kept), and the index of each mask's among them."""
        ablated, masks = design
        distinct: dict[tuple[bool, ...], int] = {}
        rows = []
        for mask in masks:
            keep = [True] * n
            for i, kept in zip(ablated, mask, strict=True):
                keep[i] = bool(kept)
            rows.append(distinct.setdefault(tuple(keep), len(distinct)))
        return list(distinct), rows

    # -- scores -----------------------------------------------------------------------------------
    def pair_scores(self, pair: Pair, design: Design, nll: np.ndarray, tokens: int) -> list[float]:
        """The pair's scores from its design and the summary's mean NLL under each mask."""
        ablated, masks = design
        weights = fit_surrogate(masks, sequence_logit(nll, tokens), tokens, self.surrogate, self.alpha)
        scores = np.zeros(pair.n_sentences)
        scores[list(ablated)] = weights
        if len(ablated) < pair.n_sentences:
            listed = np.zeros(pair.n_sentences, dtype=bool)
            listed[list(ablated)] = True
            scores = tie_below(scores, listed)
        return [float(v) for v in scores]

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        return self.score_designs(pairs, self.designs(pairs))

    def score_designs(self, pairs: Sequence[Pair], designs: Sequence[Design]) -> list[Sequence[float]]:
        """Scores of ``pairs`` (one document) under the given design per pair: the pairs that
        share a design are read after its distinct contexts together (:meth:`sharing`)."""
        from sourcesum.rankers.lm.engine import (  # torch
            causal_kept_nll,
            run_context,
            seq2seq_variants_nll,
        )

        lm = self.lm()
        sentences = pairs[0].sentences
        scores: list[Sequence[float]] = [[] for _ in pairs]
        if lm.seq2seq:
            context = seq2seq_context(lm.tokenizer, sentences)
            summaries = [seq2seq_summary(lm.tokenizer, p.summary) for p in pairs]
            self.check_fits(context, pairs, [0] * len(pairs))
        else:
            context = causal_context(lm.tokenizer, sentences, self.template)
            summaries = [causal_summary(lm.tokenizer, p.summary) for p in pairs]
            self.check_fits(context, pairs, [len(s) for s in summaries])
            full = run_context(lm.model, context.ids())
        for group in self.sharing(designs):
            keeps, rows = self.distinct_keeps(len(sentences), designs[group[0]])
            read = [summaries[p] for p in group]
            if lm.seq2seq:
                inputs = [(ids, mask) for ids, mask, _ in (context.kept(k) for k in keeps)]
                nll = seq2seq_variants_nll(lm.model, inputs, read, self.batch_size)
            else:
                nll = causal_kept_nll(lm.model, context, keeps, read, self.batch_size, full)
            for r, p in enumerate(group):
                scores[p] = self.pair_scores(pairs[p], designs[p], nll[r, rows], len(summaries[p]))
        return scores

    def server_plan(self, pairs: Sequence[Pair]) -> ServerPlan:
        """Each summary after each distinct ablated context of its design."""
        from sourcesum.rankers.lm.server import Continuation, causal_kept_variants, spaced

        tokenizer = self.server().tokenizer
        designs = self.designs(pairs)
        summaries = [spaced(tokenizer, p.summary) for p in pairs]
        plan: list[tuple[list[int], list[int], int]] = []  # (group, mask rows, contexts)
        items: list[Continuation] = []
        for group in self.sharing(designs):
            keeps, rows = self.distinct_keeps(pairs[0].n_sentences, designs[group[0]])
            contexts = causal_kept_variants(tokenizer, pairs[0].sentences, self.template, keeps)
            plan.append((group, rows, len(contexts)))
            items += [
                Continuation(
                    ids,
                    summaries[p][0],
                    text,
                    summaries[p][1],
                    f"pair {pairs[p].id}: the summary after ablated context {v} of its document",
                )
                for v, (ids, text) in enumerate(contexts)
                for p in group
            ]

        def finish(nll: Sequence[float]) -> list[Sequence[float]]:
            values = np.asarray(nll, dtype=float)
            scores: list[Sequence[float]] = [[] for _ in pairs]
            at = 0
            for group, rows, n_contexts in plan:
                table = values[at : at + n_contexts * len(group)].reshape(n_contexts, len(group)).T
                at += n_contexts * len(group)
                for r, p in enumerate(group):
                    scores[p] = self.pair_scores(pairs[p], designs[p], table[r, rows], len(summaries[p][0]))
            return scores

        return items, finish
