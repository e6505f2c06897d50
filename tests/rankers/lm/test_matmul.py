"""The LM rankers' ``matmul`` parameter: which kernels run the Linear layers.

``auto`` is resolved from facts load cannot sway (device, dtype, CPU vendor, torch's build),
``default`` keeps every committed entry's key, ``onednn`` gets keys of its own and gives the
same rankings as ``default`` on a tiny Llama, and what cannot run on oneDNN is refused with one
error naming the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.errors import ParameterError
from sourcesum.rankers import create_ranker
from sourcesum.rankers.lm import matmul
from sourcesum.rankers.lm.loading import register_loaded
from sourcesum.runner.configs import Configuration
from support.models import tiny_llama, tiny_tokenizer
from support.pairs import make_pair

SENTENCES = [
    "The council voted to build a bridge over the river.",
    "Work starts in May and should take two years.",
    "Residents had asked for a crossing for decades.",
    "The mayor called it a historic day for the town.",
    "It rained all week.",
]


SUMMARIES = ["A bridge will be built after a council vote.", "The town gets its long-awaited bridge."]


@pytest.fixture
def onednn() -> None:
    """Skip the test where torch was built without oneDNN (asked when it runs, not at collection)."""
    import torch

    if not torch.backends.mkldnn.is_available():
        pytest.skip("torch built without oneDNN")


@pytest.mark.parametrize(
    ("vendor", "device", "dtype", "expected"),
    [
        ("AuthenticAMD", "cpu", "float32", "onednn"),
        ("GenuineIntel", "cpu", "float32", "default"),
        ("", "cpu", "float32", "default"),
        ("AuthenticAMD", "cpu", "bfloat16", "default"),
        ("AuthenticAMD", "cuda", "float32", "default"),
    ],
)
def test_auto_is_chosen_from_cpu_and_library_facts(monkeypatch, vendor, device, dtype, expected):
    import torch

    monkeypatch.setattr(matmul, "cpu_vendor", lambda: vendor)
    monkeypatch.setattr(torch.backends.mkldnn, "is_available", lambda: True)
    monkeypatch.setattr(torch.backends.mkl, "is_available", lambda: True)
    assert matmul.favoured_path(device, dtype) == expected


def test_auto_never_picks_onednn_without_mkl_or_onednn(monkeypatch):
    import torch

    monkeypatch.setattr(matmul, "cpu_vendor", lambda: "AuthenticAMD")
    monkeypatch.setattr(torch.backends.mkl, "is_available", lambda: False)
    assert matmul.favoured_path("cpu", "float32") == "default"
    monkeypatch.setattr(torch.backends.mkl, "is_available", lambda: True)
    monkeypatch.setattr(torch.backends.mkldnn, "is_available", lambda: False)
    assert matmul.favoured_path("cpu", "float32") == "default"


@pytest.mark.parametrize("ranker", ["perplexity_gain", "pmi", "attention", "attribution"])
def test_default_keeps_the_committed_keys_and_onednn_has_its_own(ranker):
    import torch

    plain = Configuration.of(ranker, {"dtype": "float32"})
    assert "matmul" not in plain.params
    assert Configuration.of(ranker, {"dtype": "float32", "matmul": "default"}).params == plain.params
    auto = Configuration.of(ranker, {"dtype": "float32", "matmul": "auto"})
    assert auto.params.get("matmul", "default") in matmul.MATMUL_PATHS  # the path used, never auto
    if ranker == "attribution":
        assert auto.params == plain.params  # it needs gradients: auto stays on default
        return
    if torch.backends.mkldnn.is_available():
        onednn = Configuration.of(ranker, {"dtype": "float32", "matmul": "onednn"})
        assert onednn.config_id("xsum_pegasus") != plain.config_id("xsum_pegasus")
        assert "matmul=onednn" in onednn.label


@pytest.mark.parametrize(
    ("ranker", "params", "message"),
    [
        ("attribution", {"matmul": "onednn"}, "no backward pass"),
        ("pmi", {"matmul": "onednn", "dtype": "bfloat16"}, "float32 path"),
        ("pmi", {"matmul": "onednn", "device": "cuda"}, "CPU only"),
        (
            "pmi",
            {"matmul": "onednn", "backend": "openai", "base_url": "http://127.0.0.1:1/v1"},
            "backend=local",
        ),
    ],
)
def test_what_onednn_cannot_run_is_refused(ranker, params, message):
    with pytest.raises(ParameterError, match=message):
        create_ranker(ranker, **params)


def test_a_bad_path_is_refused():
    with pytest.raises(ParameterError, match="matmul"):
        Configuration.of("pmi", {"matmul": "fast"})


@pytest.fixture(scope="module")
def twins():
    """One tiny Llama registered twice: on torch's default kernels and on oneDNN."""
    tokenizer = tiny_tokenizer()
    for eager in (False, True):
        attn = "eager" if eager else "sdpa"
        for path in matmul.MATMUL_PATHS:
            model = tiny_llama(tokenizer, seed=3, attn_implementation=attn)
            register_loaded("tiny-matmul", model, tokenizer, eager_attention=eager, matmul=path)
    return tokenizer


@pytest.mark.parametrize("ranker", ["perplexity_gain", "pmi", "attention"])
def test_onednn_ranks_as_the_default_path_does(onednn, twins, ranker):
    pairs = [make_pair(SENTENCES, s, pair_id=f"hand__{i}") for i, s in enumerate(SUMMARIES)]
    scores = {
        path: create_ranker(ranker, model="tiny-matmul", device="cpu", matmul=path).score_batch(pairs)
        for path in matmul.MATMUL_PATHS
    }
    model = create_ranker(ranker, model="tiny-matmul", device="cpu", matmul="onednn").lm().model
    assert any(type(m).__name__ == "MkldnnLinear" for m in model.modules())
    for default, onednn in zip(scores["default"], scores["onednn"], strict=True):
        default, onednn = np.asarray(default), np.asarray(onednn)
        assert np.abs(default - onednn).max() <= 1e-4 * max(1.0, np.abs(default).max())
        from scipy.stats import spearmanr  # here, not at collection

        assert spearmanr(default, onednn).statistic == pytest.approx(1.0)
