"""Where things live: the data manifest, local data copies, score stores and caches.

Environment variables (all optional):

- ``SOURCESUM_DATA_DIR``: a folder holding the SourceSum JSON files (checked first).
- ``SOURCESUM_SCORES_DIR``: the score store (default ``data/scores`` in the project).
- ``SOURCESUM_CACHE_DIR``: caches that are safe to delete (default ``~/.cache/sourcesum``).
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_ROOT = PROJECT_ROOT / "data"
MANIFEST_PATH = DATA_ROOT / "manifest.json"
DOWNLOAD_DIR = DATA_ROOT / "sourcesum"
LEADERBOARD_PATH = PROJECT_ROOT / "leaderboard.md"


def env_data_dir() -> Path | None:
    """The folder named by ``$SOURCESUM_DATA_DIR``, if set."""
    value = os.environ.get("SOURCESUM_DATA_DIR")
    return Path(value).expanduser() if value else None


def scores_dir() -> Path:
    """The score store: ``$SOURCESUM_SCORES_DIR`` or the committed ``data/scores``."""
    value = os.environ.get("SOURCESUM_SCORES_DIR")
    return Path(value).expanduser() if value else DATA_ROOT / "scores"


def cache_dir() -> Path:
    """Deletable caches (dequantized models, leaderboard statistics): ``$SOURCESUM_CACHE_DIR``."""
    value = os.environ.get("SOURCESUM_CACHE_DIR")
    return Path(value).expanduser() if value else Path.home() / ".cache" / "sourcesum"
