"""Score stores: folders of entries (:mod:`sourcesum.store.entry`), one JSON file each.

Files live at ``<root>/<ranker>/<split>.<key>.json``, list one pair per line (small,
diff-friendly, committed under ``data/scores`` for the leaderboard), and may be partial: the
runner resumes an interrupted run from the pairs already there. Saving merges under a file lock
(``filelock``): the file on disk ends as the union of the pairs of every writer, so concurrent
runs on one entry never lose finished pairs.

Stores stack (:class:`StoreStack`): commands read a writable user store on top of read-only ones
(the committed ``data/scores``) and write only to the user store.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sourcesum.errors import ScoreFileError
from sourcesum.registry import NAME
from sourcesum.store.entry import ScoreEntry, merge_entries, scores_of_record, scores_record
from sourcesum.util.files import update_locked

if TYPE_CHECKING:
    from sourcesum.util.memo import Record

_ENTRY_FIELDS = (
    "ranker",
    "version",
    "params",
    "label",
    "split",
    "data_sha256",
    "n_pairs",
    "libraries",
    "provenance",
    "fits",
)


def read_entry_memoised(path: Path) -> ScoreEntry:
    """:func:`read_entry`, answered from the memo (:mod:`sourcesum.util.memo`) while the file is
    unchanged: the key holds its absolute path, size, modification and change times (``ctime``,
    which every write moves and no user call can set back), inode and device, and the source of
    this module; a verified entry is memoised with the checksum it was verified against."""
    from sourcesum.util import memo

    try:
        stat = path.stat()
    except OSError:
        return read_entry(path)

    def to_record(entry: ScoreEntry) -> Record:
        fields = {name: getattr(entry, name) for name in _ENTRY_FIELDS}
        return scores_record(entry.scores, {**fields, "scores_sha256": entry.scores_checksum()})

    def from_record(record: Record) -> ScoreEntry:
        value = record.value
        types = {
            "params": dict,
            "n_pairs": int,
            "libraries": dict,
            "provenance": dict,
            "fits": dict,
            "scores_sha256": str,
        }
        if not isinstance(value, dict) or not all(
            isinstance(value.get(name), types.get(name, str)) for name in (*_ENTRY_FIELDS, "scores_sha256")
        ):
            raise memo.MemoMismatch("not a score-store entry")
        entry = ScoreEntry(**{name: value[name] for name in _ENTRY_FIELDS}, scores=scores_of_record(record))
        entry.verified = (id(entry.scores), len(entry.scores), value["scores_sha256"])
        if entry.key != path.name.split(".")[-2] or entry.ranker != path.parent.name:
            raise memo.MemoMismatch("the record is of another entry")
        return entry

    parts = [
        memo.code_digest(memo.module_files([__name__])),
        str(path.resolve()),
        [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev],
    ]
    return memo.memoised("entries", parts, lambda: read_entry(path), to_record, from_record)


def read_entry(path: Path, allow_legacy: bool = False) -> ScoreEntry:
    """Read and verify the entry at ``path`` (unreadable bytes are an error naming it)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScoreFileError(f"{path}: not UTF-8 text, so not a score-store entry; delete it") from exc
    except OSError as exc:
        raise ScoreFileError(f"{path}: cannot be read ({exc})") from exc
    return ScoreEntry.from_json(text, path, allow_legacy)


class ScoreStore:
    """A folder of :class:`ScoreEntry` files."""

    def __init__(self, root: Path, writable: bool = True):
        self.root = Path(root)
        self.writable = writable
        if self.root.exists() and not self.root.is_dir():
            raise ScoreFileError(f"score store {self.root} is a file, not a folder")

    def __repr__(self) -> str:
        return f"ScoreStore({str(self.root)!r})"

    def path_for(self, ranker: str, split: str, key: str) -> Path:
        """``<root>/<ranker>/<split>.<key>.json``; each part must be a name (nothing can point
        outside the store)."""
        for part in (ranker, split):
            if not NAME.fullmatch(part):
                raise ScoreFileError(
                    f"score store {self.root}: {part!r} is not a name ([A-Za-z][A-Za-z0-9_]*)"
                )
        if not re.fullmatch(r"[0-9a-f]{12}", key):
            raise ScoreFileError(f"score store {self.root}: {key!r} is not an entry key")
        return self.root / ranker / f"{split}.{key}.json"

    def load(self, ranker: str, split: str, key: str) -> ScoreEntry | None:
        """The verified entry (:func:`read_entry_memoised`), or None where there is none."""
        path = self.path_for(ranker, split, key)
        if not path.is_file():
            return None
        return read_entry_memoised(path)

    def save(self, entry: ScoreEntry) -> Path:
        """Write ``entry`` merged with what is on disk (:func:`merge_entries`), under a file
        lock; ``entry.scores`` (and ``entry.fits``) are updated in place to the union, so a caller
        sees pairs (and fits) that other writers finished."""
        if not self.writable:
            raise ScoreFileError(f"score store {self.root} is read-only here")
        path = self.path_for(entry.ranker, entry.split, entry.key)

        def merge(on_disk: ScoreEntry | None) -> ScoreEntry:
            if on_disk is None:
                return entry
            return merge_entries([(str(path), on_disk), ("the entry being saved", entry)])

        merged = update_locked(path, read_entry, merge, ScoreEntry.to_json)
        entry.scores.update(merged.scores)
        entry.fits.update(merged.fits)
        return path

    def entries(
        self, splits: Collection[str] | None = None
    ) -> Iterator[tuple[Path, ScoreEntry | ScoreFileError]]:
        """Every entry in the store, in path order (:func:`read_entry_memoised`); an invalid
        one is yielded as its error. ``splits``: only the files named after these splits
        (``<ranker>/<split>.<key>.json``; the others are not read)."""
        if not self.root.is_dir():
            return
        for path in sorted(self.root.glob("*/*.json")):
            if splits is not None and path.name.split(".")[0] not in splits:
                continue
            try:
                yield path, read_entry_memoised(path)
            except ScoreFileError as exc:
                yield path, exc


