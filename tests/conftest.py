"""Shared fixtures: real SourceSum data (from $SOURCESUM_DATA_DIR or ../shared/sourcesum), the
paper's published outputs ($SOURCESUM_PUBLISHED_DIR or ../shared/sourcesum-published) and a
temporary score store per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sourcesum.paths import PROJECT_ROOT

for variable, folder in (
    ("SOURCESUM_DATA_DIR", "sourcesum"),
    ("SOURCESUM_PUBLISHED_DIR", "sourcesum-published"),
):
    shared = PROJECT_ROOT.parent / "shared" / folder
    if not os.environ.get(variable) and shared.is_dir():
        os.environ[variable] = str(shared)
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pytest_configure(config: pytest.Config) -> None:
    """The fast loop (``-m "not slow"``) runs property tests on fewer examples (tests/helpers.py)
    and torch on one thread unless ``OMP_NUM_THREADS`` says otherwise: its tiny models gain
    nothing from a second thread, and on cores shared with other jobs two threads spin against
    them (a tiny-model test took 29 s with two threads, 5.7 s with one, at load average 2.5)."""
    if "not slow" in (config.getoption("markexpr") or ""):
        os.environ["SOURCESUM_QUICK_TESTS"] = "1"
        os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture
def scores_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user score store, exported as $SOURCESUM_SCORES_DIR for the CLI, over an empty
    stand-in for the committed store (so tests compute instead of reading data/scores)."""
    from sourcesum import paths

    path = tmp_path / "scores"
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(path))
    monkeypatch.setattr(paths, "COMMITTED_SCORES_DIR", tmp_path / "committed")
    return path


@pytest.fixture
def data_dir() -> Path:
    return Path(os.environ["SOURCESUM_DATA_DIR"])
