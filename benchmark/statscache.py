"""A persistent memo of bootstrap intervals and randomization p-values, keyed by their inputs.

The key of a value is the sha256 of everything it depends on: the statistic's name and code
version, the resample count and seed, the exact bytes of the per-pair value arrays and the
resampling groups. An unchanged leaderboard therefore reuses every number, a changed entry
recomputes only what it touches, and a stale value can never be returned. The memo lives in
``$SOURCESUM_CACHE_DIR/stats.json`` (safe to delete) and is saved atomically under a file lock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sourcesum import paths
from sourcesum.files import read_json_object_or_empty, update_json_locked

CODE_VERSION = "1"
"""Bump when :mod:`sourcesum.stats` changes what it computes."""


def stats_key(
    name: str, resamples: int, seed: int, arrays: Sequence[np.ndarray], groups: Sequence[Sequence[str]]
) -> str:
    """sha256 over a statistic's name, code version, parameters and exact inputs."""
    digest = hashlib.sha256(f"{name}|{CODE_VERSION}|{resamples}|{seed}".encode())
    for array in arrays:
        data = np.ascontiguousarray(array, dtype=np.float64)
        digest.update(str(data.shape).encode() + b"|" + data.tobytes())
    for group in groups:
        digest.update(("\x1f".join(group) + "\x1e").encode())
    return digest.hexdigest()


class StatsCache:
    """``key -> JSON value`` memo backed by one file; ``None`` path = in memory only."""

    def __init__(self, path: Path | None):
        self.path = path
        self.values: dict[str, Any] = {}
        self.dirty = False
        if path is not None and path.is_file():
            self.values = read_json_object_or_empty(path)  # a damaged memo is only a lost speed-up

    @classmethod
    def default(cls) -> StatsCache:
        return cls(paths.cache_dir() / "stats.json")

    def get(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self.values:
            self.put(key, compute())
        return self.values[key]

    def put(self, key: str, value: Any) -> None:
        self.values[key] = value
        self.dirty = True

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def save(self) -> None:
        """Merge with what is on disk (another process may have added values) and write."""
        if self.path is None or not self.dirty:
            return
        update_json_locked(self.path, self.values)
        self.dirty = False


def memoised(
    cache: StatsCache, keys: Sequence[str], compute_missing: Callable[[list[int]], Sequence[Any]]
) -> list[Any]:
    """The values of ``keys``: from ``cache``, the missing ones computed together by
    ``compute_missing(indices of the missing keys)`` (one batched call) and memoised."""
    missing = [i for i, key in enumerate(keys) if key not in cache]
    if missing:
        for i, value in zip(missing, compute_missing(missing), strict=True):
            cache.put(keys[i], value)
    return [cache[key] for key in keys]
