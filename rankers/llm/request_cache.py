"""A persistent cache of server responses, so an interrupted run never repeats a paid request.

Responses live beside the score store (``<store>/llm_judge/requests/``), keyed by the sha256 of
the canonical JSON of (endpoint URL, request body). They are spread over 4,096 shard files
(``<first three hex digits>.json``, a JSON object key -> response); each response is saved as
soon as it arrives: under a file lock the shard is re-read, the response added and the shard
rewritten atomically (as :meth:`sourcesum.store.ScoreStore.save` does), so concurrent threads
and processes only ever add entries and a crash never leaves a torn file.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from sourcesum.errors import SourceSumError
from sourcesum.util.files import update_json_locked
from sourcesum.util.hashing import sha256_hex


def request_key(url: str, body: dict[str, Any]) -> str:
    """sha256 hex of the compact canonical JSON of ``[url, body]``
    (:func:`sourcesum.util.hashing.sha256_hex` with ``compact=True``)."""
    return sha256_hex([url, body], compact=True)


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
        shard = key[:3]
        with self._lock:
            self._shards[shard] = update_json_locked(
                self._path(shard),
                {key: value},
                read=lambda _path: self._read(shard),
                render=lambda data: json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n",
            )
