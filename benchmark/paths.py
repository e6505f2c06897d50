"""Where things live: the data manifest, local data copies, score stores and caches.

Environment variables (all optional):

- ``SOURCESUM_DATA_DIR``: a folder holding the SourceSum JSON files (checked first).
- ``SOURCESUM_PUBLISHED_DIR``: a folder holding the paper's published outputs (checked first).
- ``SOURCESUM_SCORES_DIR``: your score store, where ``run`` writes (default
  ``$XDG_DATA_HOME/sourcesum/scores``, i.e. ``~/.local/share/sourcesum/scores``). Every command
  reads it on top of the committed, read-only ``data/scores``, except the committed board
  (``leaderboard.toml`` without ``--scores-dir``), which reads ``data/scores`` alone.
- ``SOURCESUM_CACHE_DIR``: caches that are safe to delete (default ``~/.cache/sourcesum``).
- ``SOURCESUM_CONFIG_DIR``: the user's own settings, e.g. the memo key (default
  ``$XDG_CONFIG_HOME/sourcesum``, i.e. ``~/.config/sourcesum``).
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_ROOT = PROJECT_ROOT / "data"
MANIFEST_PATH = Path(__file__).resolve().parent / "data" / "manifest.json"
"""``data/manifest.json``, read through ``benchmark/data/manifest.json``, a link to it that the
wheel holds as a copy: an installed package verifies its downloads without a checkout."""
DOWNLOAD_DIR = DATA_ROOT / "sourcesum"
COMMITTED_SCORES_DIR = DATA_ROOT / "scores"
PUBLISHED_DIR = DATA_ROOT / "published"
LEADERBOARD_PATH = PROJECT_ROOT / "leaderboard.md"
DECLARATION_PATH = PROJECT_ROOT / "leaderboard.toml"


def env_dir(variable: str) -> Path | None:
    """The folder named by the environment variable ``variable``, if set."""
    value = os.environ.get(variable)
    return Path(value).expanduser() if value else None


def user_scores_dir() -> Path:
    """The user's writable score store: ``$SOURCESUM_SCORES_DIR``, else
    ``$XDG_DATA_HOME/sourcesum/scores`` (``~/.local/share/sourcesum/scores``)."""
    value = os.environ.get("SOURCESUM_SCORES_DIR")
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "sourcesum" / "scores"


def cache_dir() -> Path:
    """Deletable caches (dequantized models, leaderboard statistics): ``$SOURCESUM_CACHE_DIR``."""
    value = os.environ.get("SOURCESUM_CACHE_DIR")
    return Path(value).expanduser() if value else Path.home() / ".cache" / "sourcesum"


def config_dir() -> Path:
    """The user's settings (the memo key, :mod:`sourcesum.util.memo`): ``$SOURCESUM_CONFIG_DIR``, else
    ``$XDG_CONFIG_HOME/sourcesum`` (``~/.config/sourcesum``)."""
    value = os.environ.get("SOURCESUM_CONFIG_DIR")
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "sourcesum"


def shown(path: str | Path) -> str:
    """``path`` as outputs name it, never revealing the user's home folder: relative to the
    checkout when inside it, ``~/...`` when under the home folder, else relative to the checkout
    (``../...``)."""
    resolved = Path(path).expanduser().resolve()
    if resolved.is_relative_to(PROJECT_ROOT):
        return str(resolved.relative_to(PROJECT_ROOT)) or "."
    home = Path.home().resolve()
    if resolved.is_relative_to(home):
        return str(Path("~") / resolved.relative_to(home))
    return os.path.relpath(resolved, PROJECT_ROOT)
