"""Gradient attribution rankers on tiny causal (GPT-2, Llama) and seq2seq (BART) models built from
configs: gradients against central finite differences of an independent float64 loss, integrated
gradients' completeness, batched against unbatched; plus one real check with SmolLM2-135M.

Finite differences need a model that computes wholly in float64: GPT-2 and BART do, Llama's
RMSNorm rounds through float32, so Llama is covered by the batched/unbatched and float32 checks."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from sourcesum.errors import ParameterError, SourceSumError
from sourcesum.rankers import create_ranker
from sourcesum.rankers.lm.attribution import AttributionRanker
from sourcesum.rankers.lm.inputs import DEFAULT_TEMPLATE, causal_context
from sourcesum.rankers.lm.loading import register_loaded
from support.models import tiny_bart, tiny_gpt2, tiny_llama, tiny_tokenizer
from support.pairs import make_pair

if TYPE_CHECKING:
    import torch

DOC = [
    "The council voted to build a bridge over the river.",
    "It rained all week.",
    "The bridge will cost forty million dollars.",
]


SUMMARIES = [
    "A new bridge costing forty million dollars was approved.",
    "Rain.",
    "The council approved a bridge.",
]


EXACT = ("gpt2", "bart")  # computed wholly in float64


KINDS = ("llama", "gpt2", "bart")


METHODS_QUICK_FIRST = [
    "saliency",
    "input_x_gradient",
    pytest.param("integrated_gradients", marks=pytest.mark.slow),  # many steps: full suite only
]


@pytest.fixture(scope="module")
def tiny_models():
    """``{(kind, dtype name): model}``, each registered as ``attr-<kind>-<dtype>``."""
    import torch

    tokenizer = tiny_tokenizer()
    models = {}
    for kind, build in (("llama", tiny_llama), ("gpt2", tiny_gpt2), ("bart", tiny_bart)):
        for dtype in (torch.float32, torch.float64):
            name = f"attr-{kind}-{str(dtype).split('.')[-1]}"
            models[kind, dtype] = build(tokenizer, dtype)
            register_loaded(name, models[kind, dtype], tokenizer, device="cpu")
    return models


def _ranker(kind: str, dtype: str = "float64", **params) -> AttributionRanker:
    name = f"attr-{kind}-{dtype}"
    return create_ranker("attribution", model=name, device="cpu", **params)


def _pairs():
    return [make_pair(DOC, s, pair_id=f"doc__{i}") for i, s in enumerate(SUMMARIES)]


def _reference(
    model, seq2seq: bool, n_context: int, summary: list[int], embeddings: torch.Tensor
) -> torch.Tensor:
    """Summed summary NLL per row of ``embeddings``, straight through ``inputs_embeds``, in the
    model's dtype: independent of the ranker's embedding hook, padding and Captum."""
    import torch

    rows = len(embeddings)
    target = torch.tensor([summary] * rows)
    if seq2seq:
        logits = model(inputs_embeds=embeddings, labels=target).logits
    else:
        logits = model(inputs_embeds=embeddings).logits[:, n_context - 1 : -1]
    return -torch.log_softmax(logits, -1).gather(-1, target.unsqueeze(-1)).squeeze(-1).sum(1)


def _setup(ranker: AttributionRanker, pair):
    """Context, summary ids and the reference's embeddings (context + summary for causal)."""
    import torch

    lm = ranker.lm()
    context = ranker.context(lm, pair.sentences)
    summary = list(ranker.summary_tokens(lm, pair.summary))
    ids = context.ids() + ([] if lm.seq2seq else summary)
    module = lm.model.get_encoder().get_input_embeddings() if lm.seq2seq else lm.model.get_input_embeddings()
    with torch.no_grad():
        embeddings = module(torch.tensor([ids]))
    return lm, context, summary, embeddings


def _finite_difference_gradient(lm, n_context, summary, embeddings, positions, eps=1e-4) -> torch.Tensor:
    """Central differences of the float64 reference at every coordinate of ``positions``."""
    import torch

    dim = embeddings.shape[-1]
    coordinates = [(p, d) for p in positions for d in range(dim)]
    grad = torch.zeros_like(embeddings[0])
    with torch.no_grad():
        for start in range(0, len(coordinates), 256):
            chunk = coordinates[start : start + 256]
            plus = embeddings.repeat(len(chunk), 1, 1)
            minus = plus.clone()
            for row, (p, d) in enumerate(chunk):
                plus[row, p, d] += eps
                minus[row, p, d] -= eps
            diff = (
                _reference(lm.model, lm.seq2seq, n_context, summary, plus)
                - _reference(lm.model, lm.seq2seq, n_context, summary, minus)
            ) / (2 * eps)
            for row, (p, d) in enumerate(chunk):
                grad[p, d] = diff[row]
    return grad


