"""The LM rankers' precision names: which dtype ``auto`` means on this device (no torch import
unless a CUDA device must be asked)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sourcesum.errors import SourceSumError
from sourcesum.rankers.device import resolve_device

DTYPES = ("float32", "bfloat16", "float16", "auto")


def cpu_has_native_bf16() -> bool:
    """True when the CPU computes bfloat16 in hardware (x86 flags ``amx_bf16`` or ``avx512_bf16``
    in ``/proc/cpuinfo``); other CPUs would emulate it, slower and no more exact than float32."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def resolve_dtype_name(dtype: str, device: str = "auto") -> str:
    """``dtype``, or for ``"auto"`` the precision that the resolved ``device`` runs natively:
    ``bfloat16`` on a CUDA GPU with bf16 support or a CPU with native bf16
    (:func:`cpu_has_native_bf16`), else ``float32``. The answer keys the score cache, so
    scores computed in one precision are never read as the other's."""
    if dtype not in DTYPES:
        raise SourceSumError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    if dtype != "auto":
        return dtype
    device = resolve_device(device)
    if device == "cuda":
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    return "bfloat16" if device == "cpu" and cpu_has_native_bf16() else "float32"


def resolve_dtype(dtype: str, device: str) -> Any:  # a torch.dtype
    """The torch dtype of :func:`resolve_dtype_name`."""
    import torch

    return getattr(torch, resolve_dtype_name(dtype, device))
