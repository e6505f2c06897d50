"""Hand-made pairs for ranker tests."""

from __future__ import annotations

from sourcesum.data import Pair


def make_pair(
    sentences: list[str], summary: str, votes: list[int] | None = None, pair_id: str = "hand__0"
) -> Pair:
    votes = votes or [0] * len(sentences)
    return Pair(
        id=pair_id,
        split="hand",
        corpus="test",
        model="test",
        original_id=pair_id,
        summary_idx=0,
        sentences=tuple(sentences),
        summary=summary,
        document="\n".join(sentences),
        reference_summary=summary,
        votes=tuple((1, 1) if v else (0, 0) for v in votes),
    )
