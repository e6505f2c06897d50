"""The statistics' memo: bootstrap intervals, sign-flip counts and tie reports, keyed by their inputs.

The key of a value is the sha256 of everything it depends on: the statistic's name and code
version, the resample count and seed, the exact bytes of the per-pair value arrays and the
resampling groups. An unchanged leaderboard therefore reuses every number, a changed entry
recomputes only what it touches, and a stale value can never be returned. The values live in
one record of the memo (:mod:`sourcesum.util.memo`: sealed with the user's key, data only), saved
under a file lock so concurrent boards only add to it.

Where the caller says what a value must look like (:data:`INTERVAL`, :data:`SIGN_FLIP_BATCHES`,
...), a recalled value of another shape is recomputed (counted, and noted once on save); it
never reaches a board.
"""

from __future__ import annotations

import hashlib
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

CODE_VERSION = "1"
"""Bump when :mod:`sourcesum.stats.bootstrap` changes what it computes."""


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


Validator = Callable[[Any], bool]


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def INTERVAL(value: Any) -> bool:  # noqa: N802 - a named shape, used like a constant
    """``[low, high]``: finite with ``low <= high``, or both NaN (a mean undefined on every pair)."""
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(x, float) for x in value):
        return False
    return (all(map(_finite, value)) and value[0] <= value[1]) or all(map(math.isnan, value))


def SIGN_FLIP_BATCHES(value: Any) -> bool:  # noqa: N802
    """Per-batch counts of extreme sign patterns: at most
    :data:`~sourcesum.stats.significance.MAX_BATCHES` integers between 0 and the batch size."""
    from sourcesum.stats.significance import BATCH_FLIPS, MAX_BATCHES

    return (
        isinstance(value, list)
        and len(value) <= MAX_BATCHES
        and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= BATCH_FLIPS for x in value)
    )


def ANY(value: Any) -> bool:  # noqa: N802
    return True


KIND = "stats"
RECORD = "values"
"""The memo record (kind, key) that holds every value."""


class StatsCache:
    """``key -> JSON value`` memo held in one memo record; ``persist=False`` = in memory only."""

    def __init__(self, persist: bool = True):
        from sourcesum.util import memo

        self.persist = persist
        self.values: dict[str, Any] = {}
        self.dirty = False
        self.discarded = 0
        found = memo.recall(KIND, RECORD) if persist else None
        if found is not None:
            if isinstance(found.value, dict):
                self.values = dict(found.value)
            else:
                self.discarded += 1

    @classmethod
    def default(cls) -> StatsCache:
        return cls(persist=True)

    def get(self, key: str, compute: Callable[[], Any], valid: Validator = ANY) -> Any:
        """The value of ``key``, computed (and memoised) when absent or not ``valid``."""
        if key not in self.values or not valid(self.values[key]):
            if key in self.values:
                self.discarded += 1
            self.put(key, compute())
        return self.values[key]

    def lookup(self, key: str, valid: Validator = ANY) -> Any | None:
        """The value of ``key`` if memoised and ``valid``, else None (an invalid one counted)."""
        if key not in self.values:
            return None
        if not valid(self.values[key]):
            self.discarded += 1
            return None
        return self.values[key]

    def put(self, key: str, value: Any) -> None:
        self.values[key] = value
        self.dirty = True

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def save(self) -> None:
        """Merge with the record on disk (another process may have added values) and save; say
        once how many invalid values were recomputed."""
        from sourcesum.util import memo

        if self.discarded:
            print(
                f"note: the statistics memo held {self.discarded} invalid value(s); they were recomputed",
                file=sys.stderr,
            )
            self.discarded = 0
        if not self.persist or not self.dirty:
            return

        def merge(on_disk: memo.Record | None) -> memo.Record:
            held = on_disk.value if on_disk is not None and isinstance(on_disk.value, dict) else {}
            return memo.Record({**held, **self.values})

        memo.update(KIND, RECORD, merge)
        self.dirty = False


def memoised(
    cache: StatsCache,
    keys: Sequence[str],
    compute_missing: Callable[[list[int]], Sequence[Any]],
    valid: Validator = ANY,
) -> list[Any]:
    """The values of ``keys``: from ``cache`` where present and ``valid``, the others computed
    together by ``compute_missing(indices)`` (one batched call) and memoised."""
    missing = [i for i, key in enumerate(keys) if key not in cache or not valid(cache[key])]
    cache.discarded += sum(1 for i in missing if keys[i] in cache)
    if missing:
        for i, value in zip(missing, compute_missing(missing), strict=True):
            cache.put(keys[i], value)
    return [cache[key] for key in keys]
