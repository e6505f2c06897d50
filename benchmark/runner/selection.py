"""Which pairs a run scores: the first ``limit`` of each split, listed pair ids, one shard."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sourcesum.data import Pair, Split
from sourcesum.errors import SourceSumError
from sourcesum.util.hashing import sha256_bytes


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based, as ``sourcesum run --shard K/N``).

    A pair belongs to shard ``1 + h mod count``, ``h`` = the first 8 bytes (big-endian) of
    sha256 of its ``document_key``: stable across processes and machines, and every pair of a
    document, in any split, lands in the same shard.
    """

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise SourceSumError(f"shard {self.index}/{self.count}: K must be between 1 and N")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"K/N"`` -> ``Shard(K, N)``; anything else is an error naming the text."""
        index, slash, count = text.partition("/")
        try:
            if not slash:
                raise ValueError
            return cls(int(index), int(count))
        except ValueError:
            raise SourceSumError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/8") from None

    def holds(self, pair: Pair) -> bool:
        first_8_bytes = int(sha256_bytes(pair.document_key.encode("utf-8"))[:16], 16)
        return first_8_bytes % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class Selection:
    """Which pairs of each split a run scores (default: all).

    Applied in this order: the pairs whose id is in ``pair_ids``, the first ``limit`` of those
    (file order), then the ones in ``shard``.
    """

    limit: int | None = None
    pair_ids: frozenset[str] | None = None
    shard: Shard | None = None

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise SourceSumError(f"--limit {self.limit}: must be a positive number of pairs")

    def pairs(self, split: Split) -> list[Pair]:
        chosen = list(split.pairs)
        if self.pair_ids is not None:
            chosen = [p for p in chosen if p.id in self.pair_ids]
        if self.limit is not None:
            chosen = chosen[: self.limit]
        if self.shard is not None:
            chosen = [p for p in chosen if self.shard.holds(p)]
        return chosen

    def check(self, splits: Sequence[Split]) -> None:
        """Every id in ``pair_ids`` must be a pair of one of ``splits``; else an error naming it."""
        if self.pair_ids is None:
            return
        known = {p.id for split in splits for p in split}
        missing = sorted(self.pair_ids - known)
        if missing:
            raise SourceSumError(
                f"--pairs: {', '.join(missing)} not in split(s) {', '.join(s.name for s in splits)}"
            )
