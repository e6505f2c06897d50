"""The score store: per-sentence scores of one ranker configuration on one split, one JSON file each.

An entry is keyed by (ranker name, parameters, ranker version, data sha256): change any of them
and the key changes, so a stale entry is never reused. Files live at
``<root>/<ranker>/<split>.<key>.json``, list one pair per line (small, diff-friendly, committed
under ``data/scores`` for the leaderboard), and may be partial: the runner resumes an interrupted
run from the pairs already there.

Every entry verifies itself on load: its header (format, ranker, version, params, split, data
sha256, key) must agree with its path and key, and ``scores_sha256`` with its scores; any mismatch
is a :class:`~sourcesum.errors.ScoreFileError` naming the file and how to recompute it, never a
result. The header also records the versions of the libraries that produced the scores.

Saving merges under a file lock (``filelock``): the file on disk ends as the union of the pairs
of every writer, so concurrent runs on one entry never lose finished pairs.

Stores stack (:class:`StoreStack`): commands read a writable user store on top of read-only ones
(the committed ``data/scores``) and write only to the user store.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sourcesum.atomic import write_text_atomic
from sourcesum.errors import ScoreFileError

FORMAT = "sourcesum-scores/2"
LEGACY_FORMATS = ("sourcesum-scores/1",)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def config_id(ranker: str, version: str, params: dict[str, Any]) -> str:
    """12 hex digits identifying a ranker configuration across splits."""
    return hashlib.sha256(_canonical([ranker, version, params]).encode()).hexdigest()[:12]


def entry_key(ranker: str, version: str, params: dict[str, Any], data_sha256: str) -> str:
    """12 hex digits of sha256 over the canonical JSON of the four key parts."""
    return hashlib.sha256(_canonical([ranker, version, params, data_sha256]).encode()).hexdigest()[:12]


def scores_sha256(scores: dict[str, list[float]]) -> str:
    """sha256 of the scores as canonical JSON (pair ids sorted, floats as ``json.dumps`` writes
    them, which round-trips exactly)."""
    return hashlib.sha256(_canonical(scores).encode()).hexdigest()


def recompute_hint(ranker: str, split: str) -> str:
    return f"delete it and recompute with `sourcesum run --ranker {ranker} --split {split}`"


@dataclass
class ScoreEntry:
    """Scores of one ranker configuration on one split (possibly partial)."""

    ranker: str
    version: str
    params: dict[str, Any]
    label: str
    split: str
    data_sha256: str
    n_pairs: int
    scores: dict[str, list[float]] = field(default_factory=dict)
    libraries: dict[str, str] = field(default_factory=dict)
    """Versions of the libraries that produced the scores (provenance; not part of the key)."""

    @property
    def key(self) -> str:
        return entry_key(self.ranker, self.version, self.params, self.data_sha256)

    @property
    def config_id(self) -> str:
        return config_id(self.ranker, self.version, self.params)

    @property
    def complete(self) -> bool:
        return len(self.scores) == self.n_pairs

    def to_json(self) -> str:
        """Canonical text: header fields, then one ``"pair id": [scores]`` line per pair."""
        header = {
            "format": FORMAT,
            "ranker": self.ranker,
            "version": self.version,
            "params": self.params,
            "label": self.label,
            "split": self.split,
            "data_sha256": self.data_sha256,
            "n_pairs": self.n_pairs,
            "key": self.key,
            "libraries": dict(sorted(self.libraries.items())),
            "scores_sha256": scores_sha256(self.scores),
        }
        lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in header.items()]
        rows = [f"    {json.dumps(pid)}: {json.dumps(self.scores[pid])}" for pid in sorted(self.scores)]
        body = ",\n".join(rows)
        return "{\n" + "\n".join(lines) + '\n  "scores": {\n' + body + ("\n" if rows else "") + "  }\n}\n"

    @classmethod
    def from_json(cls, text: str, path: Path, allow_legacy: bool = False) -> ScoreEntry:
        """Parse and verify an entry; ``allow_legacy`` accepts format 1 (no checksum) for
        :func:`migrate`."""
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise ValueError("not a JSON object")
            fmt = raw.get("format")
            if fmt != FORMAT and not (allow_legacy and fmt in LEGACY_FORMATS):
                hint = " (run `sourcesum migrate` to convert it)" if fmt in LEGACY_FORMATS else ""
                raise ValueError(f"format {fmt!r}, expected {FORMAT!r}{hint}")
            if not isinstance(raw["scores"], dict) or not isinstance(raw["params"], dict):
                raise ValueError("scores and params must be JSON objects")
            scores = {str(k): [float(x) for x in v] for k, v in raw["scores"].items()}
            entry = cls(
                ranker=str(raw["ranker"]),
                version=str(raw["version"]),
                params=raw["params"],
                label=str(raw.get("label", raw["ranker"])),
                split=str(raw["split"]),
                data_sha256=str(raw["data_sha256"]),
                n_pairs=int(raw["n_pairs"]),
                scores=scores,
                libraries={str(k): str(v) for k, v in (raw.get("libraries") or {}).items()},
            )
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise ScoreFileError(f"{path}: not a valid score-store entry ({exc}); delete it") from exc
        hint = recompute_hint(entry.ranker, entry.split)
        bad = [pid for pid, v in scores.items() if not all(math.isfinite(x) for x in v)]
        if bad:
            raise ScoreFileError(f"{path}: pair {bad[0]} has a non-finite score; {hint}")
        if fmt == FORMAT:
            if raw.get("key") != entry.key:
                raise ScoreFileError(
                    f"{path}: header key {raw.get('key')!r} does not match its ranker, version, "
                    f"params and data ({entry.key}); {hint}"
                )
            if raw.get("scores_sha256") != scores_sha256(scores):
                raise ScoreFileError(f"{path}: scores do not match their scores_sha256 (edited?); {hint}")
        expected = (entry.ranker, f"{entry.split}.{entry.key}.json")
        if (path.parent.name, path.name) != expected:
            raise ScoreFileError(
                f"{path}: holds {entry.ranker} on {entry.split} (key {entry.key}), which belongs at "
                f"{expected[0]}/{expected[1]}; {hint}"
            )
        return entry

    def merged_with(self, other: ScoreEntry) -> ScoreEntry:
        """This entry with the pairs of ``other`` (same key) that it lacks."""
        if other.key != self.key:
            raise ScoreFileError(f"cannot merge entries with keys {self.key} and {other.key}")
        merged = ScoreEntry(**{**self.__dict__, "scores": {**other.scores, **self.scores}})
        merged.libraries = self.libraries or other.libraries
        return merged


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
        return self.root / ranker / f"{split}.{key}.json"

    def load(self, ranker: str, split: str, key: str) -> ScoreEntry | None:
        path = self.path_for(ranker, split, key)
        if not path.is_file():
            return None
        return read_entry(path)

    def save(self, entry: ScoreEntry) -> Path:
        """Write ``entry`` merged with what is on disk, under a file lock; ``entry.scores`` is
        updated in place to the union, so a caller sees pairs that other writers finished."""
        from filelock import FileLock

        if not self.writable:
            raise ScoreFileError(f"score store {self.root} is read-only here")
        path = self.path_for(entry.ranker, entry.split, entry.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path.parent / f".{path.name}.lock")):
            if path.is_file():
                on_disk = read_entry(path)
                for pair_id, scores in on_disk.scores.items():
                    entry.scores.setdefault(pair_id, scores)
            write_text_atomic(path, entry.to_json())
        return path

    def entries(self) -> Iterator[tuple[Path, ScoreEntry | ScoreFileError]]:
        """Every entry in the store, in path order; an invalid one is yielded as its error."""
        if not self.root.is_dir():
            return
        for path in sorted(self.root.glob("*/*.json")):
            try:
                yield path, read_entry(path)
            except ScoreFileError as exc:
                yield path, exc


class StoreStack:
    """Several stores read as one: the first is written, the rest are read-only layers below it.

    ``load`` returns the union of a key's pairs over the layers; ``save`` writes the top store.
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
        found = [e for e in (s.load(ranker, split, key) for s in self.stores) if e is not None]
        if not found:
            return None
        merged = found[0]
        for entry in found[1:]:
            merged = merged.merged_with(entry)
        return merged

    def save(self, entry: ScoreEntry) -> Path:
        return self.top.save(entry)

    def entries(self) -> Iterator[tuple[Path, ScoreEntry | ScoreFileError]]:
        """Entries of every layer, one per key (pairs merged over layers; the top path shown)."""
        seen: dict[tuple[str, str], int] = {}
        out: list[tuple[Path, ScoreEntry | ScoreFileError]] = []
        for store in self.stores:
            for path, item in store.entries():
                ident = (path.parent.name, path.name)
                if ident in seen and isinstance(item, ScoreEntry):
                    first_path, first = out[seen[ident]]
                    if isinstance(first, ScoreEntry):
                        out[seen[ident]] = (first_path, first.merged_with(item))
                    continue
                seen.setdefault(ident, len(out))
                out.append((path, item))
        yield from out


def migrate(root: Path, libraries: dict[str, dict[str, str]] | None = None) -> list[Path]:
    """Rewrite format-1 entries under ``root`` in the current format, scores untouched (the
    checksum is computed from them); ``libraries`` maps ranker names to recorded versions.
    Returns the files rewritten."""
    rewritten = []
    for path in sorted(Path(root).glob("*/*.json")):
        entry = read_entry(path, allow_legacy=True)
        if json.loads(path.read_text()).get("format") == FORMAT:
            continue
        if libraries and entry.ranker in libraries and not entry.libraries:
            entry.libraries = dict(libraries[entry.ranker])
        write_text_atomic(path, entry.to_json())
        rewritten.append(path)
    return rewritten
