"""``sourcesum migrate``: rewrite entries of older formats in the current one."""

from __future__ import annotations

import json
from pathlib import Path

from sourcesum.errors import ScoreFileError
from sourcesum.store.entry import FORMAT, ScoreEntry
from sourcesum.util.files import lock_path, write_text_atomic


def migrate(root: Path, libraries: dict[str, dict[str, str]] | None = None) -> list[Path]:
    """Rewrite the entries of older formats under ``root`` in the current one: scores, keys and
    every recorded field unchanged (format 1 had no ``libraries``: ``libraries`` maps ranker
    names to the versions to record), the checksums computed from them. Returns the files
    rewritten; entries already in the current format are left alone. Holds the store's
    migration lock throughout (two migrations of one store run one after the other) and each
    entry's own lock (the one :meth:`ScoreStore.save` takes) while it reads it, once, and
    rewrites it."""
    from filelock import FileLock

    root = Path(root)
    rewritten = []
    with FileLock(str(lock_path(root / "migrate"))):
        for path in sorted(root.glob("*/*.json")):
            with FileLock(str(lock_path(path))):
                try:
                    text = path.read_bytes().decode("utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise ScoreFileError(f"{path}: cannot be read as text ({exc})") from exc
                entry = ScoreEntry.from_json(text, path, allow_legacy=True)  # verified, current or not
                if json.loads(text)["format"] == FORMAT:
                    continue
                if libraries and entry.ranker in libraries and not entry.libraries:
                    entry.libraries = dict(libraries[entry.ranker])
                write_text_atomic(path, entry.to_json())
                rewritten.append(path)
    return rewritten
