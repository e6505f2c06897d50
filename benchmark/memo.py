"""A persistent memo of work a warm board repeats: parsed, verified store entries and per-pair
evaluations, keyed by everything they depend on.

Each value lives in ``$SOURCESUM_CACHE_DIR/memo-v1/<kind>/<key[:2]>/<key>.pickle`` (safe to
delete), written atomically, as the sha256 of the pickled bytes followed by those bytes. Keys
hold what the value depends on, the code included (:func:`code_digest`: the bytes of the source
files that compute it), so an edited module, entry or split can never be answered from the
memo. A file that fails its checksum or does not unpickle to the expected type is recomputed
with one note on stderr; the memo never fails a command. It holds only the project's own
pickles, written by this user: like every cache under ``$SOURCESUM_CACHE_DIR``, it is trusted
as the user's own files are.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from sourcesum import paths
from sourcesum.files import write_bytes_atomic

_T = TypeVar("_T")
VERSION = "1"


def _path(kind: str, key: str) -> Path:
    return paths.cache_dir() / f"memo-v{VERSION}" / kind / key[:2] / f"{key}.pickle"


@functools.cache
def code_digest(files: tuple[str, ...]) -> str:
    """sha256 over the bytes of source ``files`` (read once per process)."""
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0" + Path(name).read_bytes() + b"\0")
    return digest.hexdigest()


def module_files(modules: Iterable[str]) -> tuple[str, ...]:
    """The source files of the named (imported) modules, sorted."""
    return tuple(sorted({str(sys.modules[m].__file__) for m in modules}))


def recall(kind: str, key: str, expected: type[_T]) -> _T | None:
    """The value saved under ``key``, or None (absent, damaged or of another type: noted)."""
    path = _path(kind, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        if hashlib.sha256(data[32:]).digest() != data[:32]:
            raise ValueError("checksum mismatch")
        value = pickle.loads(data[32:])
        if not isinstance(value, expected):
            raise TypeError(f"holds {type(value).__name__}, not {expected.__name__}")
    except Exception as exc:  # noqa: BLE001 - a cache never fails a command
        print(f"note: memo {path} is unusable ({exc}); recomputing it", file=sys.stderr)
        return None
    return value


def keep(kind: str, key: str, value: Any) -> None:
    """Save ``value`` under ``key`` (atomically; a cache that cannot be written is skipped)."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        write_bytes_atomic(_path(kind, key), hashlib.sha256(payload).digest() + payload)
    except OSError:
        pass


def memoised(
    kind: str,
    parts: list[Any],
    expected: type[_T],
    compute: Callable[[], _T],
    valid: Callable[[_T], bool] = lambda value: True,
) -> _T:
    """The value keyed by the sha256 of ``[kind, *parts]`` (canonical JSON): recalled (when of
    type ``expected`` and ``valid``), or computed and kept. ``parts`` must hold everything the
    value depends on, code included."""
    from sourcesum.hashing import sha256_hex

    key = sha256_hex([kind, *parts])
    hit = recall(kind, key, expected)
    if hit is not None and valid(hit):
        return hit
    value = compute()
    keep(kind, key, value)
    return value
