"""The one persistent memo: values a warm command would otherwise recompute (parsed store
entries, per-pair evaluations, bootstrap intervals, sign-flip counts, tie reports, plots),
keyed by everything they depend on.

**Data, never code.** A record is a JSON value plus named arrays: the file
(``$SOURCESUM_CACHE_DIR/memo-v2/<kind>/<key[:2]>/<key>.rec``, safe to delete) holds a seal line,
one line of JSON (the kind, the key, the value, each array's name, dtype and shape) and the
arrays' raw little-endian bytes. Reading one parses JSON and copies bytes into arrays of a
few plain numeric dtypes: nothing is unpickled, imported or executed.

**Sealed by the user.** The seal is HMAC-SHA256 over the rest of the file under the user's
memo key (:func:`memo_key`: 32 random bytes made on first use in
``$SOURCESUM_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/sourcesum``, else ``~/.config/sourcesum``,
mode 0600, never under the cache folder). A record written or changed by anyone without the key
(a shared cluster scratch, a restored CI cache, another user) fails its seal and is recomputed,
so nothing placed under ``$SOURCESUM_CACHE_DIR`` can decide a number.

**Checked on recall.** Keys hold what the value depends on, the code included
(:func:`code_digest`: the bytes of the source files that compute it), so an edited module,
entry or split is never answered from the memo; each caller's ``decode`` checks the types and
shapes of what it recalls and raises :class:`MemoMismatch` otherwise.

**Never fails a command.** A damaged or foreign record, a full or read-only cache folder, or a
key that cannot be made costs speed only, with one note on stderr per kind of problem.

**Modes** (:func:`settings`): ``--no-memo`` neither reads nor writes; a command that writes a
tracked file (``leaderboard.md``, ``leaderboard.png``) reads nothing, so every value it writes
was computed in that process (and is kept for the next command).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import os
import secrets
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sourcesum import paths
from sourcesum.util.files import update_locked, write_bytes_atomic

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")
VERSION = "2"
MAGIC = b"sourcesum-memo/2 "
DTYPES = ("<f8", "<f4", "<f2", "<i8", "<i4", "|u1", "|b1")
"""The only array dtypes a record may hold (stored little-endian)."""
KEY_BYTES = 32


class MemoMismatch(ValueError):
    """A recalled record is not of the type or shape its caller expects."""


@dataclass(frozen=True)
class Record:
    """What the memo stores: a JSON ``value`` and named numeric ``arrays``."""

    value: Any = None
    arrays: Mapping[str, np.ndarray] = field(default_factory=dict)


@dataclass
class _Settings:
    read: bool = True
    write: bool = True
    noted: set[str] = field(default_factory=set)


_SETTINGS = _Settings()


@contextlib.contextmanager
def settings(read: bool = True, write: bool = True) -> Iterator[None]:
    """Within the block, whether records are recalled (``read``) and kept (``write``)."""
    before = (_SETTINGS.read, _SETTINGS.write)
    _SETTINGS.read, _SETTINGS.write = read and before[0], write and before[1]
    try:
        yield
    finally:
        _SETTINGS.read, _SETTINGS.write = before


def fresh() -> contextlib.AbstractContextManager[None]:
    """Within the block nothing is recalled (values are computed here, and still kept)."""
    return settings(read=False)


def note(kind: str, message: str) -> None:
    """``message`` on stderr, once per process for each ``kind`` of problem."""
    if kind not in _SETTINGS.noted:
        _SETTINGS.noted.add(kind)
        print(f"note: {message}", file=sys.stderr)


def reset_notes() -> None:
    """Let every note be said again (a new command in the same process)."""
    _SETTINGS.noted.clear()


def root() -> Path:
    """The memo's folder under the cache directory."""
    return paths.cache_dir() / f"memo-v{VERSION}"


def key_path() -> Path:
    """Where the user's memo key lives (outside the cache directory)."""
    return paths.config_dir() / "memo.key"


@functools.cache
def _key_for(path: str, cache: str) -> bytes | None:
    """The key at ``path`` (made there if absent), or None with a note when it cannot be used."""
    key_file = Path(path)
    if key_file.resolve().is_relative_to(Path(cache).resolve()):
        note("memo-key", f"the memo key {key_file} lies under the cache folder {cache}; the memo is off")
        return None
    try:
        key_file.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(KEY_BYTES) + "\n")
        info = key_file.stat()
        if info.st_mode & 0o077 or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
            note("memo-key", f"the memo key {key_file} is not private to you (mode 0600); the memo is off")
            return None
        key = bytes.fromhex(key_file.read_text(encoding="ascii").strip())
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        note("memo-key", f"no usable memo key at {key_file} ({exc}); the memo is off")
        return None
    if len(key) != KEY_BYTES:
        note("memo-key", f"the memo key {key_file} is not {KEY_BYTES} bytes; the memo is off")
        return None
    return key


def memo_key() -> bytes | None:
    """The user's memo key (:func:`key_path`), made on first use; None when the memo is off."""
    return _key_for(str(key_path()), str(paths.cache_dir()))


