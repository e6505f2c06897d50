"""Datasets (tasks) as plugins: one module per dataset, registered like a ranker.

A dataset is a subclass of :class:`Dataset` that declares

* ``name``, ``title``, ``description`` and ``citation`` (BibTeX);
* its ``splits`` (:class:`SplitSpec`: name, title, number of pairs, corpus, the files it
  reads, whether it is on the dataset's board), in board column order first;
* its relevance policy: ``binary_threshold`` (binary relevance is ``graded >=
  binary_threshold``) and ``relevance_text``, one sentence saying how raw labels become graded
  relevance; ``human_agreement`` when its judgments carry per-annotator votes;
* :meth:`sources`, the pinned files it reads (:class:`~sourcesum.data.sources.Source`);
* :meth:`parse`, which turns the verified bytes of a split's files into pairs and judgments;
* optionally :meth:`label_notes`, measured facts about its labels that the board states.

Everything the board says about a dataset (which splits are columns, what "Avg" averages,
which splits share documents, the prose of the header) comes from this declaration; nothing
outside a dataset's own module names its splits or counts its pairs.

Registering: built-in datasets are listed in :data:`BUILTIN_DATASETS` (``name ->
"module:Class"``, imported on first use); a package adds one through the entry point group
``sourcesum.datasets`` whose value names the class (or a module that ``@register_dataset``\\ s
it). Split names are global: two datasets may not declare the same split name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import ClassVar

import numpy as np
from sourcesum.data.pairs import Judgment, Pair, Split
from sourcesum.data.sources import (
    UNPINNED_PREFIX,
    PinnedFile,
    Source,
    file_checksum,
    local_copy,
    read_verified,
    warn_unpinned,
)
from sourcesum.errors import DataError, UnknownNameError
from sourcesum.registry import NAME, Registry
from sourcesum.util.hashing import digest


@dataclass(frozen=True)
class SplitSpec:
    """One split as its dataset declares it."""

    name: str
    title: str
    pairs: int
    corpus: str
    files: tuple[str, ...]
    """The source files the split is parsed from (``(source name, file name)`` pairs are
    :meth:`Dataset.split_files`)."""
    board: bool = False
    """A column of the dataset's board."""
    source: str = ""
    """The source the files belong to (default: the dataset's first source)."""


@dataclass(frozen=True)
class ParsedSplit:
    """What :meth:`Dataset.parse` returns: pairs in file order, their judgments, and (optional)
    each pair's resampling cluster (default: its document)."""

    pairs: tuple[Pair, ...]
    judgments: tuple[Judgment, ...]
    clusters: tuple[str, ...] = ()


