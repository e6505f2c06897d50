"""Reduced precision where it pays: the Linear layers' matmuls, nothing else.

``reduce_linears(model, dtype)`` swaps every ``torch.nn.Linear`` except the output layer for a
:class:`ReducedLinear` that keeps its weights in ``dtype`` (bfloat16 or float16) and computes
``linear(x.to(dtype), W, b).to(x.dtype)``: the matmul runs in reduced precision (accumulated in
float32 by the CPU and GPU kernels) while the residual stream, norms, rotary embeddings,
attention and logits stay in float32. Almost all of a small LM's FLOPs are in those matmuls, so
this keeps most of the speed of a full bfloat16 model; rounding each layer's output and the
residual stream to 8 significant bits, which a full bfloat16 model does, is what moves the
likelihood differences these rankers compute (measured in ``scripts/bench_lm_speed.py``).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F


class ReducedLinear(torch.nn.Module):
    """``y = (x_r W_r^T + b_r)`` in the reduced dtype ``r``, returned in ``x``'s dtype."""

    def __init__(self, linear: torch.nn.Linear, dtype: torch.dtype):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight = torch.nn.Parameter(linear.weight.detach().to(dtype), requires_grad=False)
        bias = None if linear.bias is None else linear.bias.detach().to(dtype)
        self.bias = None if bias is None else torch.nn.Parameter(bias, requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x.to(self.weight.dtype), self.weight, self.bias).to(x.dtype)


def reduce_linears(model: Any, dtype: torch.dtype) -> int:
    """Replace the Linear layers of ``model`` (a float32 model; the output layer excepted) by
    :class:`ReducedLinear` in ``dtype``, in place; returns how many were replaced."""
    head = model.get_output_embeddings()
    replaced = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear) and child is not head:
                setattr(module, name, ReducedLinear(child, dtype))
                replaced += 1
    model.reduced_linears_dtype = dtype
    return replaced


def computes_in_float32(model: Any) -> bool:
    """True for a float32 model none of whose layers :func:`reduce_linears` converted."""
    return getattr(model, "dtype", torch.float32) == torch.float32 and not hasattr(
        model, "reduced_linears_dtype"
    )
