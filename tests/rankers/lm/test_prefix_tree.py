"""The prefix tree of context variants: every variant's tokens run exactly once along its path,
never more than recomputing each variant from its first deleted segment (pure; no model)."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.rankers.lm.inputs import Context, recomputed
from sourcesum.rankers.lm.prefix_tree import prefix_tree


def _context(rng: np.random.Generator, n: int) -> Context:
    """Distinct token ids per position, segment lengths 0-6 (empty segments included); the head
    and the middle (the template's text around the document) empty or not."""
    lengths = rng.integers(0, 7, size=n)
    ids = iter(range(10, 10_000))
    return Context(
        head=(1, 2)[: int(rng.integers(0, 3))],
        segments=tuple(tuple(next(ids) for _ in range(k)) for k in lengths),
        middle=(3, 4, 5)[: int(rng.integers(0, 4))],
    )


@pytest.mark.parametrize("seed", range(200))
def test_each_variant_is_its_path_and_the_tree_never_runs_more_than_flat(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    context = _context(rng, n)
    keeps = [tuple(bool(k) for k in row) for row in rng.random((int(rng.integers(1, 33)), n)) < 0.5]
    keeps += [keeps[0]] if seed % 3 == 0 else []  # a repeated variant
    keeps += [(True,) * n] if seed % 4 == 0 else []  # the full context among them
    nodes = prefix_tree(context, keeps)
    full = context.ids()
    read: dict[int, int] = {}
    for index, node in enumerate(nodes):
        # a node's prefix is its parent's tokens (the full context's up to `reuse`)
        parent = full if node.parent == -1 else nodes[node.parent].ids
        assert node.parent < index
        assert node.ids[: node.reuse] == list(parent[: node.reuse])
        assert node.parent == -1 or node.reuse == len(parent)
        assert node.run or (node.parent == -1 and node.ids == full and node.members)
        for v in node.members:
            assert v not in read
            read[v] = index
            assert node.ids == context.ids(keep=keeps[v])
    assert sorted(read) == list(range(len(keeps)))
    flat = 0  # each distinct variant from its first deleted segment on
    for keep in set(keeps):
        ids, _, reuse = context.kept(keep)
        flat += recomputed(len(ids), reuse)
    assert sum(node.new_tokens for node in nodes) <= flat


def test_variants_that_decide_alike_share_one_pass():
    """Two variants deleting segment 0 and differing only on the last segment share the tokens
    between: one pass for them, then one each."""
    context = Context(head=(1,), segments=((10, 11), (12, 13, 14), (15, 16)), middle=(2,))
    nodes = prefix_tree(context, [(False, True, True), (False, True, False)])
    assert [(n.parent, n.reuse, n.new_tokens, n.members) for n in nodes] == [
        (-1, 1, 3, []),  # segment 1, after the head (segment 0 deleted)
        (0, 4, 3, [0]),  # segment 2 and the middle
        (0, 4, 1, [1]),  # the middle
    ]


def test_variants_that_differ_only_on_empty_segments_share_a_leaf():
    """Deleting an empty segment changes no token: such variants are one leaf. A leaf whose
    tokens are its parent's (nothing after its deleted segment) reruns its last token only."""
    keeps = [(False, True, True), (False, True, False)]
    nodes = prefix_tree(Context(head=(1,), segments=((5,), (10,), ()), middle=()), keeps)
    assert [(n.parent, n.reuse, n.new_tokens, n.members) for n in nodes] == [(-1, 1, 1, [0, 1])]
    nodes = prefix_tree(Context(head=(1,), segments=((5,), (10,), (11,)), middle=()), keeps)
    assert [(n.parent, n.reuse, n.new_tokens, n.members) for n in nodes] == [
        (-1, 1, 1, []),  # segment 1 after the head
        (0, 2, 1, [0]),  # segment 2
        (0, 2, 1, [1]),  # nothing new: its last token again
    ]
