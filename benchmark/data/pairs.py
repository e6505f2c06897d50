"""What a split holds: pair inputs (what rankers see) and judgments (what only the harness reads).

* :class:`Pair`: one (document, summary) pair's inputs: the document's sentences, the summary,
  and metadata (ids, corpus, the summarizer model, the reference summary, a query where the
  task has one). It carries **no label**: reading ``pair.votes``, ``pair.graded`` or
  ``pair.binary`` raises :class:`~sourcesum.errors.LabelAccessError`, which the runner reports
  naming the ranker.
* :class:`Judgment`: one pair's labels, per sentence: ``graded`` relevance (nDCG reads it),
  ``soft`` (the share of annotators who voted the sentence a source: what supervised rankers
  fit) and, where the dataset has them, each annotator's 0/1 ``votes`` (the human-agreement
  table needs them).
* :class:`Split`: a loaded, validated split: its pairs in file order, their judgments in the
  same order, the binary threshold (``binary = graded >= min_relevant``), the resampling
  cluster of each pair and provenance (dataset, file, sha256).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from sourcesum.data.sources import UNPINNED_PREFIX
from sourcesum.errors import LabelAccessError

LABEL_FIELDS = frozenset({"votes", "graded", "binary", "judgment", "relevance"})
"""Attribute names a ranker might reach for on a pair that are labels, not inputs."""


@dataclass(frozen=True, eq=False)
class Pair:
    """The inputs of one (document, summary) pair: the unit a ranker scores.

    ``sentences`` are the candidate sentences (the document split as the dataset split it),
    ``summary`` the text they may have contributed to. Pairs compare by identity.
    """

    id: str
    split: str
    sentences: tuple[str, ...]
    summary: str
    document: str
    corpus: str = ""
    model: str = ""
    """The system that wrote the summary (SourceSum: ``pegasus-xsum`` or ``reference``)."""
    original_id: str = ""
    summary_idx: int = 0
    reference_summary: str = ""
    query: str = ""
    """The query the summary answers, for query-focused tasks (empty otherwise)."""

    @property
    def n_sentences(self) -> int:
        return len(self.sentences)

    @cached_property
    def document_key(self) -> str:
        """Identifies the document (a hash of its text): pairs on the same document share this
        key, in every split (the runner groups and shards pairs by it; ``fit`` sees each
        document once). sha1, not the package's sha256 helpers: changing it would move every
        pair to another shard and resampling cluster id."""
        return hashlib.sha1(self.document.encode("utf-8")).hexdigest()[:16]

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: label fields are never attributes of a Pair.
        if name in LABEL_FIELDS:
            raise LabelAccessError(
                f"pair {self.__dict__.get('id', '?')}: rankers receive pair inputs without labels "
                f"(read .{name}); a ranker that learns from labels declares a training protocol "
                "and receives them through train() (see sourcesum.runner.protocols)"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _frozen(values: Sequence[float]) -> np.ndarray:
    array = np.array(values, dtype=float)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Judgment:
    """One pair's labels, per sentence (see the module docstring)."""

    graded: np.ndarray
    soft: np.ndarray
    votes: tuple[tuple[int, ...], ...] | None = None
    """Per sentence, each annotator's 0/1 vote (None when the dataset has no per-annotator
    labels)."""

    @classmethod
    def of(
        cls, graded: Sequence[float], soft: Sequence[float], votes: Sequence[Sequence[int]] | None = None
    ) -> Judgment:
        return cls(_frozen(graded), _frozen(soft), None if votes is None else tuple(tuple(v) for v in votes))

    @classmethod
    def from_votes(cls, votes: Sequence[Sequence[int]]) -> Judgment:
        """Annotators' 0/1 votes per sentence: graded = the number of 1-votes, soft = their
        share among the sentence's annotators."""
        return cls.of([sum(v) for v in votes], [sum(v) / len(v) for v in votes], votes)

    def binary(self, min_relevant: float) -> np.ndarray:
        """``1.0`` where ``graded >= min_relevant``."""
        return (self.graded >= min_relevant).astype(float)


@dataclass(frozen=True, eq=False)
class Split:
    """A loaded, validated split (see the module docstring). Iterating yields its pairs."""

    name: str
    dataset: str
    title: str
    path: Path
    sha256: str
    """The data checksum that keys score entries (the file's sha256; several files: a digest
    of their names and checksums; ``unpinned-...`` for data read unpinned)."""
    pairs: tuple[Pair, ...]
    judgments: tuple[Judgment, ...]
    min_relevant: float
    """Binary relevance: ``graded >= min_relevant``."""
    clusters: tuple[str, ...] = field(default=())
    """Per pair, the resampling unit of the statistics (default: its document)."""

    def __post_init__(self) -> None:
        if len(self.judgments) != len(self.pairs):
            raise ValueError(
                f"split {self.name}: {len(self.pairs)} pairs but {len(self.judgments)} judgments"
            )
        if not self.clusters:
            object.__setattr__(self, "clusters", tuple(p.document_key for p in self.pairs))
        elif len(self.clusters) != len(self.pairs):
            raise ValueError(f"split {self.name}: {len(self.pairs)} pairs but {len(self.clusters)} clusters")

    @property
    def unpinned(self) -> bool:
        """Read from files without a pinned sha256 (``SOURCESUM_ALLOW_UNPINNED=1``): its data
        checksum, and so every entry computed on it, starts ``unpinned-``."""
        return self.sha256.startswith(UNPINNED_PREFIX)

    def __iter__(self) -> Iterator[Pair]:
        return iter(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    @cached_property
    def by_id(self) -> dict[str, Pair]:
        return {pair.id: pair for pair in self.pairs}

    @cached_property
    def index(self) -> dict[str, int]:
        """Position of each pair id."""
        return {pair.id: i for i, pair in enumerate(self.pairs)}

    def judgment(self, pair_id: str) -> Judgment:
        return self.judgments[self.index[pair_id]]

    def graded(self, pair_id: str) -> np.ndarray:
        return self.judgment(pair_id).graded

    def binary(self, pair_id: str) -> np.ndarray:
        return self.judgment(pair_id).binary(self.min_relevant)

    def subset(self, pair_ids: Sequence[str] | Mapping[str, Any]) -> Split:
        """The split restricted to ``pair_ids`` (file order kept); the split itself if all."""
        keep = set(pair_ids)
        if len(keep) == len(self.pairs) and all(p.id in keep for p in self.pairs):
            return self
        chosen = [i for i, p in enumerate(self.pairs) if p.id in keep]
        return Split(
            self.name,
            self.dataset,
            self.title,
            self.path,
            self.sha256,
            tuple(self.pairs[i] for i in chosen),
            tuple(self.judgments[i] for i in chosen),
            self.min_relevant,
            tuple(self.clusters[i] for i in chosen),
        )
