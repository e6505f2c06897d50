"""File writes that never lose or tear data: atomic replacement, and locked read-merge-write.

* :func:`write_bytes_atomic` / :func:`write_text_atomic`: write a temporary file in the same
  folder, fsync, then ``os.replace``: a reader never sees a half-written file and a crash never
  corrupts one.
* :func:`update_json_locked`: under a file lock (``filelock``) beside the file, read the JSON
  on disk, merge the caller's value into it and write the result atomically, so concurrent
  writers (threads or processes) only ever add to what is there. The score store, the
  statistics memo and the LLM judge's request cache all save this way.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would make shared results unreadable to others
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:  # e.g. a full disk: say which file could not be written
        Path(tmp).unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """UTF-8 text version of :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))


def lock_path(path: Path) -> Path:
    """The lock file guarding ``path``: ``.<name>.lock`` in the same folder."""
    return path.parent / f".{path.name}.lock"


def update_locked(
    path: Path,
    read: Callable[[Path], T | None],
    merge: Callable[[T | None], T],
    render: Callable[[T], str | bytes],
) -> T:
    """Under ``path``'s lock: ``current = read(path)`` if the file exists (else ``None``), ``new =
    merge(current)``, write ``render(new)`` (text as UTF-8) atomically; returns ``new``. ``read``
    may raise to refuse a damaged file, or return a fallback to replace it."""
    from filelock import FileLock  # on use: importing filelock is not free

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_path(path))):
        current = read(path) if path.is_file() else None
        new = merge(current)
        data = render(new)
        write_bytes_atomic(path, data.encode("utf-8") if isinstance(data, str) else data)
    return new


def read_json_object_or_empty(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; ``{}`` when it is damaged or not an object (a memo that
    only costs speed when lost)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def update_json_locked(
    path: Path,
    values: dict[str, Any],
    read: Callable[[Path], dict[str, Any]] = read_json_object_or_empty,
    render: Callable[[dict[str, Any]], str] = json.dumps,
) -> dict[str, Any]:
    """Merge ``values`` into the JSON object at ``path`` under its lock (values on disk that
    ``values`` lacks are kept); returns the merged object."""
    return update_locked(path, read, lambda current: {**(current or {}), **values}, render)


def owned_files(folder: Path, index_name: str) -> set[str]:
    """The files an earlier run of one of our writers listed in ``folder / index_name`` (an
    object with a ``files`` member); empty when there is no index. A damaged index is an error:
    the folder cannot be told apart from someone else's."""
    from sourcesum.errors import SourceSumError

    index = folder / index_name
    if not index.is_file():
        return set()
    try:
        return set(json.loads(index.read_text(encoding="utf-8"))["files"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, OSError) as exc:
        raise SourceSumError(f"{index}: not an index of ours ({exc}); choose another folder") from exc


def check_folder_target(folder: Path, planned: list[str], index_name: str, command: str) -> None:
    """Refuse to write into ``folder`` if it is a file, or if any ``planned`` file exists there
    without being listed in the folder's index (so written by someone else)."""
    from sourcesum.errors import SourceSumError

    if folder.exists() and not folder.is_dir():
        raise SourceSumError(f"{command} {folder}: is a file, not a folder")
    ours = owned_files(folder, index_name)
    foreign = [name for name in planned if (folder / name).exists() and name not in ours]
    if foreign:
        raise SourceSumError(
            f"{command} {folder}: would overwrite {len(foreign)} file(s) that it did not write, e.g. "
            f"{foreign[0]}; choose an empty or new folder"
        )


def check_file_target(path: Path, is_ours: Callable[[bytes], bool], command: str) -> None:
    """Refuse to overwrite ``path`` unless it is absent or its bytes look like one of ours."""
    from sourcesum.errors import SourceSumError

    if path.is_dir():
        raise SourceSumError(f"{command} {path}: is a folder, not a file")
    if path.exists() and not is_ours(path.read_bytes()):
        raise SourceSumError(
            f"{command} {path}: exists and was not written by sourcesum; choose another file or remove it"
        )