def _seal(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode("ascii")


def encode(kind: str, key: str, record: Record) -> bytes:
    """The unsealed bytes of ``record``: its JSON line, then the arrays' bytes."""
    import numpy as np

    arrays = []
    blobs = []
    for name, array in record.arrays.items():
        data = np.ascontiguousarray(array)
        dtype = data.dtype.newbyteorder("<") if data.dtype.byteorder == ">" else data.dtype
        if dtype.str not in DTYPES:
            raise TypeError(f"memo arrays hold {', '.join(DTYPES)}, not {data.dtype}")
        data = data.astype(dtype, copy=False)
        arrays.append([name, dtype.str, list(data.shape)])
        blobs.append(data.tobytes())
    header = {"kind": kind, "key": key, "value": record.value, "arrays": arrays}
    line = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return line + b"\n" + b"".join(blobs)


def decode(kind: str, key: str, body: bytes) -> Record:
    """The record in ``body`` (unsealed bytes), checked against ``kind`` and ``key``."""
    import numpy as np

    line, _, rest = body.partition(b"\n")
    header = json.loads(line)
    if not isinstance(header, dict) or header.get("kind") != kind or header.get("key") != key:
        raise ValueError("it belongs to another key")
    arrays: dict[str, np.ndarray] = {}
    offset = 0
    for item in header.get("arrays", []):
        name, dtype, shape = item
        if dtype not in DTYPES or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ValueError(f"array {name!r} has dtype {dtype!r} and shape {shape!r}")
        count = int(np.prod(shape, dtype=np.int64))
        size = count * np.dtype(dtype).itemsize
        if offset + size > len(rest):
            raise ValueError(f"array {name!r} is truncated")
        arrays[str(name)] = np.frombuffer(rest, dtype=dtype, count=count, offset=offset).reshape(shape)
        offset += size
    if offset != len(rest):
        raise ValueError("trailing bytes")
    return Record(header.get("value"), arrays)


def _path(kind: str, key: str) -> Path:
    return root() / kind / key[:2] / f"{key}.rec"


def _write(path: Path, data: bytes) -> None:
    try:
        write_bytes_atomic(path, data)
    except OSError as exc:
        note("memo-write", f"the memo cannot be written ({exc}); commands recompute what it would keep")


def recall(kind: str, key: str) -> Record | None:
    """The record sealed under ``key`` with the user's key, or None (absent, memo off, not
    ours or damaged: noted)."""
    return _load(kind, key) if _SETTINGS.read else None


def _load(kind: str, key: str) -> Record | None:
    secret = memo_key()
    if secret is None:
        return None
    path = _path(kind, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        if not data.startswith(MAGIC):
            raise ValueError("not a memo record")
        seal, _, body = data[len(MAGIC) :].partition(b"\n")
        if not hmac.compare_digest(seal, _seal(secret, body)):
            raise ValueError("its seal is not yours (written or changed without your memo key)")
        return decode(kind, key, body)
    except (ValueError, TypeError, UnicodeDecodeError) as exc:
        note(f"memo-bad-{kind}", f"memo record {path} is unusable ({exc}); recomputing it")
        return None


def keep(kind: str, key: str, record: Record) -> None:
    """Seal and save ``record`` under ``key`` (atomically; skipped when the memo is off)."""
    secret = memo_key() if _SETTINGS.write else None
    if secret is None:
        return
    _write(_path(kind, key), _sealed(secret, kind, key, record))


def memoised(
    kind: str,
    parts: list[Any],
    compute: Callable[[], T],
    to_record: Callable[[T], Record],
    from_record: Callable[[Record], T],
) -> T:
    """The value keyed by the sha256 of ``[kind, *parts]`` (canonical JSON): recalled and
    decoded by ``from_record`` (which raises :class:`MemoMismatch` for a record of another
    type or shape: noted and recomputed), or computed and kept as ``to_record`` makes it.
    ``parts`` must hold everything the value depends on, code included."""
    from sourcesum.util.hashing import sha256_hex

    key = sha256_hex([kind, *parts])
    found = recall(kind, key)
    if found is not None:
        try:
            return from_record(found)
        except (MemoMismatch, ValueError, TypeError, KeyError, IndexError) as exc:
            note(f"memo-bad-{kind}", f"memo record {_path(kind, key)} is unusable ({exc}); recomputing it")
    value = compute()
    keep(kind, key, to_record(value))
    return value


def update(kind: str, key: str, merge: Callable[[Record | None], Record]) -> None:
    """Under the record's file lock: save ``merge(on disk)`` (``None`` when absent, foreign,
    damaged or not to be read), so concurrent writers only add to what is there."""
    secret = memo_key() if _SETTINGS.write else None
    if secret is None:
        return
    try:
        update_locked(
            _path(kind, key),
            lambda path: _load(kind, key),
            merge,
            lambda record: _sealed(secret, kind, key, record),
        )
    except OSError as exc:
        note("memo-write", f"the memo cannot be written ({exc}); commands recompute what it would keep")


def _sealed(secret: bytes, kind: str, key: str, record: Record) -> bytes:
    body = encode(kind, key, record)
    return MAGIC + _seal(secret, body) + b"\n" + body


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
