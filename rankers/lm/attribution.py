"""Gradient attribution: how strongly the summary's loss reacts to each sentence's input embeddings.

For a pair, ``f(E)`` is the summed token NLL of the summary given the document, as a function
of the document's input embeddings ``E`` (the outputs of the model's input embedding module:
for a causal model, of ``template`` = head + sentences + middle; for a seq2seq model, of the
encoder input). A method gives one attribution vector ``a_t`` per input token ``t``:

- ``saliency`` (default): ``a_t = df/dE_t``;
- ``input_x_gradient``: ``a_t = E_t * df/dE_t`` (elementwise);
- ``integrated_gradients``: ``a_t = (E_t - B_t) * (1/n) sum_k df/dE(B + alpha_k (E - B))_t``,
  the midpoint rule with ``n = steps`` points ``alpha_k = (k - 1/2) / n`` (error O(1/n^2)).
  The baseline ``B`` equals ``E`` everywhere except on the sentences' tokens, which are
  replaced by zero vectors (``baseline="zero"``) or the pad token's embedding (``"pad"``, else
  EOS). Completeness: ``sum_t sum_d a_td = f(E) - f(B)`` up to the quadrature error.

Token score ``s_t = ||a_t||`` (``token_norm`` l2 or l1); sentence score = ``aggregate`` (sum,
mean or max) of ``s_t`` over the sentence's tokens.

Implementation (plain ``torch.autograd``): the summaries of one document share its forward
pass. The document runs once (a forward hook substitutes the embeddings being differentiated
for the embedding module's output, so any scaling the model applies after the lookup, e.g.
PEGASUS's ``sqrt(d)``, is part of ``f``); its key/value cache (causal) or encoder states
(seq2seq) are expanded over a batch of ``batch_size`` summaries (right-padded, attention
masks), and one backward pass per summary gives ``df/dE``. Weights never require gradients, so
backward passes compute gradients for the embeddings only. Captum's ``Saliency``,
``InputXGradient`` and ``IntegratedGradients`` run one forward per (input, output) pair, which
would repeat the document's forward for every summary; the tests check these attributions
against Captum's on single pairs, against finite differences, and the completeness identity.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
from sourcesum.data import Pair
from sourcesum.errors import SourceSumError
from sourcesum.params import Param
from sourcesum.rankers.base import register
from sourcesum.rankers.lm.base import LMRanker
from sourcesum.rankers.lm.inputs import (
    Context,
    causal_context,
    causal_summary,
    seq2seq_context,
    seq2seq_summary,
)
from sourcesum.rankers.lm.loading import LoadedLM

if TYPE_CHECKING:  # torch is imported where scores are computed: listing rankers loads no model library
    import torch

METHODS = ("saliency", "input_x_gradient", "integrated_gradients")
AGGREGATES = ("sum", "mean", "max")
TOKEN_NORMS = ("l2", "l1")
BASELINES = ("zero", "pad")
DEFAULT_STEPS = 32


@contextmanager
def substituted_embeddings(module: torch.nn.Module, embeddings: torch.Tensor) -> Iterator[None]:
    """Within the block, ``module``'s output is ``embeddings``; it must run exactly once."""
    calls = []

    def hook(_module: Any, _inputs: Any, output: torch.Tensor) -> torch.Tensor:
        calls.append(output.shape)
        if output.shape != embeddings.shape:
            raise SourceSumError(
                f"embedding output {tuple(output.shape)} != substituted {tuple(embeddings.shape)}"
            )
        return embeddings

    handle = module.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()
    if len(calls) != 1:
        raise SourceSumError(
            f"the input embedding module ran {len(calls)} times in one forward pass, not once"
        )


def embedding_module(lm: LoadedLM) -> torch.nn.Module:
    """The module whose output is the attributed input: the (encoder's) token embedding."""
    owner = lm.model.get_encoder() if lm.seq2seq else lm.model
    module: torch.nn.Module = owner.get_input_embeddings()
    return module


def context_embeddings(lm: LoadedLM, context: Context) -> torch.Tensor:
    """``(1, tokens, dim)``: the embedding module's output for the context's ids."""
    import torch

    with torch.no_grad():
        embedded: torch.Tensor = embedding_module(lm)(torch.tensor([context.ids()], device=lm.model.device))
        return embedded


