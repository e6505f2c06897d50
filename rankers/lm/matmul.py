"""Which kernels run the Linear layers' matmuls: torch's own dispatch or oneDNN.

Almost all of a small LM's work is in its Linear layers, and torch's CPU wheels ship two
libraries that can run them in float32:

* ``default``: ``torch.nn.functional.linear`` as torch dispatches it (on x86 wheels MKL's sgemm;
  cuBLAS on a GPU). MKL picks its fastest kernels on Intel CPUs only.
* ``onednn``: every Linear layer, the output layer included, converted by
  ``torch.utils.mkldnn.MkldnnLinear`` (oneDNN inner products, weights pre-packed, dense inputs
  converted on the way in and out). CPU and float32 only, and it has no backward pass, so
  rankers that need gradients (``attribution``) refuse it.

The two round differently (each output within a few 1e-6 of the other), so scores computed
on one path are not the other's: a non-default ``matmul`` is part of an entry's key.

``matmul=auto`` resolves, when the ranker is made, to a path chosen from facts that load cannot
sway (:func:`favoured_path`: the device, the dtype, the CPU's vendor and which libraries the
installed torch was built with), never from a timing, so two runs on one machine always agree.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

MATMUL_PATHS = ("default", "onednn")
MATMUL_CHOICES = (*MATMUL_PATHS, "auto")


@functools.cache
def cpu_vendor() -> str:
    """The ``vendor_id`` of ``/proc/cpuinfo`` (``GenuineIntel``, ``AuthenticAMD``, ...); empty
    where there is none (not Linux, or not x86)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith("vendor_id"):
            return line.split(":", 1)[1].strip()
    return ""


def onednn_problem(device: str, dtype: str) -> str:
    """Why ``matmul=onednn`` cannot run on ``device`` in ``dtype`` (empty: it can)."""
    import torch

    if device != "cpu":
        return f"oneDNN's Linear runs on the CPU only (device {device})"
    if dtype != "float32":
        return f"it is a float32 path ({dtype} Linear layers already run on oneDNN on CPUs)"
    if not torch.backends.mkldnn.is_available():  # type: ignore[no-untyped-call]
        return "the installed torch was built without oneDNN"
    return ""


def favoured_path(device: str, dtype: str) -> str:
    """The path ``matmul=auto`` takes: ``onednn`` where it can run (:func:`onednn_problem`) and
    torch's BLAS is MKL on a CPU that is not Intel's (MKL dispatches its fast kernels on Intel
    CPUs only; on 2-core AMD EPYC machines oneDNN ran SmolLM2's layer shapes 1.25-2x faster, on a
    2-core Intel Xeon MKL ran them 1.6x faster than oneDNN, see
    the performance page); ``default`` everywhere else."""
    import torch

    if onednn_problem(device, dtype):
        return "default"
    mkl = bool(torch.backends.mkl.is_available())  # type: ignore[no-untyped-call]
    return "onednn" if mkl and cpu_vendor() not in ("", "GenuineIntel") else "default"


def use_onednn(model: Any) -> int:
    """Replace every ``torch.nn.Linear`` of ``model`` (float32, on the CPU) by oneDNN's
    ``MkldnnLinear`` in place; returns how many were replaced. Tied weights are copied: the
    embedding keeps its own."""
    import warnings

    import torch

    with warnings.catch_warnings():  # its TorchScript decorators are deprecated; the kernels are not
        warnings.simplefilter("ignore", DeprecationWarning)
        from torch.utils.mkldnn import MkldnnLinear

    replaced = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(module, name, MkldnnLinear(child, torch.float32))
                replaced += 1
    model.matmul_path = "onednn"
    return replaced
