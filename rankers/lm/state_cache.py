"""Pooled hidden states kept in the memo: one record per input, data only, sealed by the user.

``recall(key, shape)`` returns the ``float16`` array of ``shape`` kept under ``key`` (a JSON-able
mapping of everything the states depend on) or None; ``keep(key, states)`` saves one. The
records are the memo's (:mod:`sourcesum.util.memo`, kind :data:`KIND`): a JSON line and the
array's raw little-endian bytes, sealed by HMAC-SHA256 under the user's memo key, so nothing is
unpickled when read and a record written or changed without the key is recomputed, never used.
The key holds the code that computes the states (:data:`STATE_MODULES`' bytes), so an edited
module is never answered from the cache.

A recalled record is checked, never trusted: it must hold one array named ``states`` of the
expected shape and dtype; anything else is a miss (noted once on stderr) and the caller
recomputes and replaces it. ``--no-memo`` turns the cache off with the rest of the memo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sourcesum.util import memo
from sourcesum.util.hashing import sha256_hex

KIND = "probe-states"
STATE_MODULES = ("sourcesum.rankers.lm.hidden_states",)
"""The modules whose code computes the states (part of every key)."""


def record_key(key: Mapping[str, Any]) -> str:
    """The memo key of ``key``: sha256 of the kind, ``key`` and :data:`STATE_MODULES`' code."""
    code = memo.code_digest(memo.module_files(STATE_MODULES))
    return sha256_hex([KIND, dict(key), code])


def recall(key: Mapping[str, Any], shape: tuple[int, ...]) -> np.ndarray | None:
    """The ``float16`` states of ``shape`` kept under ``key``, or None (absent, memo off, not the
    user's, or of another shape: noted)."""
    name = record_key(key)
    record = memo.recall(KIND, name)
    if record is None:
        return None
    states = record.arrays.get("states")
    if states is None or states.dtype != np.float16 or tuple(states.shape) != tuple(shape):
        found = None if states is None else f"{states.dtype} {tuple(states.shape)}"
        memo.note(
            f"memo-bad-{KIND}",
            f"a cached state record holds {found}, expected float16 {shape}; recomputing it",
        )
        return None
    return states


def keep(key: Mapping[str, Any], states: np.ndarray) -> None:
    """Save ``float16`` ``states`` under ``key`` (skipped when the memo is off; a failed write is
    noted, never raised)."""
    if states.dtype != np.float16:
        raise TypeError(f"pooled states are kept as float16, not {states.dtype}")
    memo.keep(KIND, record_key(key), memo.Record({"shape": list(states.shape)}, {"states": states}))


def size() -> tuple[int, int]:
    """``(records, bytes on disk)`` of the state cache."""
    folder = memo.root() / KIND
    files = [path for path in folder.rglob("*.rec")] if folder.is_dir() else []
    return len(files), sum(path.stat().st_size for path in files)
