"""Folds (sourcesum.data.folds): documents grouped into folds that follow the seed."""

from __future__ import annotations

import numpy as np
from sourcesum.data import load_split
from sourcesum.data.folds import document_folds

ALPHA = ("synth_alpha_sys", "synth_alpha_ref")


def test_folds_group_documents_and_follow_the_seed():
    pairs = [p for name in ALPHA for p in load_split(name)]  # two pairs per document
    documents = [p.document_key for p in pairs]
    folds = document_folds(documents, 2, 0)
    assert len(set(documents)) == 3
    for document in set(documents):
        assert len({f for d, f in zip(documents, folds, strict=True) if d == document}) == 1
    # many documents: dealt round-robin over a seeded permutation of the sorted keys
    many = [f"doc{i % 23}" for i in range(60)]
    folds = document_folds(many, 5, 0)
    for document in set(many):
        assert len({f for d, f in zip(many, folds, strict=True) if d == document}) == 1
    per_fold = np.bincount([folds[many.index(d)] for d in set(many)], minlength=5)
    assert per_fold.max() - per_fold.min() <= 1
    assert (document_folds(many, 5, 0) == folds).all()
    assert (document_folds(list(reversed(many)), 5, 0) == folds[::-1]).all()  # order-free
    assert (document_folds(many, 5, 1) != folds).any()
