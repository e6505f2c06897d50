"""The one canonical hash of the harness: sha256 over the canonical JSON of a value.

``canonical_json(value)`` is ``json.dumps(value, sort_keys=True, default=str)``: keys sorted,
floats as ``json.dumps`` writes them (which round-trips exactly), anything else by ``str``. The
score store's entry keys, configuration ids and score checksums, the composite rankers' key
digests and every memo key are digests of it, so equal values always share one key.

``compact=True`` drops the spaces after separators and keeps non-ASCII characters as they are:
the form of the LLM judge's request-cache keys (persisted in users' caches, so kept as it was).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any, compact: bool = False) -> str:
    """The canonical JSON text of ``value`` (see the module docstring)."""
    if compact:
        return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(value, sort_keys=True, default=str)


def sha256_hex(value: Any, compact: bool = False) -> str:
    """Hex sha256 of the UTF-8 bytes of :func:`canonical_json` of ``value``."""
    return hashlib.sha256(canonical_json(value, compact).encode("utf-8")).hexdigest()


def digest(value: Any, length: int = 12) -> str:
    """The first ``length`` hex digits of :func:`sha256_hex` (12 by default: entry keys,
    configuration ids and composite key digests)."""
    return sha256_hex(value)[:length]


def sha256_bytes(payload: bytes) -> str:
    """Hex sha256 of raw bytes (files pinned by checksum)."""
    return hashlib.sha256(payload).hexdigest()
