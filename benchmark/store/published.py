"""The paper's published system outputs, re-scored here as leaderboard rows.

Suhara & Alikaniotis (2024) published the per-sentence scores of their 8 methods
(``outputs/<split>__<method>.json`` in ``suhara/sourcesum``: the split's own JSON with one
numeric field per annotation, named after the method) and the two prompt templates of their
prompted-LLM method (``data/gpt_prompt_v1.txt``, ``_v2``). The manifest's source
``sourcesum-published`` pins every file by sha256 and commit and lists the methods. A file is
found like a split (:mod:`sourcesum.data.sources`):

1. ``$SOURCESUM_PUBLISHED_DIR/<file>`` (``scripts/env.sh`` and the tests point it at
   ``../shared/sourcesum-published`` when that folder exists),
2. ``data/published/<file>`` (earlier downloads; git-ignored),
3. download from the pinned URL into ``data/published/``,

and the bytes parsed are the bytes checked against the sha256. The files are never committed.

Each file becomes an in-memory :class:`~sourcesum.store.ScoreEntry` (ranker
``published:<method>``, label e.g. ``published: perplexity gain (PEGASUS)``), so published rows
get the same evaluation, CIs, significance tests, tie report, ``compare`` and ``show`` as any
ranker. NaN scores are replaced by 0, as the paper did, and counted (sentences, and pairs all of
whose sentences were NaN: every sentence of such a pair ties).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from sourcesum.data import PinnedFile, Source, Split, dataset, load_split
from sourcesum.data.sources import file_checksum, read_verified
from sourcesum.data.sourcesum import read_prompt  # noqa: F401  (re-exported: the prompts are pinned files of this source)
from sourcesum.errors import UnknownNameError
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.scorefiles import LoadedScores, check_against_split, parse_sourcesum_json

RANKER_PREFIX = "published:"
SOURCE = "sourcesum-published"
"""The source of the published outputs, declared by the SourceSum dataset."""


@dataclass(frozen=True)
class PublishedMethod:
    """One of the paper's methods: its output field, row label, model and reported numbers."""

    key: str
    label: str
    model: str | None
    description: str
    reported: dict[str, tuple[float, float]]
    """split -> (NDCG, MAP) as printed in the paper's main table (4 decimals)."""

    @property
    def ranker(self) -> str:
        """The row's ranker name, e.g. ``published:perplexity``."""
        return RANKER_PREFIX + self.key

    @property
    def splits(self) -> list[str]:
        return list(self.reported)


@dataclass(frozen=True)
class PublishedOutput:
    """A verified published file read as a score-store entry, with its NaN counts."""

    method: PublishedMethod
    entry: ScoreEntry
    path: Path
    nan_replaced: int
    all_nan_pairs: int


def source() -> Source:
    """The pinned source of the paper's outputs and prompts."""
    return dataset("sourcesum").sources()[SOURCE]


def _section() -> dict[str, Any]:
    return dict(source().extra)


def published_methods() -> list[PublishedMethod]:
    """The paper's methods in the manifest's order."""
    return [
        PublishedMethod(
            key, m["label"], m["model"], m["description"], {s: (v[0], v[1]) for s, v in m["reported"].items()}
        )
        for key, m in _section()["methods"].items()
    ]


def published_method(key: str) -> PublishedMethod:
    """The method whose output field (or ranker name ``published:<field>``) is ``key``."""
    key = key.removeprefix(RANKER_PREFIX)
    for method in published_methods():
        if method.key == key:
            return method
    raise UnknownNameError(
        f"unknown published method {key!r}; choose from {', '.join(m.key for m in published_methods())}"
    )


def published_file(file: str) -> PinnedFile:
    """The pinned file ``file`` (e.g. ``xsum_pegasus__rouge1.json`` or ``gpt_prompt_v2.txt``)."""
    if file not in source().files:
        raise UnknownNameError(f"no published file {file!r} in the manifest")
    return source().file(file, kind="published file")


@cache
def load_published(split: str, key: str) -> PublishedOutput:
    """The verified output of method ``key`` on ``split`` as an in-memory store entry."""
    method = published_method(key)
    if split not in method.reported:
        raise UnknownNameError(
            f"the paper published no {method.key} output for split {split!r}; it has {', '.join(method.splits)}"
        )
    info = published_file(f"{split}__{method.key}.json")
    path, payload = read_verified(info)
    data = load_split(split)
    loaded, checksum = _parsed(payload, path, method.key, file_checksum(info, payload), data)
    entry = ScoreEntry(
        ranker=method.ranker,
        version=source().commit[:10],
        params={},
        label=method.label,
        split=split,
        data_sha256=data.sha256,
        n_pairs=len(data),
        scores=loaded.scores,
    )
    entry.verified = (id(entry.scores), len(entry.scores), checksum)
    return PublishedOutput(method, entry, path, loaded.nan_replaced, loaded.all_nan_pairs)


def _parsed(payload: bytes, path: Path, field: str, sha256: str, split: Split) -> tuple[LoadedScores, str]:
    """The scores of a published file's verified bytes (``sha256``), checked against ``split``
    (:func:`~sourcesum.store.scorefiles.check_against_split`), and their
    :func:`~sourcesum.store.entry.scores_sha256`; from the memo (:mod:`sourcesum.util.memo`) when these
    bytes were parsed and checked against this split before by the same code."""
    from sourcesum.store.entry import scores_of_record, scores_record, scores_sha256
    from sourcesum.util import memo

    def parse() -> tuple[LoadedScores, str]:
        loaded = parse_sourcesum_json(payload.decode("utf-8"), path, field)
        check_against_split(loaded, split)
        return loaded, scores_sha256(loaded.scores)

    def to_record(parsed: tuple[LoadedScores, str]) -> memo.Record:
        loaded, checksum = parsed
        counts = {"nan_replaced": loaded.nan_replaced, "all_nan_pairs": loaded.all_nan_pairs}
        return scores_record(loaded.scores, {**counts, "scores_sha256": checksum})

    def from_record(record: memo.Record) -> tuple[LoadedScores, str]:
        value = record.value
        if not isinstance(value, dict) or not all(
            isinstance(value.get(name), int) for name in ("nan_replaced", "all_nan_pairs")
        ):
            raise memo.MemoMismatch("not a parsed published file")
        if not isinstance(value.get("scores_sha256"), str):
            raise memo.MemoMismatch("not a parsed published file")
        scores = scores_of_record(record)
        loaded = LoadedScores(path, scores, value["nan_replaced"], None, value["all_nan_pairs"])
        return loaded, value["scores_sha256"]

    code = memo.code_digest(memo.module_files([__name__, "sourcesum.store.scorefiles"]))
    parts = [code, sha256, field, str(path), split.name, split.sha256]
    return memo.memoised("published", parts, parse, to_record, from_record)
