"""Exact fused kernels (sourcesum.rankers.lm.kernels): a model computes the same numbers after
:func:`fuse_norms`, bit for bit, and norms with another formula are left alone."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import pytest
from support.models import tiny_llama, tiny_tokenizer

if TYPE_CHECKING:
    import torch


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


def _random_norm_weights(model: torch.nn.Module) -> None:
    import torch

    generator = torch.Generator().manual_seed(1)
    for module in model.modules():
        if type(module).__name__.endswith("RMSNorm"):
            weight = module.weight
            weight.data = (torch.rand(weight.shape, generator=generator) * 2).to(weight.dtype)


def _logits(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    import torch

    with torch.inference_mode():
        return model(input_ids=ids, attention_mask=mask).logits


@pytest.mark.parametrize("dtype_name", ["float32", "bfloat16"])
def test_fused_model_computes_the_same_logits_bit_for_bit(tokenizer, dtype_name):
    import torch
    from sourcesum.rankers.lm.kernels import FusedRMSNorm, fuse_norms

    dtype = getattr(torch, dtype_name)
    model = tiny_llama(tokenizer, dtype=dtype)
    _random_norm_weights(model)
    fused = copy.deepcopy(model)
    replaced = fuse_norms(fused)
    norms = 2 * model.config.num_hidden_layers + 1
    if dtype == torch.float32:
        assert replaced == norms  # float32: every norm is exact, so every norm is fused
    assert sum(isinstance(m, FusedRMSNorm) for m in fused.modules()) == replaced
    generator = torch.Generator().manual_seed(2)
    ids = torch.randint(5, tokenizer.vocab_size, (3, 41), generator=generator)
    mask = torch.ones_like(ids)
    mask[1, 30:] = 0
    assert torch.equal(_logits(model, ids, mask), _logits(fused, ids, mask))


def test_a_norm_with_another_formula_fails_the_probe_and_stays():
    import torch
    from sourcesum.rankers.lm.kernels import fuse_norms

    class OnePlusWeightRMSNorm(torch.nn.Module):
        """Gemma's variant: ``x / rms(x) * (1 + weight)``, a formula F.rms_norm does not compute."""

        def __init__(self, width: int):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.rand(width))
            self.eps = 1e-6

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight)

    model = torch.nn.Sequential(OnePlusWeightRMSNorm(24))
    assert fuse_norms(model) == 0
    assert isinstance(model[0], OnePlusWeightRMSNorm)


def test_loaded_models_are_fused(tokenizer):
    from sourcesum.rankers.lm.loading import register_loaded

    loaded = register_loaded("tiny-kernels", tiny_llama(tokenizer), tokenizer)
    assert loaded.model.fused_norms == 2 * loaded.model.config.num_hidden_layers + 1


def test_exact_rotary_reproduces_transformers_in_every_precision(tokenizer):
    import torch
    import transformers.models.llama.modeling_llama as llama
    from sourcesum.rankers.lm.kernels import ExactRotary, fuse_rotary

    original = llama.apply_rotary_pos_emb
    original = original.original if isinstance(original, ExactRotary) else original
    fused = ExactRotary(original)
    generator = torch.Generator().manual_seed(3)
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        q = torch.randn(2, 9, 7, 64, generator=generator).to(dtype).transpose(1, 2)
        k = torch.randn(2, 9, 3, 64, generator=generator).to(dtype).transpose(1, 2)
        angles = torch.rand(2, 9, 32, generator=generator) * 500
        angles = torch.cat([angles, angles], dim=-1)
        cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)
        for expected, got in zip(original(q, k, cos, sin), fused(q, k, cos, sin), strict=True):
            assert torch.equal(expected, got)
    # partial rotary (cos narrower than the heads) goes to the original
    narrow_cos, narrow_sin = cos[..., :32], sin[..., :32]
    calls = []
    fused_spy = ExactRotary(lambda *args, **kw: calls.append(args) or (args[0], args[1]))
    fused_spy(q, k, narrow_cos, narrow_sin)
    assert len(calls) == 1
    model = tiny_llama(tokenizer)
    fuse_rotary(model)
    assert isinstance(llama.apply_rotary_pos_emb, ExactRotary)
    assert fuse_rotary(model) == 0  # already installed: nothing to do
