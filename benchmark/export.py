"""Export to TREC format: qrels (graded and binary) per split and a run file per ranker and split.

Pair ids are TREC query ids and ``s<index>`` (0-based sentence index) the document ids, so
``trec_eval``, ranx or ir_measures can recompute the numbers. Caveat: trec_eval breaks score
ties by document id (it does not average over tie orderings), so where scores tie its values
differ from this harness's tie-averaged ones; the run files list tied sentences in index order.
"""

from __future__ import annotations

import re
from pathlib import Path

from sourcesum.atomic import write_text_atomic
from sourcesum.data import BINARY_MIN_VOTES
from sourcesum.leaderboard import Leaderboard


def docno(index: int) -> str:
    return f"s{index}"


def safe_name(label: str) -> str:
    """A file-name form of a row label: ``perplexity_gain(model=X)`` -> ``perplexity_gain-model-X``."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", label).strip("-")


def export_trec(board: Leaderboard, folder: Path) -> list[Path]:
    """Write qrels and runs under ``folder``; returns the files written."""
    written = []
    for split in board.splits:
        graded = [f"{p.id} 0 {docno(i)} {int(g)}" for p in split for i, g in enumerate(p.graded)]
        binary = [f"{p.id} 0 {docno(i)} {int(g >= BINARY_MIN_VOTES)}" for p in split for i, g in enumerate(p.graded)]
        for kind, lines in (("graded", graded), ("binary", binary)):
            path = folder / f"{split.name}.{kind}.qrels"
            write_text_atomic(path, "\n".join(lines) + "\n")
            written.append(path)
        for row in board.rows:
            entry = row.entries.get(split.name)
            if entry is None:
                continue
            tag = safe_name(row.label)
            lines = []
            for pair in split:
                scores = entry.scores[pair.id]
                order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
                lines += [f"{pair.id} Q0 {docno(i)} {rank} {scores[i]!r} {tag}" for rank, i in enumerate(order, 1)]
            path = folder / f"{tag}.{split.name}.run"
            write_text_atomic(path, "\n".join(lines) + "\n")
            written.append(path)
    return written
