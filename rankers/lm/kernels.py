"""Exact fused replacements for slow eager operations of Hugging Face causal LMs.

Eager RMSNorm in transformers (``x * rsqrt(mean(x²) + eps)`` then ``weight * ...``) runs six
memory-bound passes over the hidden states; ``torch.nn.functional.rms_norm`` computes the same
formula in one kernel. :func:`fuse_norms` swaps a model's RMSNorm modules for
:class:`FusedRMSNorm`, but only where the swap is *exact*: each candidate is run on probe
inputs beside its replacement and kept unless the outputs are equal bit for bit (a norm with
another formula, such as Gemma's ``1 + weight``, fails the probe and stays as it is). So a
float32 model computes the same numbers, only faster, and committed float32 scores stay
reproducible.

Rotary position embeddings (``q·cos + rotate_half(q)·sin``) build ``rotate_half`` with a negation
and a concatenation before two more full passes; :class:`ExactRotary` computes each half
directly (``q₁c − q₂s`` and ``q₂c + q₁s``), the same IEEE operations on the same values, so the
result is bit-identical in any precision. transformers calls the function from the model's
module namespace, so :func:`fuse_rotary` replaces it there, for that architecture, once it has
reproduced the original on probes (and calls the original for shapes it does not handle, e.g.
partial rotary dimensions).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

_PROBE_SHAPES = ((1, 1), (2, 7), (3, 64), (1, 517))
"""(batch, positions) of the probe inputs: odd widths and a long row catch blocked reductions."""


class FusedRMSNorm(torch.nn.Module):
    """``y = weight · x / sqrt(mean(x²) + eps)`` over the last dimension, in one kernel."""

    def __init__(self, weight: torch.nn.Parameter, eps: float):
        super().__init__()
        self.weight, self.eps = weight, float(eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def _norm_epsilon(module: torch.nn.Module) -> float | None:
    for name in ("variance_epsilon", "eps", "epsilon"):
        value = getattr(module, name, None)
        if isinstance(value, float):
            return value
    return None


@torch.inference_mode()
def _reproduces(original: torch.nn.Module, fused: FusedRMSNorm, scale: float) -> bool:
    """Whether ``fused`` returns exactly ``original``'s output on random probes of the weight's
    dtype (scaled like hidden states), on every probe shape."""
    width = fused.weight.shape[-1]
    generator = torch.Generator().manual_seed(0)
    for batch, positions in _PROBE_SHAPES:
        probe = torch.randn(batch, positions, width, generator=generator) * scale
        probe = probe.to(device=fused.weight.device, dtype=fused.weight.dtype)
        if not torch.equal(original(probe), fused(probe)):
            return False
    return True


def fuse_norms(model: Any) -> int:
    """Replace, in place, every RMSNorm module of ``model`` (class name ending in ``RMSNorm``,
    a 1-d ``weight`` and an epsilon) whose output :class:`FusedRMSNorm` reproduces bit for bit
    on probes; returns how many were replaced."""
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if not type(child).__name__.endswith("RMSNorm"):
                continue
            weight, eps = getattr(child, "weight", None), _norm_epsilon(child)
            if not isinstance(weight, torch.nn.Parameter) or weight.dim() != 1 or eps is None:
                continue
            fused = FusedRMSNorm(weight, eps)
            if all(_reproduces(child, fused, scale) for scale in (1.0, 30.0)):
                setattr(parent, name, fused)
                replaced += 1
    model.fused_norms = replaced
    return replaced


class ExactRotary:
    """``apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1)`` of transformers, computed per half:
    ``out[:h] = q[:h]·cos[:h] − q[h:]·sin[:h]``, ``out[h:] = q[h:]·cos[h:] + q[:h]·sin[h:]``.
    (``(−b)·s = −(b·s)`` and ``a + (−c) = a − c`` exactly, so this rounds exactly as the original.)"""

    def __init__(self, original: Callable[..., Any]):
        self.original = original

    @staticmethod
    def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        out = x * cos
        out[..., :half] -= x[..., half:] * sin[..., :half]
        out[..., half:] += x[..., :half] * sin[..., half:]
        return out

    def __call__(self, q: Any, k: Any, cos: Any, sin: Any, unsqueeze_dim: int = 1, **kwargs: Any) -> Any:
        width = q.shape[-1]
        if kwargs or width % 2 or cos.shape[-1] != width or k.shape[-1] != width:
            return self.original(q, k, cos, sin, unsqueeze_dim, **kwargs)
        cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
        return self._rotate(q, cos, sin), self._rotate(k, cos, sin)


@torch.inference_mode()
def _rotary_reproduces(original: Callable[..., Any], fused: ExactRotary, head_dim: int) -> bool:
    generator = torch.Generator().manual_seed(0)
    for dtype in (torch.float32, torch.bfloat16):
        for batch, positions in _PROBE_SHAPES:
            # q and k as the attention layers make them: (batch, heads, positions, head_dim) views
            q = torch.randn(batch, positions, 4, head_dim, generator=generator).to(dtype).transpose(1, 2)
            k = torch.randn(batch, positions, 2, head_dim, generator=generator).to(dtype).transpose(1, 2)
            angles = torch.rand(batch, positions, head_dim // 2, generator=generator) * 100
            angles = torch.cat([angles, angles], dim=-1)
            cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)
            expected, got = original(q, k, cos, sin), fused(q, k, cos, sin)
            if not (torch.equal(expected[0], got[0]) and torch.equal(expected[1], got[1])):
                return False
    return True


def fuse_rotary(model: Any) -> int:
    """Replace ``apply_rotary_pos_emb`` in the module namespace of each attention class of
    ``model`` by :class:`ExactRotary` where it reproduces the original on probes; returns how
    many namespaces were changed (0 or 1 for one model). The namespace is shared by every
    model of that architecture in the process, which is why the replacement must be exact."""
    config = model.config
    head_dim = getattr(config, "head_dim", None)
    if head_dim is None:
        try:
            head_dim = config.hidden_size // config.num_attention_heads
        except (AttributeError, TypeError, ZeroDivisionError):
            return 0
    changed = 0
    namespace: Any  # a module, whose apply_rotary_pos_emb is replaced below
    for namespace in {sys.modules[type(m).__module__] for m in model.modules()}:
        original = getattr(namespace, "apply_rotary_pos_emb", None)
        if original is None or isinstance(original, ExactRotary) or not callable(original):
            continue
        fused = ExactRotary(original)
        if _rotary_reproduces(original, fused, head_dim):
            namespace.apply_rotary_pos_emb = fused
            changed += 1
    return changed