@pytest.mark.slow  # ~15 s per model idle: a forward pass per perturbed embedding
@pytest.mark.parametrize("kind", EXACT)
def test_saliency_equals_finite_differences(tiny_models, kind):
    import torch

    ranker = _ranker(kind)
    pair = _pairs()[0]
    lm, context, summary, embeddings = _setup(ranker, pair)
    positions = range(len(context.head), len(context.ids()))  # sentences + the template's middle
    expected = _finite_difference_gradient(lm, len(context.ids()), summary, embeddings, positions)
    _, attributions = ranker.attribute([pair])
    gradient = attributions[0]
    scale = float(expected.abs().max())
    assert scale > 1e-6  # a real signal, not zeros on both sides
    assert torch.allclose(gradient[list(positions)], expected[list(positions)], rtol=1e-4, atol=1e-6 * scale)
    # input x gradient is the same gradient times the embeddings
    _, attributions = _ranker(kind, method="input_x_gradient").attribute([pair])
    assert torch.allclose(
        attributions[0], gradient * embeddings[0, : len(gradient)], rtol=1e-6, atol=1e-9 * scale
    )
    # sentence scores: sum / mean / max over the sentence's tokens of the L2 / L1 norms
    for token_norm, p in (("l2", 2), ("l1", 1)):
        norms = expected.norm(p=p, dim=-1)
        for aggregate in ("sum", "mean", "max"):
            scores = _ranker(kind, token_norm=token_norm, aggregate=aggregate).score(pair)
            want = [
                float(getattr(norms[s : s + len(seg)], aggregate)())
                for s, seg in zip(context.starts, context.segments, strict=True)
            ]
            assert scores == pytest.approx(want, rel=1e-4)


@pytest.mark.slow  # many-step integrals; captum's IG agrees in the full suite too
@pytest.mark.parametrize("kind", EXACT)
@pytest.mark.parametrize("baseline", ["zero", "pad"])
def test_integrated_gradients_completeness(tiny_models, kind, baseline):
    """Attributions sum to f(x) - f(baseline), with a midpoint-rule error shrinking ~1/steps^2."""
    import torch

    pair = _pairs()[0]
    lm, context, summary, embeddings = _setup(_ranker(kind), pair)
    first, last = context.starts[0], context.starts[-1] + len(context.segments[-1])
    reference_baseline = embeddings.clone()
    if baseline == "zero":
        reference_baseline[:, first:last] = 0
    else:
        module = (
            lm.model.get_encoder().get_input_embeddings() if lm.seq2seq else lm.model.get_input_embeddings()
        )
        with torch.no_grad():
            reference_baseline[:, first:last] = module(torch.tensor([[lm.tokenizer.pad_token_id]]))[0, 0]
    with torch.no_grad():
        gap = float(
            _reference(lm.model, lm.seq2seq, len(context.ids()), summary, embeddings)
            - _reference(lm.model, lm.seq2seq, len(context.ids()), summary, reference_baseline)
        )
    errors = []
    for steps in (4, 16, 64):
        _, batch = _ranker(kind, method="integrated_gradients", steps=steps, baseline=baseline).attribute(
            [pair]
        )
        attributions = batch[0]
        outside = torch.cat([attributions[:first], attributions[last:]])
        assert float(outside.abs().max()) == 0.0  # the baseline differs from x on the sentences only
        errors.append(abs(float(attributions.sum()) - gap))
    assert abs(gap) > 1e-4
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-3 * abs(gap)
    assert errors[0] / errors[1] > 8  # midpoint rule: error ~ 1/steps^2 (16x in theory)


