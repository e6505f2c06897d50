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

``datasets`` is imported only by :func:`hf_features` and :func:`to_hf_dataset`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sourcesum.data.pairs import Split
from sourcesum.errors import SourceSumError

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
