"""Batches (sourcesum.runner.batches): document groups are batched whole."""

from __future__ import annotations

import pytest
from sourcesum.data import dataset, load_split
from sourcesum.runner.batches import group_batches, group_by_document

BOARD = dataset("synthnews").board_splits()
"""synth_alpha_sys, synth_alpha_ref, synth_beta_sys, synth_beta_ref (3 pairs each)."""


@pytest.fixture
def board_splits():
    """The four board splits: each corpus's two splits share their three documents."""
    return [load_split(name) for name in BOARD]


def test_document_groups_are_batched_whole(board_splits):
    groups = [["a"] * 3, ["b"] * 5, ["c"], ["d"] * 2]
    assert [len(b) for b in group_batches(groups, 4)] == [8, 3]
    assert [len(b) for b in group_batches(groups, 1)] == [3, 5, 1, 2]
    grouped = group_by_document([p for s in board_splits for p in s])
    assert [len(g) for g in grouped] == [2] * 6  # each document: its pair in both splits of its corpus
    assert all(len({p.document_key for p in g}) == 1 for g in grouped)
