"""Fixtures of the command tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sourcesum import paths
from sourcesum.rankers import RANKERS
from support.rankers import LongestFirst
from support.store import fill_stacked


@pytest.fixture
def stacked(scores_dir: Path) -> Iterator[tuple[Path, Path]]:
    """(committed, yours): the stand-in committed store holding lead, random and bm25, and your
    store (``$SOURCESUM_SCORES_DIR``) holding only the user ranker ``test_longest``
    (:func:`support.store.fill_stacked`)."""
    RANKERS.register(LongestFirst)
    try:
        fill_stacked(paths.COMMITTED_SCORES_DIR, scores_dir, LongestFirst.name)
        yield paths.COMMITTED_SCORES_DIR, scores_dir
    finally:
        RANKERS.unregister(LongestFirst.name)