def open_stores(scores_dir: str | Path | None = None, must_exist: bool = False) -> StoreStack:
    """The store stack every command reads: the user store (``scores_dir``, else
    :func:`sourcesum.paths.user_scores_dir`, written by ``run``) on top of the committed,
    read-only ``data/scores``. ``must_exist``: a named ``scores_dir`` that does not exist is an
    error (a typo must not read as an empty store)."""
    import os

    from sourcesum import paths

    top = Path(scores_dir).expanduser() if scores_dir else paths.user_scores_dir()
    if scores_dir and must_exist and not top.is_dir():
        raise ScoreFileError(f"--scores-dir {scores_dir}: no such folder")
    named = os.environ.get("SOURCESUM_SCORES_DIR")
    if not scores_dir and named and must_exist and not top.is_dir():
        raise ScoreFileError(f"SOURCESUM_SCORES_DIR={named}: no such folder (a typo reads as an empty store)")
    if top.exists() and not top.is_dir():
        raise ScoreFileError(f"--scores-dir {top}: is a file, not a folder")
    layers = [ScoreStore(top)]
    committed = paths.COMMITTED_SCORES_DIR
    if committed.resolve() != top.resolve():
        layers.append(ScoreStore(committed, writable=False))
    return StoreStack(layers)


class StoreStack:
    """Several stores read as one: the first is written, the rest are read-only layers below it.

    ``load`` returns the union of a key's pairs over the layers (:func:`merge_entries`: layers
    that disagree are an error naming both files); ``save`` writes the top store.
    """

    def __init__(self, stores: Sequence[ScoreStore]):
        if not stores:
            raise ValueError("a store stack needs at least one store")
        self.stores = list(stores)

    def __repr__(self) -> str:
        return f"StoreStack({', '.join(str(s.root) for s in self.stores)})"

    @property
    def top(self) -> ScoreStore:
        return self.stores[0]

    @property
    def root(self) -> Path:
        return self.top.root

    def path_for(self, ranker: str, split: str, key: str) -> Path:
        return self.top.path_for(ranker, split, key)

    def load(self, ranker: str, split: str, key: str) -> ScoreEntry | None:
        found = [
            (str(s.path_for(ranker, split, key)), e)
            for s, e in ((s, s.load(ranker, split, key)) for s in self.stores)
            if e is not None
        ]
        return merge_entries(found) if found else None

    def save(self, entry: ScoreEntry) -> Path:
        return self.top.save(entry)

    def entries(
        self, splits: Collection[str] | None = None
    ) -> Iterator[tuple[Path, ScoreEntry | ScoreFileError]]:
        """Entries of every layer, one per key (pairs merged over layers by :func:`merge_entries`;
        the top path shown), only those of ``splits`` when given (:meth:`ScoreStore.entries`).
        An invalid file is yielded as its error and never hides a valid entry of the same key
        in another layer; layers that disagree are yielded as the error naming both files."""
        valid: dict[tuple[str, str], list[tuple[Path, ScoreEntry]]] = {}
        out: list[tuple[Path, ScoreEntry | ScoreFileError]] = []
        for store in self.stores:
            for path, item in store.entries(splits):
                if isinstance(item, ScoreFileError):
                    out.append((path, item))
                else:
                    valid.setdefault((path.parent.name, path.name), []).append((path, item))
        for found in valid.values():
            try:
                out.append((found[0][0], merge_entries([(str(path), entry) for path, entry in found])))
            except ScoreFileError as exc:
                out.append((found[0][0], exc))
        yield from sorted(out, key=lambda item: (item[0].parent.name, item[0].name, str(item[0])))
