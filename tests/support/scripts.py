"""Running a script of ``scripts/`` in the test process, as ``python scripts/NAME ARGS`` runs it."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest


def run_as_main(script: Path, args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ``script`` as ``__main__`` with ``sys.argv`` = ``[script, *args]`` and its folder first
    on ``sys.path``, as Python runs a script; the libraries it imports stay loaded for the suite,
    where a subprocess would import them again. What it prints is the caller's (``capsys``);
    ``SystemExit`` propagates."""
    monkeypatch.setattr(sys, "argv", [str(script), *args])
    monkeypatch.syspath_prepend(str(script.parent))
    runpy.run_path(str(script), run_name="__main__")
