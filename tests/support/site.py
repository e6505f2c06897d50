"""The static site as ``sourcesum site`` writes it, for the site tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from sourcesum import paths
from sourcesum.board import collect_declared, read_declaration
from sourcesum.cli import main
from sourcesum.store.stores import ScoreStore


def cli_site(root: Path, declaration_text: str, splits: str):
    """(site folder, leaderboard, CLI arguments that select it): the site written by
    ``sourcesum site`` from a temporary store (the committed one is swapped for an empty folder,
    the statistics memo goes to a temporary cache), with lead, random, bm25 and oracle run on
    ``splits``."""
    scores, declaration, out = root / "scores", root / "leaderboard.toml", root / "site"
    declaration.write_text(declaration_text)
    selection = ["--declaration", str(declaration), "--scores-dir", str(scores)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(paths, "COMMITTED_SCORES_DIR", root / "committed")
        patch.setenv("SOURCESUM_CACHE_DIR", str(root / "cache"))
        run = ["run", "--ranker", "lead,random,bm25,oracle", "--split", splits, "--scores-dir", str(scores)]
        assert main([*run, "--no-progress"]) == 0
        assert main(["site", "-o", str(out)] + selection) == 0
        board = collect_declared(read_declaration(declaration), ScoreStore(scores, writable=False))
    return out, board, selection
