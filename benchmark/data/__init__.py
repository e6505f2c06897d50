"""The data layer: datasets, their pinned sources, and loaded splits (inputs apart from labels).

* :mod:`~sourcesum.data.pairs`: :class:`Pair` (what rankers see), :class:`Judgment` (labels),
  :class:`Split` (both, kept apart);
* :mod:`~sourcesum.data.sources`: pinned files: locate, verify by sha256, download;
* :mod:`~sourcesum.data.datasets`: the :class:`Dataset` plugin base, its registry and the
  split lookups (:func:`load_split`, :func:`split_names`, :func:`resolve_split_names`);
* one module per built-in dataset (:mod:`~sourcesum.data.sourcesum`).
"""

from sourcesum.data.datasets import (
    DATASETS,
    Dataset,
    ParsedSplit,
    SplitSpec,
    all_datasets,
    corpus_splits,
    dataset,
    dataset_of,
    load_split,
    register_dataset,
    resolve_split_names,
    split_names,
    split_spec,
)
from sourcesum.data.pairs import Judgment, Pair, Split
from sourcesum.data.sources import PinnedFile, Source, manifest

__all__ = [
    "DATASETS",
    "Dataset",
    "Judgment",
    "Pair",
    "ParsedSplit",
    "PinnedFile",
    "Source",
    "Split",
    "SplitSpec",
    "all_datasets",
    "corpus_splits",
    "dataset",
    "dataset_of",
    "load_split",
    "manifest",
    "register_dataset",
    "resolve_split_names",
    "split_names",
    "split_spec",
]
