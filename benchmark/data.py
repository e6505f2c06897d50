"""SourceSum splits: locate (local copy or pinned download), verify sha256, load, validate.

Search order for a split's file ``<name>.json``:

1. ``$SOURCESUM_DATA_DIR/<name>.json``
2. ``data/sourcesum/<name>.json`` (earlier downloads land here; git-ignored)
3. download from the manifest's pinned URL into ``data/sourcesum/``.

The bytes parsed are the bytes checked against the manifest's sha256 (read once; no cache).

Relevance (graded = number of 1-votes, binary = at least ``BINARY_MIN_VOTES`` of them) is
defined in :mod:`sourcesum.qrels`; ``Pair.graded`` and ``Pair.binary`` read it per pair.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from sourcesum import paths
from sourcesum.atomic import write_bytes_atomic
from sourcesum.errors import DataError, UnknownNameError
from sourcesum.qrels import BINARY_MIN_VOTES, binary_relevance


@dataclass(frozen=True)
class PinnedFile:
    """A file pinned by sha256 and canonical URL, looked for in ``$<env_var>``, then in
    ``download_dir()``, else downloaded there. Subclasses say what kind of file it is."""

    name: str
    file: str
    sha256: str
    url: str

    kind: ClassVar[str] = "split"
    env_var: ClassVar[str] = "SOURCESUM_DATA_DIR"

    def download_dir(self) -> Path:
        """Where downloads land and earlier downloads are found (git-ignored)."""
        return paths.DOWNLOAD_DIR


@dataclass(frozen=True)
class SplitInfo(PinnedFile):
    """One split as the manifest describes it."""

    pairs: int
    title: str


@cache
def manifest() -> dict[str, Any]:
    """The parsed ``data/manifest.json``."""
    loaded: dict[str, Any] = json.loads(paths.MANIFEST_PATH.read_text())
    return loaded


def split_names(include_all: bool = True) -> list[str]:
    """Registered split names: the four main ones, then the unfiltered ``*_all`` variants."""
    names = list(manifest()["main_splits"])
    if include_all:
        names += [n for n in manifest()["splits"] if n not in names]
    return names


def main_splits() -> list[str]:
    """The four splits of the paper's main table, in its column order."""
    return list(manifest()["main_splits"])


def split_info(name: str) -> SplitInfo:
    """Manifest entry for ``name``; :class:`UnknownNameError` lists the valid names."""
    entry = manifest()["splits"].get(name)
    if entry is None:
        raise UnknownNameError(f"unknown split {name!r}; choose from {', '.join(split_names())} or 'all'")
    url = manifest()["url_template"].format(commit=manifest()["commit"], file=entry["file"])
    return SplitInfo(name=name, url=url, **entry)


def resolve_split_names(spec: str) -> list[str]:
    """Expand a comma-separated split spec; ``all`` means the four main splits."""
    names: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        for name in main_splits() if part == "all" else [part]:
            split_info(name)
            if name not in names:
                names.append(name)
    return names


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verify(path: Path, info: PinnedFile, payload: bytes | None = None) -> bytes:
    """The bytes of ``path`` (or ``payload``, already read from it) if their sha256 matches the
    manifest, else :class:`DataError` naming ``path``. Callers parse exactly the returned bytes."""
    payload = path.read_bytes() if payload is None else payload
    actual = hashlib.sha256(payload).hexdigest()
    if actual != info.sha256:
        raise DataError(
            f"{path}: sha256 {actual[:12]}... does not match the pinned {info.sha256[:12]}... "
            f"for {info.kind} {info.name}; delete the file or point {info.env_var} at an "
            "unmodified copy"
        )
    return payload


def download(info: PinnedFile, dest_dir: Path, url: str | None = None) -> Path:
    """Fetch ``info.url`` (or ``url``) into ``dest_dir``, verify it, then move it in place."""
    url = url or info.url
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            payload = response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise DataError(
            f"cannot download {info.kind} {info.name} from {url} ({exc}); with no network, set "
            f"{info.env_var} to a folder holding {info.file}"
        ) from exc
    actual = hashlib.sha256(payload).hexdigest()
    if actual != info.sha256:
        raise DataError(
            f"download of {url} has sha256 {actual[:12]}..., expected {info.sha256[:12]}...; "
            "nothing was saved"
        )
    path = dest_dir / info.file
    write_bytes_atomic(path, payload)
    return path


def locate_file(info: PinnedFile) -> Path:
    """A local path for ``info`` (``$<env_var>``, then ``info.download_dir()``, else a verified
    download). Not verified here: :func:`read_verified_file` checks the bytes it parses."""
    env_dir = paths.env_dir(info.env_var)
    if env_dir is not None:
        candidate = env_dir / info.file
        if not candidate.is_file():
            raise DataError(
                f"{info.env_var}={env_dir} has no {info.file}; fix the variable or unset it "
                f"to use {info.download_dir()} or the download"
            )
        return candidate
    candidate = info.download_dir() / info.file
    if candidate.is_file():
        return candidate
    return download(info, info.download_dir())