@pytest.mark.parametrize("kind", EXACT)
@pytest.mark.parametrize("method", METHODS_QUICK_FIRST)
def test_attributions_equal_captums_on_single_pairs(tiny_models, kind, method):
    """Captum's Saliency / InputXGradient / IntegratedGradients (midpoint rule) on the plain
    per-pair loss give the attributions the shared-document engine computes for several pairs."""
    import torch
    from captum.attr import InputXGradient, IntegratedGradients, Saliency

    pairs = _pairs()
    params = {"method": method, **({"steps": 8} if method == "integrated_gradients" else {})}
    _, ours = _ranker(kind, batch_size=2, **params).attribute(pairs)  # three summaries, two per pass
    for pair, attributions in zip(pairs, ours, strict=True):
        lm, context, summary, embeddings = _setup(_ranker(kind), pair)
        n = len(context.ids())
        head, tail = embeddings[:, :n].clone().requires_grad_(True), embeddings[:, n:]

        def loss(context_embeddings, lm=lm, n=n, summary=summary, tail=tail):
            rows = len(context_embeddings)
            full = (
                context_embeddings
                if lm.seq2seq
                else torch.cat([context_embeddings, tail.expand(rows, -1, -1)], 1)
            )
            return _reference(lm.model, lm.seq2seq, n, summary, full)

        if method == "saliency":
            theirs = Saliency(loss).attribute(head, abs=False)
        elif method == "input_x_gradient":
            theirs = InputXGradient(loss).attribute(head)
        else:
            baseline = head.detach().clone()
            baseline[:, context.starts[0] : context.starts[-1] + len(context.segments[-1])] = 0
            theirs = IntegratedGradients(loss).attribute(
                head, baselines=baseline, n_steps=8, method="riemann_middle"
            )
        theirs = theirs.detach()[0]
        scale = float(theirs.abs().max())
        assert scale > 0
        assert torch.allclose(attributions, theirs, rtol=1e-4, atol=1e-6 * scale)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", METHODS_QUICK_FIRST)
def test_batched_equals_unbatched(tiny_models, kind, method):
    pairs = _pairs()  # three summaries of different lengths: padded in one batch
    params = {"method": method, **({"steps": 8} if method == "integrated_gradients" else {})}
    batched = _ranker(kind, "float32", batch_size=3, **params).score_batch(pairs)
    single = [_ranker(kind, "float32", batch_size=1, **params).score(p) for p in pairs]
    for row, alone in zip(batched, single, strict=True):
        assert len(row) == len(DOC) and all(v > 0 for v in row)
        assert row == pytest.approx(alone, rel=1e-4, abs=1e-7)
    assert not np.allclose(batched[0], batched[1])  # the summary matters


def test_weights_get_no_gradients(tiny_models):
    ranker = _ranker("llama", "float32")
    ranker.score(_pairs()[0])
    model = ranker.lm().model
    assert not any(p.requires_grad for p in model.parameters())
    assert all(p.grad is None for p in model.parameters())


def test_every_sentence_is_tokenized_with_a_leading_space(tiny_models):
    tokenizer = tiny_tokenizer()
    context = causal_context(tokenizer, DOC, DEFAULT_TEMPLATE, space_every_sentence=True)
    plain = causal_context(tokenizer, DOC, DEFAULT_TEMPLATE)
    assert context.segments == plain.segments  # WordPiece ignores spaces: same tokens either way
    assert (
        tokenizer.decode(context.ids(), skip_special_tokens=True)
        == "document : " + " ".join(DOC).lower() + " summary :"
    )


@pytest.mark.parametrize(
    "params, message",
    [
        ({"method": "lime"}, r"attribution.method=lime: expected one of saliency, input_x_gradient"),
        ({"aggregate": "median"}, r"attribution.aggregate=median: expected one of sum, mean, max"),
        ({"token_norm": "linf"}, r"attribution.token_norm=linf: expected one of l2, l1"),
        ({"steps": 64}, "apply to method=integrated_gradients only"),
        ({"method": "integrated_gradients", "steps": 1}, r"attribution.steps=1: expected an integer >= 2"),
    ],
)
def test_bad_parameters_are_clear_errors(params, message):
    with pytest.raises(ParameterError, match=message):
        create_ranker("attribution", **params)


def test_a_document_longer_than_the_context_window_names_the_pair(tiny_models):
    long_pair = make_pair(["word " * 600, "more words here."], "summary", pair_id="long__3")
    with pytest.raises(SourceSumError, match="pair long__3: .* exceed the model's limit of 512"):
        _ranker("llama").score(long_pair)


@pytest.mark.slow
def test_smollm2_attributes_the_summary_to_its_source_sentence():
    doc = [
        "The weather in the region was mild for most of the week.",
        "Engineers at the port of Valencia unveiled a floating solar farm that powers 800 homes.",
        "A local football club signed a new goalkeeper.",
        "Tickets for the summer concert series go on sale next month.",
    ]
    pair = make_pair(doc, "A floating solar farm powering 800 homes has opened at the port of Valencia.")
    ranker = create_ranker("attribution", device="cpu")
    lm = ranker.lm()
    context = ranker.context(lm, doc)
    assert lm.tokenizer.decode(context.ids()).endswith("Document: " + " ".join(doc) + "\n\nSummary:")
    assert all(lm.tokenizer.decode(s).startswith(" ") for s in context.segments)
    for method in ("saliency", "input_x_gradient"):
        scores = create_ranker("attribution", method=method, device="cpu").score(pair)
        assert int(np.argmax(scores)) == 1, (method, scores)
    assert ranker.label == "attribution(model=SmolLM2-135M-Instruct)"
