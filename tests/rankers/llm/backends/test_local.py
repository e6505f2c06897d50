"""The local backend (sourcesum.rankers.llm.backends.local) against naive forward passes (a tiny
Llama built from a config)."""

from __future__ import annotations

import pytest
from sourcesum.rankers.llm.prompts import Template
from sourcesum.rankers.llm.scale import Scale
from sourcesum.rankers.llm.scoring import rating_distributions
from support.judge import DOC, SUMMARY, TEMPLATE, load_tiny_judge


@pytest.fixture(scope="module")
def tiny_judge():
    """(model, tokenizer) of the tiny judge, registered as ``tiny-judge`` (tests/support/judge.py)."""
    return load_tiny_judge()


def _naive_dist(model, ids, table):
    import torch
    from sourcesum.rankers.llm.backends.local import LocalBackend

    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids])).logits[0, -1]
    return LocalBackend._dist(logits, table)


@pytest.mark.parametrize("chat", [False, True])
@pytest.mark.parametrize("spec", ["0-9", pytest.param("0-100", marks=pytest.mark.slow)])  # 0-100: 101 ratings
def test_local_backend_equals_naive_forward_passes(tiny_judge, chat, spec):
    # here, not at collection: the backend imports torch
    from sourcesum.rankers.llm.backends.local import LocalBackend, candidate_tokens, common_prefix_length

    model, tokenizer = tiny_judge
    scale = Scale.parse(spec)
    backend = LocalBackend("tiny-judge", "cpu", "float32", batch_size=2, chat=chat)
    template = Template(TEMPLATE, "test", listwise=False)
    prompts = [template.render(SUMMARY, scale, sentence=s) for s in DOC]
    got = backend.rate(prompts, scale, 0.0, "hand__0")
    rows = [backend.encode(p) for p in prompts]
    assert 0 < common_prefix_length(rows) < min(len(r) for r in rows)
    tables = {root: candidate_tokens(tokenizer, scale.continuation, root) for root in (True, False)}
    expected = rating_distributions(
        scale,
        len(rows),
        lambda nodes: [_naive_dist(model, rows[i] + list(path), tables[not path]) for i, path in nodes],
        0.0,
    )
    for g, e in zip(got, expected, strict=True):
        assert g.nodes == e.nodes and set(g.ratings) == set(e.ratings)
        for key in e.ratings:
            assert g.ratings[key] == pytest.approx(e.ratings[key], rel=1e-4, abs=1e-9)
        assert g.expected(scale) == pytest.approx(e.expected(scale), rel=1e-5)
    if spec == "0-100":
        assert max(g.nodes for g in got) > 2  # the tree went below the root
    # a second call reuses the previous prefix cache and gives the same distributions
    again = backend.rate(prompts, scale, 0.0, "hand__0")
    for a, g in zip(again, got, strict=True):
        assert a.ratings == pytest.approx(g.ratings, rel=1e-4, abs=1e-9)
