"""Hand-made pairs and splits for ranker tests (pair inputs only, labels apart)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sourcesum.data import Judgment, Pair, Split


def make_pair(sentences: list[str], summary: str, pair_id: str = "hand__0", split: str = "hand") -> Pair:
    """A pair's inputs (no labels: rankers never see them)."""
    return Pair(
        id=pair_id,
        split=split,
        corpus="test",
        model="test",
        original_id=pair_id,
        summary_idx=0,
        sentences=tuple(sentences),
        summary=summary,
        document="\n".join(sentences),
        reference_summary=summary,
    )


def make_split(
    name: str,
    pairs: Sequence[Pair],
    votes: Sequence[Sequence[Sequence[int]]] | None = None,
    min_relevant: float = 2,
) -> Split:
    """A split of hand-made pairs; ``votes[i][j]`` are the annotators' 0/1 votes on sentence
    ``j`` of pair ``i`` (default: two annotators voting 0 everywhere)."""
    votes = votes or [[(0, 0)] * p.n_sentences for p in pairs]
    judgments = tuple(Judgment.from_votes(v) for v in votes)
    return Split(
        name, "hand", name, Path(f"<{name}>"), f"sha-of-{name}", tuple(pairs), judgments, min_relevant
    )
