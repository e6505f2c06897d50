"""A loaded split as tables for other tools: a Hugging Face ``datasets.Dataset`` (one row per
pair, typed :func:`hf_features`) and a pandas DataFrame (one row per sentence).

Both are built in memory from a :class:`~sourcesum.data.pairs.Split`, i.e. from the bytes
:func:`~sourcesum.data.load_split` verified against their pinned sha256 and parsed: no Arrow
cache or other file sits between the verified bytes and the table (``Dataset.from_dict``), so
an edited copy of a file can never reach one. No score and no ranker enters them.

Columns per pair (:data:`PAIR_COLUMNS`): ``id`` (the pair id), ``document_key``
(:attr:`Pair.document_key <sourcesum.data.pairs.Pair.document_key>`), ``cluster`` (the
resampling unit of the board's statistics), ``corpus``, ``model`` (the summarizer),
``original_id``, ``summary_idx``, ``summary``, ``query`` (empty unless the task has one),
``reference_summary``, ``document``, ``sentences`` (the candidates, in order), and per sentence:
``graded`` (the graded relevance nDCG reads: SourceSum's vote count), ``binary`` (1 where
``graded >=`` the dataset's threshold: what AP reads), ``soft`` (the share of annotators, or of
supporting sets, marking the sentence) and ``votes`` (the raw labels: each annotator's 0/1
vote per sentence; null for a dataset without per-annotator labels).

The other way, a dataset plugin whose files are in this layout (a Parquet file per split, as
``sourcesum export --format hf`` writes them) parses them in its ``parse`` with
:func:`hf_dataset_from_bytes` and :func:`parsed_from_hf`: from the bytes the harness verified
against the pin, never from the file again, so the same verification holds.

``datasets`` is imported only by :func:`hf_features`, :func:`to_hf_dataset` and
:func:`hf_dataset_from_bytes`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sourcesum.data.datasets import ParsedSplit
from sourcesum.data.pairs import Judgment, Pair, Split
from sourcesum.errors import DataError, SourceSumError

if TYPE_CHECKING:
    import pandas as pd

PAIR_COLUMNS = (
    "id",
    "document_key",
    "cluster",
    "corpus",
    "model",
    "original_id",
    "summary_idx",
    "summary",
    "query",
    "reference_summary",
    "document",
    "sentences",
    "graded",
    "binary",
    "soft",
    "votes",
)
"""The columns of :func:`pair_columns` and :func:`to_hf_dataset`, in order."""

SENTENCE_COLUMNS = (
    "split",
    "pair_id",
    "document_key",
    "cluster",
    "corpus",
    "model",
    "sentence_index",
    "sentence",
    "summary",
    "query",
    "graded",
    "binary",
    "soft",
    "votes",
)
"""The columns of :func:`to_dataframe`, in order."""


def pair_columns(split: Split) -> dict[str, list[Any]]:
    """The pairs of ``split`` as columns (:data:`PAIR_COLUMNS`), in file order."""
    columns: dict[str, list[Any]] = {name: [] for name in PAIR_COLUMNS}
    for pair, judgment, cluster in zip(split.pairs, split.judgments, split.clusters, strict=True):
        row = {
            "id": pair.id,
            "document_key": pair.document_key,
            "cluster": cluster,
            "corpus": pair.corpus,
            "model": pair.model,
            "original_id": pair.original_id,
            "summary_idx": pair.summary_idx,
            "summary": pair.summary,
            "query": pair.query,
            "reference_summary": pair.reference_summary,
            "document": pair.document,
            "sentences": list(pair.sentences),
            "graded": [float(g) for g in judgment.graded],
            "binary": [int(b) for b in judgment.binary(split.min_relevant)],
            "soft": [float(s) for s in judgment.soft],
            "votes": None if judgment.votes is None else [list(v) for v in judgment.votes],
        }
        for name in PAIR_COLUMNS:
            columns[name].append(row[name])
    return columns


def to_dataframe(split: Split) -> pd.DataFrame:
    """``split`` as a pandas DataFrame with one row per sentence (:data:`SENTENCE_COLUMNS`):
    pairs in file order, each pair's sentences in document order; ``votes`` holds a tuple of
    each annotator's 0/1 vote on the sentence, or None."""
    import pandas as pd

    rows: dict[str, list[Any]] = {name: [] for name in SENTENCE_COLUMNS}
    for pair, judgment, cluster in zip(split.pairs, split.judgments, split.clusters, strict=True):
        binary = judgment.binary(split.min_relevant)
        for i, sentence in enumerate(pair.sentences):
            values = (
                split.name,
                pair.id,
                pair.document_key,
                cluster,
                pair.corpus,
                pair.model,
                i,
                sentence,
                pair.summary,
                pair.query,
                float(judgment.graded[i]),
                int(binary[i]),
                float(judgment.soft[i]),
                None if judgment.votes is None else judgment.votes[i],
            )
            for name, value in zip(SENTENCE_COLUMNS, values, strict=True):
                rows[name].append(value)
    frame = pd.DataFrame(rows)
    return frame.astype({"sentence_index": "int64", "graded": "float64", "binary": "int8", "soft": "float64"})


