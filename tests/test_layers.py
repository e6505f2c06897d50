"""Layers: reporting commands import no model library (torch, transformers,
sentence-transformers) and no plotting library unless they draw."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sourcesum.data import load_split

HEAVY = ("torch", "transformers", "sentence_transformers", "matplotlib")


def _imported(argv: list[str], env: dict[str, str] | None = None) -> list[str]:
    script = (
        "import sys, sourcesum.cli as c; code = c.main(sys.argv[1:]); "
        f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules)); sys.exit(code)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=600, env=env
    )
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("HEAVY="))
    return [m for m in line[len("HEAVY=") :].split(",") if m]


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--json"],
        # the other commands: full suite only (each a CLI subprocess reading the whole store)
        pytest.param(["leaderboard", "--format", "json", "-o", "-"], marks=pytest.mark.slow),
        pytest.param(
            ["compare", "bm25", "lead", "--split", "xsum_pegasus", "--resamples", "200"],
            marks=pytest.mark.slow,
        ),
        pytest.param(["show", "PAIR"], marks=pytest.mark.slow),
    ],
)
def test_reporting_commands_import_no_model_library(argv):
    argv = [load_split("xsum_pegasus").pairs[0].id if a == "PAIR" else a for a in argv]
    assert _imported(argv) == []


@pytest.mark.slow  # the whole declared board from an empty cache: every statistic computed
def test_drawing_the_plot_imports_matplotlib_only(tmp_path):
    env = {**os.environ, "SOURCESUM_CACHE_DIR": str(tmp_path / "cache")}
    argv = ["leaderboard", "-o", str(tmp_path / "board.md")]
    assert _imported(argv, env) == ["matplotlib"]
    drawn = (tmp_path / "leaderboard.png").read_bytes()
    assert _imported(argv, env) == []  # an unchanged board reuses the memoised plot
    assert (tmp_path / "leaderboard.png").read_bytes() == drawn
