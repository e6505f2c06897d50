"""Export to TREC format: qrels (graded and binary) per split and a run file per ranker and split.

Pair ids are TREC query ids and ``s<index>`` (0-based sentence index) the document ids, so
``trec_eval``, ranx or ir_measures can recompute the numbers. Caveat: trec_eval breaks score
ties by document id (it does not apply this harness's tie rules: the expectation over tie
orderings for nDCG, scikit-learn's block AP for AP), so where scores tie its values differ; the
run files list tied sentences in index order.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

from sourcesum.board.model import Leaderboard
from sourcesum.data import Split
from sourcesum.errors import SourceSumError
from sourcesum.evaluation.qrels import Qrels, Relevance
from sourcesum.util.files import check_folder_target, owned_files, write_text_atomic
from sourcesum.util.hashing import sha256_bytes

INDEX_NAME = "sourcesum-export.json"
"""Lists every file an export wrote (name -> what it holds); later exports overwrite only those."""
_SAFE = "_.=,()+-"


def docno(index: int) -> str:
    return f"s{index}"


MAX_NAME = 200
"""Longest export name (bytes) before shortening: file systems allow 255 for a whole file name."""


def export_name(label: str) -> str:
    """A file-name form of a row label, unique and reversible (:func:`label_of`): characters
    outside letters, digits and ``_.=,()+-`` are percent-encoded, e.g. ``m/x y`` -> ``m%2Fx%20y``.
    A name longer than :data:`MAX_NAME` bytes keeps its first 160 and ends with ``~`` and 16 hex
    digits of the label's sha256 (the export's index maps it back to the label)."""
    name = urllib.parse.quote(label, safe=_SAFE)
    if len(name.encode("utf-8")) <= MAX_NAME:
        return name
    return f"{name[:160]}~{sha256_bytes(label.encode('utf-8'))[:16]}"


def label_of(name: str) -> str:
    """The row label an :func:`export_name` came from (not for shortened names: see the index)."""
    return urllib.parse.unquote(name)


def _planned(board: Leaderboard) -> dict[str, dict[str, str]]:
    """File name -> description of every file an export of ``board`` writes."""
    files: dict[str, dict[str, str]] = {}
    for split in board.splits:
        for kind in ("graded", "binary"):
            files[f"{split.name}.{kind}.qrels"] = {"kind": f"qrels ({kind})", "split": split.name}
        for row in board.rows:
            if split.name in row.entries:
                name = f"{export_name(row.label)}.{split.name}.run"
                if name in files:  # labels are unique on a board; this would lose a run file
                    raise SourceSumError(f"export: two rows would write {name}")
                files[name] = {
                    "kind": "run",
                    "split": split.name,
                    "ranker": row.label,
                    "key": row.entries[split.name].key,
                }
    return files


def _qrels_lines(split: Split, binary: bool) -> list[str]:
    qrels = Qrels.of_split(split)
    kind: Relevance = "binary" if binary else "graded"
    return [
        f"{pair_id} 0 {docno(i)} {int(g)}"
        for index, pair_id in enumerate(qrels.pair_ids)
        for i, g in enumerate(qrels.row(index, kind))
    ]


def _run_lines(split: Split, scores_by_pair: dict[str, list[float]], tag: str) -> list[str]:
    lines = []
    for pair in split:
        scores = scores_by_pair[pair.id]
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        lines += [f"{pair.id} Q0 {docno(i)} {rank} {scores[i]!r} {tag}" for rank, i in enumerate(order, 1)]
    return lines


def export_trec(board: Leaderboard, folder: Path) -> list[Path]:
    """Write qrels and runs under ``folder`` plus an index listing them; returns the files
    written (index last). Existing files are overwritten only if an earlier export wrote them;
    the files an earlier export listed that this one does not write are removed (the export
    owns the folder's index), so the folder holds exactly this export."""
    planned = _planned(board)
    check_folder_target(folder, list(planned), INDEX_NAME, "export -o")
    earlier = owned_files(folder, INDEX_NAME)
    splits = {split.name: split for split in board.splits}
    rows = {row.label: row for row in board.rows}
    written = []
    for name, info in planned.items():
        split = splits[info["split"]]
        if info["kind"] == "run":
            lines = _run_lines(
                split, rows[info["ranker"]].entries[split.name].scores, export_name(info["ranker"])
            )
        else:
            lines = _qrels_lines(split, binary=info["kind"] == "qrels (binary)")
        write_text_atomic(folder / name, "\n".join(lines) + "\n")
        written.append(folder / name)
    for name in sorted(earlier - set(planned)):
        stale = folder / name
        if Path(name).name == name and stale.is_file():  # only files of the folder itself
            stale.unlink()
    index = folder / INDEX_NAME
    write_text_atomic(index, json.dumps({"format": "sourcesum-export/1", "files": planned}, indent=2) + "\n")
    return written + [index]
