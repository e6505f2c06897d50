"""Loading language models for the LM rankers: any hub name or local path, plus the offline
default from its verified dequantized copy (:mod:`~sourcesum.rankers.lm.weights`). Loaded
models are shared within the process; :func:`register_loaded` adds in-memory ones (tests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sourcesum.errors import SourceSumError
from sourcesum.rankers.device import quiet_loading, resolve_device
from sourcesum.rankers.lm.dtypes import resolve_dtype, resolve_dtype_name
from sourcesum.rankers.lm.weights import (
    DEFAULT_LM,
    PACKAGED_MODELS,
    REGISTERED,
    dequantized_folder,
    verified_weights,
)


@dataclass
class LoadedLM:
    """A model with its tokenizer; ``seq2seq`` tells encoder-decoder from decoder-only."""

    name: str
    model: Any
    tokenizer: Any
    seq2seq: bool
    device: str


_LOADED: dict[tuple[str, str, str, str, str], LoadedLM] = {}
"""Loaded models by (name, device, dtype, attention implementation, matmul path)."""


def prepare_model(model: Any, reduced_linears: Any = None, matmul: str = "default") -> None:
    """Exact fused norms and rotary embeddings (:mod:`~sourcesum.rankers.lm.kernels`), then,
    given a reduced torch dtype, Linear layers in it (:func:`~sourcesum.rankers.lm.precision.reduce_linears`),
    or with ``matmul="onednn"`` Linear layers on oneDNN (:func:`~sourcesum.rankers.lm.matmul.use_onednn`)."""
    from sourcesum.rankers.lm.kernels import fuse_norms, fuse_rotary

    fuse_norms(model)
    fuse_rotary(model)
    if reduced_linears is not None:
        from sourcesum.rankers.lm.precision import reduce_linears

        reduce_linears(model, reduced_linears)
    if matmul == "onednn":
        from sourcesum.rankers.lm.matmul import use_onednn

        use_onednn(model)


def _packaged_model(name: str, dtype: Any, attn: str) -> tuple[Any, Any, Any]:
    """Config, model and tokenizer of a packaged model, from its verified dequantized copy (the
    weights from the very bytes that were hashed).

    The weights are read and hashed in a thread (both release the GIL) while this thread imports
    the model's transformers modules (~1.5 s), so verifying costs little wall time. The config
    read to choose those modules is thrown away: config and tokenizer are read once verified."""
    from concurrent.futures import ThreadPoolExecutor

    from transformers import AutoConfig, AutoTokenizer, GenerationConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    with ThreadPoolExecutor(max_workers=1) as pool:
        verifying = pool.submit(verified_weights, name)
        try:
            _ = MODEL_FOR_CAUSAL_LM_MAPPING[type(AutoConfig.from_pretrained(dequantized_folder(name)))]
        except Exception:  # noqa: BLE001  # first use, or a damaged copy: imports happen below
            pass
        folder, state = verifying.result()
    config = AutoConfig.from_pretrained(folder)
    model_class: Any = MODEL_FOR_CAUSAL_LM_MAPPING[type(config)]
    model = model_class.from_pretrained(
        None, config=config, state_dict=state, dtype=dtype, attn_implementation=attn
    )
    if (folder / "generation_config.json").is_file():
        model.generation_config = GenerationConfig.from_pretrained(folder)
    return config, model, AutoTokenizer.from_pretrained(folder)


def load_lm(
    name: str,
    device: str = "auto",
    dtype: str = "float32",
    eager_attention: bool = False,
    linears_only: bool = False,
    matmul: str = "default",
) -> LoadedLM:
    """Load (once per process) a causal or seq2seq LM and its tokenizer, in eval mode.

    ``eager_attention`` selects ``attn_implementation="eager"``, needed for attention outputs.
    ``linears_only`` with a reduced ``dtype`` loads the model in float32 and runs only its
    Linear layers in ``dtype`` (:mod:`sourcesum.rankers.lm.precision`); otherwise the whole
    model is in ``dtype``. ``matmul`` is a resolved path of :mod:`~sourcesum.rankers.lm.matmul`
    (``default`` or ``onednn``). Packaged models load from their verified dequantized copy.
    """
    device = resolve_device(device)
    dtype = resolve_dtype_name(dtype, device)
    reduce = linears_only and dtype != "float32"
    attn = "eager" if eager_attention else "sdpa"
    key = (name, device, dtype + ("-linears" if reduce else ""), attn, matmul)
    if key in _LOADED:
        return _LOADED[key]
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    weights = resolve_dtype("float32" if reduce else dtype, device)
    try:
        with quiet_loading():
            if name in PACKAGED_MODELS:
                config, model, tokenizer = _packaged_model(name, weights, attn)
            else:
                config = AutoConfig.from_pretrained(name)
                # Any: mypy cannot call from_pretrained on the join of transformers' two auto classes
                loader: Any = (
                    AutoModelForSeq2SeqLM
                    if getattr(config, "is_encoder_decoder", False)
                    else AutoModelForCausalLM
                )
                model = loader.from_pretrained(name, dtype=weights, attn_implementation=attn)
                tokenizer = AutoTokenizer.from_pretrained(name)
    except OSError as exc:
        raise SourceSumError(
            f"cannot load model {name!r} ({exc}); without internet use a local path or the "
            f"offline default {DEFAULT_LM}"
        ) from exc
    seq2seq = bool(getattr(config, "is_encoder_decoder", False))
    model.to(device).eval()
    prepare_model(model, resolve_dtype(dtype, device) if reduce else None, matmul)
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
    matmul: str = "default",
) -> LoadedLM:
    """Make an in-memory model loadable by ``name`` (tests build tiny models from configs);
    ``linears_only`` with a reduced ``dtype``: a float32 ``model`` whose Linear layers this
    converts in place, as :func:`load_lm` does (likewise ``matmul="onednn"``). Its
    :func:`weights_identity` says in-memory, unverified: no file identifies its weights."""
    reduce = linears_only and dtype != "float32"
    prepare_model(model, resolve_dtype(dtype, device) if reduce else None, matmul)
    seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
    loaded = LoadedLM(name=name, model=model.eval(), tokenizer=tokenizer, seq2seq=seq2seq, device=device)
    key = (
        name,
        device,
        dtype + ("-linears" if reduce else ""),
        "eager" if eager_attention else "sdpa",
        matmul,
    )
    _LOADED[key] = loaded
    REGISTERED.add(name)
    return loaded
