"""A persistent cache of server responses, so an interrupted run never repeats a paid request.

Responses live beside the score store (``<store>/llm_judge/requests/``), keyed by the sha256 of
the canonical JSON of (endpoint URL, request body). They are spread over 4,096 shard files
(``<first three hex digits>.json``, a JSON object key -> response); each response is saved as
soon as it arrives: under a file lock the shard is re-read, the response added and the shard
rewritten atomically (as :meth:`sourcesum.store.ScoreStore.save` does), so concurrent threads
and processes only ever add entries and a crash never leaves a torn file.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from sourcesum.atomic import write_text_atomic
from sourcesum.errors import SourceSumError


def request_key(url: str, body: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON of ``[url, body]``."""
    text = json.dumps([url, body], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RequestCache:
    """Responses by request key, persisted in ``root`` (see the module doc)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._shards: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _path(self, shard: str) -> Path:
        return self.root / f"{shard}.json"

    def _read(self, shard: str) -> dict[str, Any]:
        path = self._path(shard)
        if not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SourceSumError(f"{path}: not a valid request-cache shard ({exc}); delete it") from exc
        if not isinstance(data, dict):
            raise SourceSumError(f"{path}: not a valid request-cache shard; delete it")
        return data

    def get(self, key: str) -> Any | None:
        shard = key[:3]
        with self._lock:
            if shard not in self._shards:
                self._shards[shard] = self._read(shard)
            return self._shards[shard].get(key)

    def put(self, key: str, value: Any) -> None:
        from filelock import FileLock

        shard = key[:3]
        path = self._path(shard)
        self.root.mkdir(parents=True, exist_ok=True)
        with self._lock, FileLock(str(self.root / f".{shard}.json.lock")):
            data = self._read(shard)
            data[key] = value
            write_text_atomic(path, json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n")
            self._shards[shard] = data