def hf_datasets() -> Any:
    """The ``datasets`` module, or one :class:`~sourcesum.errors.SourceSumError` line giving
    the ``pip install`` that brings it."""
    try:
        import datasets
    except ImportError as exc:
        raise SourceSumError(
            "Hugging Face datasets are not installed: pip install 'sourcesum-bench[hf]' (or pip install datasets)"
        ) from exc
    return datasets


def hf_features() -> Any:
    """The ``datasets.Features`` of :func:`to_hf_dataset`: one schema for every dataset (strings,
    ``summary_idx`` int32, per-sentence lists of float64 ``graded`` and ``soft``, int8
    ``binary``, and ``votes`` a list per sentence of int8 votes)."""
    datasets = hf_datasets()
    text = datasets.Value("string")
    return datasets.Features(
        {
            **{name: text for name in PAIR_COLUMNS[:6]},
            "summary_idx": datasets.Value("int32"),
            "summary": text,
            "query": text,
            "reference_summary": text,
            "document": text,
            "sentences": datasets.List(text),
            "graded": datasets.List(datasets.Value("float64")),
            "binary": datasets.List(datasets.Value("int8")),
            "soft": datasets.List(datasets.Value("float64")),
            "votes": datasets.List(datasets.List(datasets.Value("int8"))),
        }
    )


def to_hf_dataset(split: Split) -> Any:
    """``split`` as an in-memory ``datasets.Dataset``: one row per pair in file order,
    :func:`hf_features`, its ``split`` the harness's split name and its description naming the
    dataset and the split's data checksum."""
    datasets = hf_datasets()
    features = hf_features()
    info = datasets.DatasetInfo(
        description=f"{split.title} ({split.name} of dataset {split.dataset}; data sha256 {split.sha256})",
        features=features,
    )
    return datasets.Dataset.from_dict(
        pair_columns(split), features=features, info=info, split=datasets.NamedSplit(split.name)
    )


def hf_dataset_from_bytes(path: Path, payload: bytes) -> Any:
    """The Parquet file ``path`` as a ``datasets.Dataset``, read from ``payload``, the bytes the
    harness verified (:meth:`Dataset.parse <sourcesum.data.datasets.Dataset.parse>` receives
    them); unreadable bytes are a :class:`~sourcesum.errors.DataError` naming ``path``."""
    datasets = hf_datasets()
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(pa.BufferReader(payload))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataError(f"{path}: not a Parquet file ({exc})") from exc
    return datasets.Dataset(table)


def parsed_from_hf(rows: Any, split: str, path: Path) -> ParsedSplit:
    """The pairs and judgments of ``rows`` (a ``datasets.Dataset`` or any iterable of dicts with
    :data:`PAIR_COLUMNS`; ``cluster``, ``votes`` and the metadata columns may be absent) as split
    ``split``: the inverse of :func:`pair_columns`. ``binary`` is not read (the dataset's
    threshold decides it); a missing column or a label list whose length differs from the
    sentences' is a :class:`~sourcesum.errors.DataError` naming ``path`` and the pair."""
    pairs: list[Pair] = []
    judgments: list[Judgment] = []
    clusters: list[str] = []
    for number, row in enumerate(rows, start=1):
        where = f"{path}: row {number} (pair {row.get('id', '?')})"
        try:
            sentences = tuple(str(s) for s in row["sentences"])
            graded, soft, votes = list(row["graded"]), list(row["soft"]), row.get("votes")
            pair = Pair(
                id=str(row["id"]),
                split=split,
                sentences=sentences,
                summary=str(row["summary"]),
                document=str(row["document"]),
                corpus=str(row.get("corpus") or ""),
                model=str(row.get("model") or ""),
                original_id=str(row.get("original_id") or ""),
                summary_idx=int(row.get("summary_idx") or 0),
                reference_summary=str(row.get("reference_summary") or ""),
                query=str(row.get("query") or ""),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{where}: not a pair in the Hugging Face layout ({exc!r})") from exc
        lengths = {len(sentences), len(graded), len(soft), *([len(votes)] if votes is not None else [])}
        if len(lengths) != 1:
            raise DataError(f"{where}: {len(sentences)} sentences but labels of lengths {sorted(lengths)}")
        pairs.append(pair)
        judgments.append(Judgment.of(graded, soft, votes))
        clusters.append(str(row.get("cluster") or pair.document_key))
    return ParsedSplit(tuple(pairs), tuple(judgments), tuple(clusters))
