"""Device and offline-model resolution (sourcesum.rankers.device), and quiet model loading."""

from __future__ import annotations

import pytest
from sourcesum.rankers import create_ranker
from sourcesum.rankers.device import resolve_device, resolve_sentence_model

pytestmark = pytest.mark.slow  # loads the real MiniLM model


def test_device_and_offline_model_resolution(monkeypatch):
    import torch

    assert resolve_device("cpu") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert resolve_device("auto") == "mps"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    assert resolve_sentence_model("all-MiniLM-L6-v2").endswith("model")
    assert resolve_sentence_model("org/other-model") == "org/other-model"


def test_loading_models_draws_no_progress_bar(capfd):
    """transformers' "Loading weights" bar would nest in the runner's bar and leave ESC[A codes."""
    from transformers.utils import logging

    assert logging.is_progress_bar_enabled()
    create_ranker("embedding", device="cpu").encoder()
    create_ranker("bertscore", device="cpu").scorer()
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "\x1b[A" not in err, err
    assert logging.is_progress_bar_enabled()  # restored afterwards