def summary_gradients(
    lm: LoadedLM, context: Context, summaries: Sequence[Sequence[int]], point: torch.Tensor, batch_size: int
) -> torch.Tensor:
    """``(K, tokens, dim)``: ``df_k/dE`` at ``E = point`` for each summary ``k``, ``f_k`` = the
    summed token NLL of summary ``k`` read after the context whose embeddings are ``point``.

    One forward pass over the context (batch 1); summaries in batches of ``batch_size`` read its
    expanded cache (causal) or encoder states (seq2seq); one backward pass per summary.
    """
    import torch
    from sourcesum.rankers.lm.engine import (
        _token_nll,
        cache_arguments,
        cache_view,
        last_logits_only,
        pad_batch,
        returned_cache,
    )

    model, device = lm.model, lm.model.device
    embeddings = point.detach().clone().requires_grad_(True)
    ids = torch.tensor([context.ids()], device=device)
    gradients = []
    with torch.enable_grad():
        with substituted_embeddings(embedding_module(lm), embeddings):
            if lm.seq2seq:
                encoded = model.get_encoder()(input_ids=ids, attention_mask=torch.ones_like(ids))
            else:
                out = model(input_ids=ids, use_cache=True, **last_logits_only(model))
        for start in range(0, len(summaries), max(1, batch_size)):
            chunk = summaries[start : start + batch_size]
            targets, target_mask = pad_batch(chunk, device)
            batch = len(chunk)
            if lm.seq2seq:
                from transformers.modeling_outputs import BaseModelOutput

                states = BaseModelOutput(last_hidden_state=encoded.last_hidden_state.expand(batch, -1, -1))
                logits = model(
                    encoder_outputs=states,
                    attention_mask=torch.ones_like(ids).expand(batch, -1),
                    labels=targets.masked_fill(target_mask == 0, -100),
                ).logits
            else:
                cache = cache_view(model, returned_cache(out), batch=batch)  # views: autograd-safe
                mask = torch.cat([torch.ones_like(ids).expand(batch, -1), target_mask], dim=1)
                following = model(
                    input_ids=targets, attention_mask=mask, use_cache=True, **cache_arguments(model, cache)
                ).logits
                first = out.logits[:, -1:].expand(batch, -1, -1)
                logits = torch.cat([first, following[:, :-1]], dim=1)
            loss = (_token_nll(logits, targets) * target_mask).sum(dim=1)
            for row in range(batch):
                gradients.append(torch.autograd.grad(loss[row], embeddings, retain_graph=True)[0][0])
    return torch.stack(gradients)


def sentence_baseline(lm: LoadedLM, context: Context, embeddings: torch.Tensor, kind: str) -> torch.Tensor:
    """``embeddings`` with every sentence token replaced by ``kind``'s vector (zero or pad)."""
    import torch

    baseline = embeddings.clone()
    if kind == "zero":
        filler = torch.zeros_like(baseline[0, 0])
    else:
        tokenizer = lm.tokenizer
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        with torch.no_grad():
            filler = embedding_module(lm)(torch.tensor([[pad]], device=embeddings.device))[0, 0]
    first = context.starts[0]
    last = context.starts[-1] + len(context.segments[-1])
    baseline[:, first:last] = filler
    return baseline


def token_attributions(
    lm: LoadedLM,
    context: Context,
    summaries: Sequence[Sequence[int]],
    method: str,
    batch_size: int,
    steps: int = DEFAULT_STEPS,
    baseline: str = "zero",
) -> torch.Tensor:
    """``(K, tokens, dim)`` attributions of ``method`` for each summary's loss (module docstring)."""
    import torch

    embeddings = context_embeddings(lm, context)
    if method in ("saliency", "input_x_gradient"):
        gradients = summary_gradients(lm, context, summaries, embeddings, batch_size)
        return gradients if method == "saliency" else gradients * embeddings
    reference = sentence_baseline(lm, context, embeddings, baseline)
    total = torch.zeros(
        (len(summaries), *embeddings.shape[1:]), dtype=embeddings.dtype, device=embeddings.device
    )
    for k in range(steps):
        alpha = (k + 0.5) / steps
        total += summary_gradients(
            lm, context, summaries, reference + alpha * (embeddings - reference), batch_size
        )
    return (embeddings - reference) * total / steps


def sentence_scores(
    attributions: torch.Tensor, context: Context, token_norm: str, aggregate: str
) -> np.ndarray:
    """``(K, n_sentences)``: ``aggregate`` over each sentence's tokens of ``||a_t||``."""
    import torch

    norms = attributions.float().norm(p=2 if token_norm == "l2" else 1, dim=-1)  # (K, T)
    columns = []
    for start, segment in zip(context.starts, context.segments, strict=True):
        tokens = norms[:, start : start + len(segment)]
        columns.append(tokens.max(dim=1).values if aggregate == "max" else getattr(tokens, aggregate)(dim=1))
    return torch.stack(columns, dim=1).cpu().numpy()


