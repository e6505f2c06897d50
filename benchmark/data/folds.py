"""Fold assignment by document: the one rule behind every grouped cross-validation here (the
``kfold`` training protocol and supervised rankers' inner cross-validation)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def document_folds(documents: Sequence[str], folds: int, seed: int) -> np.ndarray:
    """Fold of each item: its document's position in a seeded permutation of the sorted
    distinct documents, modulo ``folds`` (items of one document share a fold)."""
    distinct = sorted(set(documents))
    order = np.random.default_rng(seed).permutation(len(distinct))
    fold_of = {distinct[j]: position % folds for position, j in enumerate(order)}
    return np.array([fold_of[d] for d in documents])
