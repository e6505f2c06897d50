"""The committed board rendered once per test run from an empty memo folder, shared by the
pytest-xdist workers: the render's result (``tests/e2e/test_leaderboard.py`` checks it) and the
memo it filled, which the tests that need the board's statistics again (the committed site's
budgets, ``learned_vs_published.py``, seed 0 of the seed test) read warm instead of computing
them each time (about 70 CPU s each)."""

from __future__ import annotations

import contextlib
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CommittedRender:
    """``sourcesum leaderboard -o board`` run in-process with ``SOURCESUM_CACHE_DIR=cache``,
    ``cache`` empty before it: its exit status, its standard error, the board it wrote and the
    memo folder it filled."""

    code: int
    stderr: str
    board: Path
    cache: Path


def run_root(basetemp: Path) -> Path:
    """A folder of this test run that every xdist worker shares (each worker's basetemp lies in
    the run's folder; a run without workers has its own basetemp)."""
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


def render_committed_once(root: Path) -> CommittedRender:
    """The first caller under ``root`` renders the committed board; the others (under the same
    lock, so never while it runs) read what it recorded."""
    import pytest
    from filelock import FileLock
    from sourcesum.cli import main

    folder = root / "committed-board"
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "render.json"
    with FileLock(str(folder / "render.lock")):
        if not record.exists():
            board, cache = folder / "leaderboard.md", folder / "cache"
            err = io.StringIO()
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("SOURCESUM_CACHE_DIR", str(cache))
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                    code = main(["leaderboard", "-o", str(board)])
            record.write_text(
                json.dumps({"code": code, "stderr": err.getvalue(), "board": str(board), "cache": str(cache)})
            )
        done = json.loads(record.read_text())
    return CommittedRender(done["code"], done["stderr"], Path(done["board"]), Path(done["cache"]))
