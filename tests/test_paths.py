"""Paths as the outputs show them (sourcesum.paths): relative to the checkout or the home
folder, never absolute."""

from __future__ import annotations

import re
from pathlib import Path

from sourcesum import paths
from support.cli import run_cli
from support.store import fill


def test_boards_name_stores_relative_to_the_checkout_or_home_never_absolute(tmp_path, capsys, scores_dir):
    fill(scores_dir)
    (scores_dir / "lead" / "synth_alpha_sys.bad.json").write_text("{}")
    out = tmp_path / "b.md"
    args = ("leaderboard", "--all", "--dataset", "synthnews", "--scores-dir", str(scores_dir), "-o", str(out))
    assert run_cli(capsys, *args)[0] == 0
    board = out.read_text()
    assert re.search(r"(?<![.\w])" + re.escape(str(tmp_path)), board) is None  # ../../tmp/... only
    assert paths.shown(scores_dir) in board and paths.shown(scores_dir).startswith(("~", ".."))
    assert paths.shown(paths.PROJECT_ROOT / "data" / "scores") == "data/scores"
    assert paths.shown(Path.home() / "x" / "y") == "~/x/y"