def read_verified_file(info: PinnedFile) -> tuple[Path, bytes]:
    """The located file of ``info`` and its bytes, read once and checked against the pinned
    sha256: the bytes verified are the bytes parsed (no cache in between)."""
    path = locate_file(info)
    try:
        payload = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc})") from exc
    return path, verify(path, info, payload)


def locate(name: str) -> Path:
    """A local path for split ``name`` (see :func:`locate_file`)."""
    return locate_file(split_info(name))


def read_verified(name: str) -> tuple[Path, bytes]:
    """The located file of split ``name`` and its verified bytes (see :func:`read_verified_file`)."""
    return read_verified_file(split_info(name))


@dataclass(frozen=True, eq=False)
class Pair:
    """One (document, summary) pair: the unit a ranker scores and a metric evaluates.

    ``votes[i]`` holds the 0/1 votes of the annotators on document sentence ``i``.
    """

    id: str
    split: str
    corpus: str
    model: str
    original_id: str
    summary_idx: int
    sentences: tuple[str, ...]
    summary: str
    document: str
    reference_summary: str
    votes: tuple[tuple[int, ...], ...] = field(repr=False)

    @property
    def n_sentences(self) -> int:
        return len(self.sentences)

    @property
    def document_key(self) -> str:
        """Identifies the document (a hash of its text): pairs on the same document share this key,
        in every split (the runner groups and shards pairs by it)."""
        return hashlib.sha1(self.document.encode("utf-8")).hexdigest()[:16]

    @cached_property
    def graded(self) -> np.ndarray:
        """Graded relevance per sentence: the number of 1-votes (float array)."""
        return np.array([sum(v) for v in self.votes], dtype=float)

    def binary(self, min_votes: int = BINARY_MIN_VOTES) -> np.ndarray:
        """Binary relevance per sentence: 1.0 where at least ``min_votes`` annotators voted 1."""
        return binary_relevance(self.graded, min_votes)


@dataclass(frozen=True)
class Split:
    """A loaded, validated split: its pairs in file order plus provenance."""

    name: str
    path: Path
    sha256: str
    pairs: tuple[Pair, ...]

    def __iter__(self) -> Iterator[Pair]:
        return iter(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    @cached_property
    def by_id(self) -> dict[str, Pair]:
        return {pair.id: pair for pair in self.pairs}

    @property
    def title(self) -> str:
        return split_info(self.name).title


def _parse_pair(row: dict[str, Any], split: str, path: Path, position: int) -> Pair:
    """Validate one raw row and build a :class:`Pair`; errors name the file and pair."""
    pair_id = row.get("id") or f"<row {position}>"

    def fail(message: str) -> DataError:
        return DataError(f"{path}: pair {pair_id}: {message}")

    for key in ("id", "document", "gen_summary", "annotations"):
        if not row.get(key):
            raise fail(f"missing or empty field {key!r}")
    annotations = row["annotations"]
    sentences: list[str] = []
    votes: list[tuple[int, ...]] = []
    for expected, ann in enumerate(annotations):
        if ann.get("sentence_idx") != expected:
            raise fail(
                f"annotations out of order: position {expected} has sentence_idx {ann.get('sentence_idx')!r}"
            )
        text = ann.get("sentence")
        if not isinstance(text, str) or not text.strip():
            raise fail(f"sentence {expected} has no text")
        label = ann.get("label")
        if not label or any(v not in (0, 1) for v in label):
            raise fail(f"sentence {expected} has labels {label!r}; expected a non-empty 0/1 list")
        sentences.append(text)
        votes.append(tuple(int(v) for v in label))
    return Pair(
        id=str(row["id"]),
        split=split,
        corpus=str(row.get("corpus", "")),
        model=str(row.get("model", "")),
        original_id=str(row.get("original_id", "")),
        summary_idx=int(row.get("summary_idx") or 0),
        sentences=tuple(sentences),
        summary=row["gen_summary"],
        document=row["document"],
        reference_summary=row.get("ref_summary") or "",
        votes=tuple(votes),
    )


def _read_rows(path: Path, payload: bytes) -> list[dict[str, Any]]:
    """Parse a SourceSum JSON list from the verified ``payload`` of ``path``."""
    try:
        rows = json.loads(payload)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"{path}: cannot be read as a SourceSum JSON list ({exc})") from exc
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise DataError(f"{path}: expected a JSON list of objects (one per pair)")
    return rows


def parse_rows(rows: list[dict[str, Any]], split: str, path: Path) -> tuple[Pair, ...]:
    """Validate raw rows into pairs; duplicate ids are an error."""
    pairs = tuple(_parse_pair(row, split, path, i) for i, row in enumerate(rows))
    seen: set[str] = set()
    for pair in pairs:
        if pair.id in seen:
            raise DataError(f"{path}: pair {pair.id}: duplicate id")
        seen.add(pair.id)
    return pairs


@cache
def load_split(name: str) -> Split:
    """Locate, verify, read and validate split ``name`` (memoised per process)."""
    info = split_info(name)
    path, payload = read_verified(name)
    pairs = parse_rows(_read_rows(path, payload), name, path)
    if len(pairs) != info.pairs:
        raise DataError(f"{path}: {len(pairs)} pairs, the manifest says {info.pairs}")
    return Split(name=name, path=path, sha256=info.sha256, pairs=pairs)
