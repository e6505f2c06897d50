"""A prefix tree of context variants: which tokens to run, on which cache, so that variants of a
document that delete different sentences share every token they have in common before their
first difference (ContextCite's ablated contexts; the engine runs the tree's passes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sourcesum.rankers.lm.inputs import Context, recomputed


@dataclass
class TreeNode:
    """One pass of a prefix tree of context variants: the context ``ids`` (a prefix of its
    variants'), run on the first ``reuse`` positions of its ``parent``'s cache (``-1``: the full
    context's); ``members``, on a leaf, are the variants read after it. ``run`` is False only
    for the leaf that is the full context itself."""

    parent: int
    reuse: int
    ids: list[int]
    members: list[int]
    run: bool = True

    @property
    def new_tokens(self) -> int:
        return recomputed(len(self.ids), self.reuse) if self.run else 0


def prefix_tree(context: Context, keeps: Sequence[Sequence[bool]]) -> list[TreeNode]:
    """The passes that run the variants of ``context`` keeping only the segments ``keeps[v]``
    marks, as a prefix tree in depth-first order (a node after its parent).

    The segments some variant deletes, in document order, are the decisions. Variants that decide
    alike up to a segment share every token before it, so those run once: a node runs from its
    parent's last shared token to the next decision on which its variants differ (to the end, on
    a leaf), and reads the full context's cache up to its first deleted segment while it has
    deleted none. Each variant thus runs only its tokens after its last shared decision, where
    :func:`~sourcesum.rankers.lm.engine.causal_variants_nll` would recompute it from its first
    deleted segment on."""
    if not keeps:
        return []
    sizes = [len(segment) for segment in context.segments]
    # deleting an empty segment changes no token: variants that differ only there share a leaf
    cuts = sorted({i for keep in keeps for i, kept in enumerate(keep) if not kept and sizes[i]})
    variant_ids = [context.ids(keep=keep) for keep in keeps]
    nodes: list[TreeNode] = []

    def before(v: int, level: int) -> int:
        """Tokens of variant ``v`` before the segment ``cuts[level]`` (all, past the last)."""
        if level == len(cuts):
            return len(variant_ids[v])
        cut = cuts[level]
        return context.starts[cut] - sum(sizes[i] for i in range(cut) if not keeps[v][i])

    def grow(members: list[int], level: int, parent: int, shared: int, on_full: bool) -> None:
        """``members`` agree on ``cuts[:level]`` and share their first ``shared`` tokens, which
        ``parent``'s cache holds (-1: the full context's); ``on_full``: none of those deleted."""
        representative = members[0]  # they agree up to `split`, so any one of them
        split = level
        while split < len(cuts) and len({bool(keeps[v][cuts[split]]) for v in members}) == 1:
            split += 1
        reach, leaf = before(representative, split), split == len(cuts)
        if on_full:
            deleted = [at for at in range(level, split) if not keeps[representative][cuts[at]]]
            if not deleted and leaf:  # the full context itself: its state is already there
                nodes.append(TreeNode(-1, reach, variant_ids[representative], members, run=False))
                return
            # still the full context up to `reach`, or up to the first segment they delete
            on_full = not deleted
            shared = reach if on_full else before(representative, deleted[0])
        # a pass for their new tokens; on a leaf always, as its variants need its last logits
        if leaf or (not on_full and reach > shared):
            nodes.append(
                TreeNode(parent, shared, variant_ids[representative][:reach], members if leaf else [])
            )
            parent, shared = len(nodes) - 1, reach
        if not leaf:
            for kept in (True, False):
                branch = [v for v in members if bool(keeps[v][cuts[split]]) is kept]
                if branch:
                    grow(branch, split, parent, shared, on_full)

    grow(list(range(len(keeps))), 0, -1, before(0, 0) if cuts else len(context.ids()), True)
    return nodes