class Dataset:
    """Base class of every dataset (see the module docstring)."""

    name: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str] = ""
    citation: ClassVar[str] = ""
    """BibTeX of the dataset's paper(s)."""
    splits: ClassVar[tuple[SplitSpec, ...]] = ()
    binary_threshold: ClassVar[float] = 1.0
    max_graded: ClassVar[float] = 1.0
    """The largest graded relevance its labels may hold: every graded label is checked to be
    finite and within ``[0, max_graded]``, every soft label within ``[0, 1]``, before use."""
    relevance_text: ClassVar[str] = ""
    """How raw labels become graded and binary relevance, in one or two sentences (Markdown)."""
    human_agreement: ClassVar[bool] = False
    """Its judgments carry per-annotator votes, so the board shows the human-agreement table."""
    text_notice: ClassVar[str] = ""
    """The attribution a page showing the dataset's text must carry (plain text; the site's
    explorer prints it under the pair), empty if none is required."""
    shared_documents_text: ClassVar[str] = ""
    """Which splits share documents, in words (the board's statistics note); empty if none."""
    resampling_text: ClassVar[str] = ""
    """What resampling by cluster means on this dataset, in words (the board's statistics
    note), e.g. which pairs move together."""
    published_source: ClassVar[str] = ""
    """The source holding published systems' per-sentence outputs (shown as board rows), if
    any (:mod:`sourcesum.store.published`)."""
    training_splits: ClassVar[dict[str, tuple[str, ...]]] = {}
    """For a split, the splits of the same dataset a model may be trained on to score it (the
    ``in-domain`` protocol), e.g. WiCE's ``wice_test`` -> ``("wice_dev",)``."""

    def sources(self) -> dict[str, Source]:
        """The pinned sources, by name (the first is the default source of the splits)."""
        raise NotImplementedError

    def label_notes(self, spec: SplitSpec) -> str:
        """What a reader of the board must know about how ``spec``'s raw labels became relevance,
        counted on its verified files (Markdown, a sentence or two; the board prints it in the
        dataset's header), e.g. labels that could not be placed on any candidate. Empty by
        default."""
        return ""

    def parse(self, spec: SplitSpec, files: dict[str, tuple[Path, bytes]]) -> ParsedSplit:
        """Pairs and judgments of ``spec`` from its files' verified bytes (file name -> (path,
        bytes)); malformed input is a :class:`~sourcesum.errors.DataError` naming the file and
        pair."""
        raise NotImplementedError

    # -- provided ---------------------------------------------------------------------------
    @classmethod
    def check_labels(cls, judgment: Judgment, where: str) -> None:
        """The relevance policy's range: graded labels finite within ``[0, max_graded]``, soft
        labels within ``[0, 1]``, votes 0 or 1 (else a :class:`~sourcesum.errors.DataError`
        starting with ``where``)."""
        for kind, values, high in (("graded", judgment.graded, cls.max_graded), ("soft", judgment.soft, 1.0)):
            bad = ~(np.isfinite(values) & (values >= 0) & (values <= high))
            if bad.any():
                value = values[np.flatnonzero(bad)[0]]
                raise DataError(
                    f"{where}: {kind} relevance {float(value)!r} of sentence {int(np.flatnonzero(bad)[0])} is not "
                    f"a finite number in [0, {high:g}] (the dataset's relevance policy"
                    + (", max_graded)" if kind == "graded" else ")")
                )
        if judgment.votes is not None and any(v not in (0, 1) for row in judgment.votes for v in row):
            raise DataError(f"{where}: an annotator's vote is not 0 or 1")

    @classmethod
    def split_spec(cls, name: str) -> SplitSpec:
        for spec in cls.splits:
            if spec.name == name:
                return spec
        raise UnknownNameError(f"dataset {cls.name} has no split {name!r}")

    @classmethod
    def board_splits(cls) -> list[str]:
        """The splits that are columns of this dataset's board, in order."""
        return [s.name for s in cls.splits if s.board]

    def source_of(self, spec: SplitSpec) -> Source:
        sources = self.sources()
        name = spec.source or next(iter(sources))
        if name not in sources:
            raise UnknownNameError(f"dataset {self.name}: split {spec.name} names unknown source {name!r}")
        return sources[name]

    def pinned_files(self, spec: SplitSpec) -> list[PinnedFile]:
        source = self.source_of(spec)
        return [source.file(f, split=spec.name) for f in spec.files]

    def data_sha256(self, spec: SplitSpec) -> str:
        """The checksum that keys score entries: the sha256 of the split's one file, or a
        digest of the names and checksums of its files. A split with an unpinned file (read
        under ``SOURCESUM_ALLOW_UNPINNED=1``) has ``unpinned-`` and a digest of the bytes read
        (:func:`~sourcesum.data.sources.file_checksum`)."""
        pinned = self.pinned_files(spec)
        if all(p.pinned for p in pinned):
            return split_checksum([(p.file, p.sha256 or "") for p in pinned])
        return split_checksum([(p.file, file_checksum(p, read_verified(p)[1])) for p in pinned])

    def available(self, spec: SplitSpec) -> bool:
        """Every file of the split has a local copy (no download would be needed)."""
        return all(local_copy(p) is not None for p in self.pinned_files(spec))

    def load(self, spec: SplitSpec) -> Split:
        """Locate, verify, read and validate split ``spec``; whatever fails inside the
        dataset's own code is a :class:`~sourcesum.errors.DataError` naming the dataset, the
        split and its files."""
        pinned = self.pinned_files(spec)
        files = {p.file: read_verified(p, warn=False) for p in pinned}
        unpinned = [str(files[p.file][0]) for p in pinned if not p.pinned]
        if unpinned:
            warn_unpinned(f"dataset {self.name}, split {spec.name}", unpinned)
        sha256 = split_checksum([(p.file, file_checksum(p, files[p.file][1])) for p in pinned])
        path = files[spec.files[0]][0]
        try:
            parsed = self.parse(spec, files)
            if not isinstance(parsed, ParsedSplit):
                raise TypeError(f"parse returned {type(parsed).__name__}, not a ParsedSplit")
        except DataError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin's failure, named for its user
            where = ", ".join(str(f[0]) for f in files.values())
            raise DataError(
                f"dataset {self.name}, split {spec.name} ({where}): its parser failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if len(parsed.pairs) != spec.pairs:
            raise DataError(f"{path}: {len(parsed.pairs)} pairs, dataset {self.name} declares {spec.pairs}")
        seen: set[str] = set()
        for pair in parsed.pairs:
            if pair.id in seen:
                raise DataError(f"{path}: pair {pair.id}: duplicate id")
            seen.add(pair.id)
            if pair.split != spec.name:
                raise DataError(f"{path}: pair {pair.id} is labelled split {pair.split!r}, not {spec.name!r}")
            if spec.corpus and pair.corpus and pair.corpus != spec.corpus:
                raise DataError(f"{path}: pair {pair.id} is from corpus {pair.corpus!r}, not {spec.corpus!r}")
        if len(parsed.judgments) != len(parsed.pairs):
            raise DataError(f"{path}: {len(parsed.judgments)} judgments for {len(parsed.pairs)} pairs")
        for pair, judgment in zip(parsed.pairs, parsed.judgments, strict=True):
            if len(judgment.graded) != pair.n_sentences or len(judgment.soft) != pair.n_sentences:
                raise DataError(
                    f"{path}: pair {pair.id}: labels do not cover its {pair.n_sentences} sentences"
                )
            self.check_labels(judgment, f"{path}: dataset {self.name}, pair {pair.id}")
        return Split(
            name=spec.name,
            dataset=self.name,
            title=spec.title,
            path=path,
            sha256=sha256,
            pairs=parsed.pairs,
            judgments=parsed.judgments,
            min_relevant=self.binary_threshold,
            clusters=parsed.clusters,
        )


def split_checksum(files: Sequence[tuple[str, str]]) -> str:
    """A split's data checksum from its files' ``(name, checksum)``: the one file's checksum, or
    a digest of the names and checksums of several; ``unpinned-`` first when any file is
    unpinned (so the mark survives the digest)."""
    if len(files) == 1:
        return files[0][1]
    combined = digest([[name, checksum] for name, checksum in files], length=64)
    unpinned = any(checksum.startswith(UNPINNED_PREFIX) for _, checksum in files)
    return UNPINNED_PREFIX + combined if unpinned else combined


BUILTIN_DATASETS = {
    "sourcesum": "sourcesum.data.sourcesum:SourceSum",
    "wice": "sourcesum.data.wice:WiCE",
    "qmsum": "sourcesum.data.qmsum:QMSumEvidence",
}
"""Built-in datasets, ``name -> "module:Class"``; add a line here for each new built-in."""

RESERVED_SPLIT_NAMES = ("all",)
"""Words a split may not be named: they mean something else wherever a split is named."""


def check_dataset(cls: type[Dataset]) -> None:
    """A dataset's split names are names (``[A-Za-z][A-Za-z0-9_]*``: no path component can
    hide in one), unique within it, and neither ``all`` nor a dataset's name (else
    ``--split NAME`` would mean two things)."""
    seen: set[str] = set()
    for spec in cls.splits:
        if not isinstance(spec.name, str) or not NAME.fullmatch(spec.name):
            raise TypeError(f"dataset {cls.name}: split name {spec.name!r} must match [A-Za-z][A-Za-z0-9_]*")
        if spec.name in RESERVED_SPLIT_NAMES or spec.name == cls.name or DATASETS.known(spec.name):
            raise TypeError(f"dataset {cls.name}: split name {spec.name!r} is taken (by 'all' or a dataset)")
        if spec.name in seen:
            raise TypeError(f"dataset {cls.name}: two splits are named {spec.name!r}")
        seen.add(spec.name)


DATASETS: Registry[type[Dataset]] = Registry("dataset", Dataset, "sourcesum.datasets", check=check_dataset)
register_dataset = DATASETS.register


DATASETS.register_lazy(BUILTIN_DATASETS)


@cache
def dataset(name: str) -> Dataset:
    """The registered dataset ``name`` (one instance per process)."""
    return DATASETS.get(name)()


def all_datasets() -> list[Dataset]:
    """Every registered dataset, built-ins first (in declaration order), then plugins by name."""
    names = list(BUILTIN_DATASETS) + [n for n in DATASETS.names() if n not in BUILTIN_DATASETS]
    return [dataset(n) for n in names]


def _split_owners() -> dict[str, Dataset]:
    owners: dict[str, Dataset] = {}
    for ds in all_datasets():
        for spec in ds.splits:
            if spec.name in DATASETS or spec.name in RESERVED_SPLIT_NAMES:
                raise UnknownNameError(
                    f"dataset {ds.name}: split name {spec.name!r} is taken (by 'all' or a dataset)"
                )
            if spec.name in owners:
                raise UnknownNameError(
                    f"split {spec.name!r} is declared by datasets {owners[spec.name].name} and {ds.name}"
                )
            owners[spec.name] = ds
    return owners


def dataset_of(split: str) -> Dataset:
    """The dataset declaring ``split``; :class:`UnknownNameError` lists the valid names."""
    owners = _split_owners()
    if split not in owners:
        raise UnknownNameError(f"unknown split {split!r}; choose from {', '.join(owners)} or 'all'")
    return owners[split]


def split_names(include_all: bool = True) -> list[str]:
    """Registered split names, dataset by dataset: board splits first, then (``include_all``)
    the others."""
    names: list[str] = []
    for ds in all_datasets():
        names += [s.name for s in ds.splits if s.board]
        if include_all:
            names += [s.name for s in ds.splits if not s.board]
    return names


def split_spec(name: str) -> SplitSpec:
    return dataset_of(name).split_spec(name)


def resolve_split_names(spec: str, default_dataset: str = "sourcesum") -> list[str]:
    """Expand a comma-separated split spec: a split name, a dataset name (its board splits),
    or ``all`` (the board splits of ``default_dataset``)."""
    names: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if part == "all":
            expanded = dataset(default_dataset).board_splits()
        elif part in DATASETS and part not in _split_owners():
            expanded = dataset(part).board_splits()
        else:
            dataset_of(part)
            expanded = [part]
        for name in expanded:
            if name not in names:
                names.append(name)
    return names


_LOADED: dict[str, Split] = {}


def load_split(name: str) -> Split:
    """Locate, verify, read and validate split ``name`` (memoised per process)."""
    if name not in _LOADED:
        ds = dataset_of(name)
        _LOADED[name] = ds.load(ds.split_spec(name))
    return _LOADED[name]


def corpus_splits(splits: Sequence[str]) -> dict[str, list[str]]:
    """``splits`` grouped by corpus (in order of first appearance)."""
    out: dict[str, list[str]] = {}
    for name in splits:
        out.setdefault(split_spec(name).corpus, []).append(name)
    return out
