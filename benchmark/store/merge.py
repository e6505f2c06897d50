"""Merge score stores (e.g. one per shard of a sharded run) into one store.

Entries are matched by (ranker, split, entry key); matched entries become one entry holding the
union of their pairs, by the store's one merge rule (:func:`sourcesum.store.entry.merge_entries`: a
pair present in several entries must have identical scores, bit for bit, and the headers,
library versions included, must agree; otherwise :class:`~sourcesum.errors.ScoreFileError`
names the ranker, split, pair and files). An entry that
fails its own verification is an error naming its file. The target store's own entries take
part in the merge. Everything goes through the store's public API (:meth:`ScoreStore.entries`,
:meth:`ScoreStore.load`, :meth:`ScoreStore.save`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sourcesum.errors import ScoreFileError, SourceSumError
from sourcesum.store.entry import ScoreEntry, merge_entries
from sourcesum.store.stores import ScoreStore


@dataclass
class MergeReport:
    """What :func:`merge_stores` wrote."""

    target: Path
    n_sources: int
    entries: list[ScoreEntry]

    def summary(self) -> str:
        complete = sum(e.complete for e in self.entries)
        return (
            f"merged {self.n_sources} store(s) into {self.target}: {len(self.entries)} entries "
            f"({complete} complete, {len(self.entries) - complete} partial)"
        )


def merge_stores(sources: Sequence[Path], target: Path) -> MergeReport:
    """Merge every entry of the ``sources`` stores into the ``target`` store (see module doc)."""
    for source in sources:
        if not Path(source).is_dir():
            raise SourceSumError(f"merge: {source} is not a score-store folder")
    out = ScoreStore(target)
    groups: dict[tuple[str, str, str], list[tuple[str, ScoreEntry]]] = {}
    seen: set[Path] = set()
    for source in sources:
        root = Path(source).resolve()
        if root in seen or root == out.root.resolve():
            continue  # the same store twice, or the target itself (merged below)
        seen.add(root)
        for path, entry in ScoreStore(root).entries():
            if isinstance(entry, ScoreFileError):
                raise entry
            groups.setdefault((entry.ranker, entry.split, entry.key), []).append((str(path), entry))
    merged = []
    for (ranker, split, key), entries in groups.items():  # every merge checked before any write
        existing = out.load(ranker, split, key)
        if existing is not None:
            entries = [(str(out.path_for(ranker, split, key)), existing), *entries]
        merged.append(merge_entries(entries))
    for entry in merged:
        out.save(entry)
    return MergeReport(Path(target), len(seen), merged)