@register
class AttributionRanker(LMRanker):
    """Gradient attribution of the summary's loss to each sentence's input embeddings.

    See the module docstring for the formulas. Causal models read ``template`` with no start
    token and every sentence tokenized with a leading space (``Document:`` + `` s1`` + ... +
    ``\\n\\nSummary:`` + `` summary``; with SmolLM2, prepending its BOS ``<|im_start|>`` changed
    MAP on the first 8 XSum-PEGASUS pairs from .8915 to .8665); seq2seq models read the
    document in the encoder and the summary as decoder target. The pairs of one document share
    its forward pass, and ``batch_size`` summaries are read per pass (right-padded, attention
    masks); ``steps`` and ``baseline`` apply to ``integrated_gradients`` only.
    """

    name = "attribution"
    reproduction_tolerance = 1e-2
    """Scores are float32 gradient norms summed over a sentence's tokens (medians 16-25, up to
    300): recomputing 12 committed pairs (3 per split, `sourcesum verify`) moved them by up to
    1.1e-3 with the batch layout, a relative 5e-5; on an Intel Xeon (model 207, MKL; the
    committed scores come from AMD EPYC) all 1,211 pairs of the four splits were within 4.8e-3
    (a relative 8.9e-5 of the pair's largest score), every pair ranked the same."""
    version = "1"
    default_batch_size = 4
    linears_only = False  # its bfloat16 figures (docs/performance.md) are for the whole model in bfloat16
    needs_gradients = True
    server_refusal = "OpenAI-compatible servers return no gradients; use backend=local"

    param_specs = {
        **LMRanker.param_specs,
        "method": Param(str, "attribution method", choices=METHODS),
        "aggregate": Param(str, "token scores to a sentence score", choices=AGGREGATES),
        "token_norm": Param(str, "attribution vector to a token score", choices=TOKEN_NORMS),
        "steps": Param(int, "integrated_gradients: midpoint-rule points", min=2),
        "baseline": Param(
            str, "integrated_gradients: what replaces the sentences' embeddings", choices=BASELINES
        ),
        "batch_size": Param(
            int, "summaries read per pass after their document's (not in the cache key)", min=1
        ),
    }

    def __init__(
        self,
        method: str = "saliency",
        aggregate: str = "sum",
        token_norm: str = "l2",
        steps: int = DEFAULT_STEPS,
        baseline: str = "zero",
        **options: Any,
    ):
        if method != "integrated_gradients" and (steps != DEFAULT_STEPS or baseline != "zero"):
            raise ValueError("steps and baseline apply to method=integrated_gradients only")
        self.method, self.aggregate, self.token_norm = method, aggregate, token_norm
        self.steps, self.baseline = int(steps), baseline
        super().__init__(**options)

    def lm(self) -> LoadedLM:
        loaded = super().lm()
        loaded.model.requires_grad_(False)  # gradients for the input embeddings only
        return loaded

    def context(self, lm: LoadedLM, sentences: Sequence[str]) -> Context:
        if lm.seq2seq:
            return seq2seq_context(lm.tokenizer, sentences)
        return causal_context(
            lm.tokenizer, sentences, self.template, space_every_sentence=True, start_token=False
        )

    def summary_tokens(self, lm: LoadedLM, summary: str) -> tuple[int, ...]:
        return seq2seq_summary(lm.tokenizer, summary) if lm.seq2seq else causal_summary(lm.tokenizer, summary)

    def attribute(self, pairs: Sequence[Pair]) -> tuple[Context, torch.Tensor]:
        """The shared context and ``(n_pairs, tokens, dim)`` token attributions."""
        lm = self.lm()
        context = self.context(lm, pairs[0].sentences)
        summaries = [self.summary_tokens(lm, p.summary) for p in pairs]
        self.check_fits(context, pairs, [0 if lm.seq2seq else len(s) for s in summaries])
        attributions = token_attributions(
            lm, context, summaries, self.method, max(1, int(self.batch_size)), self.steps, self.baseline
        )
        return context, attributions

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        context, attributions = self.attribute(pairs)
        return [
            row.tolist() for row in sentence_scores(attributions, context, self.token_norm, self.aggregate)
        ]
