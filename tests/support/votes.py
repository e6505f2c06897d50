"""Splits with permuted votes, where the harness reads them: a test that permutes the votes of
the pairs a ranker scores (or of the corpus it trains on) and compares scores proves what the
ranker reads. Also the synthetic and real corpora as split-name pairs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sourcesum.data import Judgment, Split, load_split
from sourcesum.data.datasets import _LOADED

ALPHA = ("synth_alpha_sys", "synth_alpha_ref")


BETA = ("synth_beta_sys", "synth_beta_ref")


XSUM = ("xsum_pegasus", "xsum_reference")


CNN = ("cnn_pegasus", "cnn_reference")


# -- permuted votes, where the harness reads them ------------------------------------------------


def permuted(split: Split, seed: int, only: set[str] | None = None) -> Split:
    """``split`` with each pair's labels (graded, soft and votes, together) shuffled across its
    sentences (pairs in ``only``, or all); a shuffled pair's labels change wherever they can
    (not all equal)."""
    rng = np.random.default_rng(seed)
    judgments = []
    for pair, judgment in zip(split.pairs, split.judgments, strict=True):
        if only is None or pair.id in only:
            for _ in range(100):
                order = rng.permutation(pair.n_sentences)
                if not (
                    np.array_equal(judgment.graded[order], judgment.graded)
                    and np.array_equal(judgment.soft[order], judgment.soft)
                ):
                    break
            votes = None if judgment.votes is None else [judgment.votes[i] for i in order]
            judgment = Judgment.of(judgment.graded[order], judgment.soft[order], votes)
        judgments.append(judgment)
    return dataclasses.replace(split, judgments=tuple(judgments))


def changed_pairs(before: Split, after: Split) -> set[str]:
    return {
        p.id
        for p, a, b in zip(before.pairs, before.judgments, after.judgments, strict=True)
        if not np.array_equal(a.graded, b.graded) or not np.array_equal(a.soft, b.soft)
    }


def permute_votes(
    monkeypatch: pytest.MonkeyPatch, names: tuple[str, ...], seed: int, only: set[str] | None = None
) -> set[str]:
    """Until ``monkeypatch`` is undone, ``load_split(name)`` (from the runner, the protocols or
    the CLI: they share the data layer's memo) returns the split with permuted votes. Returns
    the ids of the pairs whose labels changed."""
    changed: set[str] = set()
    for name in names:
        real = load_split(name)
        monkeypatch.setitem(_LOADED, name, permuted(real, seed, only))
        shuffled = load_split(name)
        assert shuffled is not real and shuffled.pairs == real.pairs  # same inputs, other labels
        changed |= changed_pairs(real, shuffled)
    return changed
