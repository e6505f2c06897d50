"""Gradient attribution: how strongly the summary's loss reacts to each sentence's input embeddings.

For a pair, ``f(E)`` is the summed token NLL of the summary given the document, as a function
of the document's input embeddings ``E`` (the outputs of the model's input embedding module:
for a causal model, of ``template`` = head + sentences + middle; for a seq2seq model, of the
encoder input). A method gives one attribution vector ``a_t`` per input token ``t``:

- ``saliency`` (default): ``a_t = df/dE_t``;
- ``input_x_gradient``: ``a_t = E_t * df/dE_t`` (elementwise);
- ``integrated_gradients``: ``a_t = (E_t - B_t) * (1/n) sum_k df/dE(B + alpha_k (E - B))_t``,
  the midpoint rule with ``n = steps`` points ``alpha_k = (k - 1/2) / n`` (Captum's
  ``riemann_middle``; its ``riemann_trapezoid`` weights sum to ``(n-1)/n``, an O(1/n) error). The baseline ``B`` equals
  ``E`` everywhere except on the sentences' tokens, which are replaced by zero vectors
  (``baseline="zero"``) or the pad token's embedding (``"pad"``, else EOS). Completeness:
  ``sum_t sum_d a_td = f(E) - f(B)`` up to the quadrature error.

Token score ``s_t = ||a_t||`` (``token_norm`` l2 or l1); sentence score = ``aggregate`` (sum,
mean or max) of ``s_t`` over the sentence's tokens.

Implementation: the attributions come from Captum (``Saliency``, ``InputXGradient``,
``IntegratedGradients``) applied to :class:`SummaryLoss`, a forward function of the embeddings
(a forward hook substitutes them for the embedding module's output, so any scaling the model
applies after the lookup, e.g. PEGASUS's ``sqrt(d)``, is part of ``f``). Captum adds nothing
over one ``torch.autograd.grad`` call for the first two methods but keeps one code path; for
integrated gradients it supplies the path, the quadrature and the step batching. Weights never
require gradients, so backward passes compute gradients for the embeddings only.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from sourcesum.data import Pair
from sourcesum.errors import SourceSumError
from sourcesum.rankers.base import register
from sourcesum.rankers.lm.base import LMRanker
from sourcesum.rankers.lm.engine import _token_nll
from sourcesum.rankers.lm.inputs import (DEFAULT_TEMPLATE, Context, causal_context, causal_summary,
                                         seq2seq_context, seq2seq_summary)
from sourcesum.rankers.lm.models import DEFAULT_LM, LoadedLM

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
            raise SourceSumError(f"embedding output {tuple(output.shape)} != substituted {tuple(embeddings.shape)}")
        return embeddings

    handle = module.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()
    if len(calls) != 1:
        raise SourceSumError(f"the input embedding module ran {len(calls)} times in one forward pass, not once")


@dataclass
class AttributionBatch:
    """Pairs of one document, padded: model inputs plus the summary tokens the loss covers.

    Causal: ``ids`` = context + summary (right-padded), logits at ``positions`` predict
    ``targets``. Seq2seq: ``ids`` = the encoder input, ``targets`` the decoder labels.
    ``target_mask`` is 1 on real summary tokens.
    """

    ids: torch.Tensor
    mask: torch.Tensor
    targets: torch.Tensor
    target_mask: torch.Tensor
    positions: torch.Tensor | None


def make_batch(lm: LoadedLM, context: Context, summaries: Sequence[Sequence[int]]) -> AttributionBatch:
    device = lm.model.device
    width = max(map(len, summaries))
    targets = torch.zeros((len(summaries), width), dtype=torch.long)
    target_mask = torch.zeros((len(summaries), width))
    for row, summary in enumerate(summaries):
        targets[row, : len(summary)] = torch.tensor(list(summary), dtype=torch.long)
        target_mask[row, : len(summary)] = 1
    context_ids = torch.tensor([context.ids()], dtype=torch.long).expand(len(summaries), -1)
    if lm.seq2seq:
        ids, mask, positions = context_ids, torch.ones_like(context_ids), None
    else:
        ids = torch.cat([context_ids, targets], dim=1)
        mask = torch.cat([torch.ones_like(context_ids), target_mask.long()], dim=1)
        positions = torch.arange(width) + context_ids.shape[1] - 1
    return AttributionBatch(ids.to(device), mask.to(device), targets.to(device), target_mask.to(device),
                            None if positions is None else positions.to(device))


def embedding_module(lm: LoadedLM) -> torch.nn.Module:
    """The module whose output is the attributed input: the (encoder's) token embedding."""
    owner = lm.model.get_encoder() if lm.seq2seq else lm.model
    return owner.get_input_embeddings()


class SummaryLoss:
    """``f(E)``: the summed token NLL of each row's summary given input embeddings ``E``.

    Called as ``f(embeddings, ids, mask, targets, target_mask, positions)`` (the Captum forward
    function convention: inputs first, then the additional arguments), returns shape ``(batch,)``.
    """

    def __init__(self, lm: LoadedLM):
        self.lm = lm
        self.embedding = embedding_module(lm)
        forward = lm.model.forward
        import inspect

        self.keep_logits = "logits_to_keep" in inspect.signature(forward).parameters

    def __call__(self, embeddings: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor,
                 targets: torch.Tensor, target_mask: torch.Tensor,
                 positions: torch.Tensor | None = None) -> torch.Tensor:
        model = self.lm.model
        if self.lm.seq2seq:
            with substituted_embeddings(self.embedding, embeddings):
                encoded = model.get_encoder()(input_ids=ids, attention_mask=mask)
            labels = targets.masked_fill(target_mask == 0, -100)
            logits = model(encoder_outputs=encoded, attention_mask=mask, labels=labels).logits
        else:
            extra = {"logits_to_keep": positions} if self.keep_logits else {}
            with substituted_embeddings(self.embedding, embeddings):
                logits = model(input_ids=ids, attention_mask=mask, **extra).logits
            if not self.keep_logits:
                logits = logits[:, positions]
        return (_token_nll(logits, targets) * target_mask).sum(dim=1)


def token_attributions(loss: SummaryLoss, batch: AttributionBatch, method: str,
                       baseline: torch.Tensor | None = None, steps: int = DEFAULT_STEPS,
                       internal_batch_size: int | None = None) -> torch.Tensor:
    """``(batch, tokens, dim)`` attributions of ``method`` for the embeddings of ``batch.ids``."""
    from captum.attr import InputXGradient, IntegratedGradients, Saliency

    with torch.no_grad():
        embeddings = loss.embedding(batch.ids)
    embeddings.requires_grad_(True)
    args = (batch.ids, batch.mask, batch.targets, batch.target_mask, batch.positions)
    with torch.enable_grad():
        if method == "saliency":
            attributions = Saliency(loss).attribute(embeddings, additional_forward_args=args, abs=False)
        elif method == "input_x_gradient":
            attributions = InputXGradient(loss).attribute(embeddings, additional_forward_args=args)
        elif baseline is None:
            raise SourceSumError("integrated_gradients needs a baseline")
        else:
            attributions = IntegratedGradients(loss).attribute(
                embeddings, baselines=baseline, additional_forward_args=args, n_steps=steps,
                method="riemann_middle", internal_batch_size=internal_batch_size or len(batch.ids))
    return attributions.detach()


def sentence_baseline(loss: SummaryLoss, batch: AttributionBatch, context: Context, kind: str) -> torch.Tensor:
    """The embeddings of ``batch.ids`` with every sentence token replaced by ``kind``'s vector."""
    with torch.no_grad():
        baseline = loss.embedding(batch.ids).clone()
        if kind == "zero":
            filler = torch.zeros_like(baseline[0, 0])
        else:
            tokenizer = loss.lm.tokenizer
            pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
            filler = loss.embedding(torch.tensor([[pad]], device=batch.ids.device))[0, 0]
        first = context.starts[0]
        last = context.starts[-1] + len(context.segments[-1])
        baseline[:, first:last] = filler
    return baseline


def sentence_scores(attributions: torch.Tensor, context: Context, token_norm: str, aggregate: str) -> np.ndarray:
    """``(batch, n_sentences)``: ``aggregate`` over each sentence's tokens of ``||a_t||``."""
    norms = attributions.float().norm(p=2 if token_norm == "l2" else 1, dim=-1)  # (B, T)
    columns = []
    for start, segment in zip(context.starts, context.segments):
        tokens = norms[:, start : start + len(segment)]
        columns.append(getattr(tokens, aggregate)(dim=1) if aggregate != "max" else tokens.max(dim=1).values)
    return torch.stack(columns, dim=1).detach().cpu().numpy()


def _check_choice(name: str, value: Any, choices: Sequence[Any]) -> None:
    if value not in choices:
        raise SourceSumError(f"attribution: {name} must be one of {list(choices)}, got {value!r}")


@register
class AttributionRanker(LMRanker):
    """Gradient attribution of the summary's loss to each sentence's input embeddings.

    See the module docstring for the formulas. Causal models read ``template`` with every
    sentence tokenized with a leading space (``Document:`` + `` s1`` + ... + ``\\n\\nSummary:``
    + `` summary``); seq2seq models read the document in the encoder and the summary as decoder
    target. Pairs of one document are attributed together, ``batch_size`` sequences per pass
    (right-padded summaries, attention masks); ``steps`` and ``baseline`` apply to
    ``integrated_gradients`` only.
    """

    name = "attribution"
    version = "1"

    def __init__(self, model: str = DEFAULT_LM, method: str = "saliency", aggregate: str = "sum",
                 token_norm: str = "l2", steps: int = DEFAULT_STEPS, baseline: str = "zero",
                 template: str = DEFAULT_TEMPLATE, device: str = "auto", dtype: str = "float32",
                 batch_size: int = 4):
        _check_choice("method", method, METHODS)
        _check_choice("aggregate", aggregate, AGGREGATES)
        _check_choice("token_norm", token_norm, TOKEN_NORMS)
        _check_choice("baseline", baseline, BASELINES)
        if int(steps) < 2:
            raise SourceSumError(f"attribution: steps must be at least 2, got {steps!r}")
        if method != "integrated_gradients" and (steps != DEFAULT_STEPS or baseline != "zero"):
            raise SourceSumError("attribution: steps and baseline apply to method=integrated_gradients only")
        self.method, self.aggregate, self.token_norm = method, aggregate, token_norm
        self.steps, self.baseline, self.template = int(steps), baseline, template
        self._set_model_options(model, device, dtype, batch_size)

    def lm(self) -> LoadedLM:
        loaded = super().lm()
        loaded.model.requires_grad_(False)  # gradients for the input embeddings only
        return loaded

    def context(self, lm: LoadedLM, sentences: Sequence[str]) -> Context:
        if lm.seq2seq:
            return seq2seq_context(lm.tokenizer, sentences)
        return causal_context(lm.tokenizer, sentences, self.template, space_every_sentence=True)

    def summary_tokens(self, lm: LoadedLM, summary: str) -> tuple[int, ...]:
        return seq2seq_summary(lm.tokenizer, summary) if lm.seq2seq else causal_summary(lm.tokenizer, summary)

    def attribute(self, pairs: Sequence[Pair]) -> tuple[Context, list[torch.Tensor]]:
        """The shared context and, per chunk of ``batch_size`` pairs, its token attributions."""
        lm = self.lm()
        context = self.context(lm, pairs[0].sentences)
        summaries = [self.summary_tokens(lm, p.summary) for p in pairs]
        self.check_fits(context, pairs, 0 if lm.seq2seq else max(map(len, summaries)))
        loss = SummaryLoss(lm)
        size = max(1, int(self.batch_size))
        chunks = []
        for start in range(0, len(summaries), size):
            batch = make_batch(lm, context, summaries[start : start + size])
            baseline = (sentence_baseline(loss, batch, context, self.baseline)
                        if self.method == "integrated_gradients" else None)
            chunks.append(token_attributions(loss, batch, self.method, baseline, self.steps, size))
        return context, chunks

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        context, chunks = self.attribute(pairs)
        rows = [row for chunk in chunks for row in sentence_scores(chunk, context, self.token_norm, self.aggregate)]
        return [row.tolist() for row in rows]
