"""Read scores produced elsewhere: SourceSum-format JSON (``--field KEY``) and TREC run files.

*SourceSum format*: the dataset's own JSON list, where each entry of ``annotations`` carries an
extra numeric field ``KEY`` (as the paper's ``outputs/<split>__<method>.json`` files do). NaN
scores become 0, as in the paper, and are counted.

*TREC run format*: whitespace-separated ``qid Q0 docno rank score tag`` lines, ``qid`` = pair id,
``docno`` = the 0-based sentence index, optionally after a prefix ending in a non-digit
(``3``, ``s3`` and ``<pair id>#3`` all mean sentence 3). Only ``score`` is used, not ``rank``.

The split is the one whose pair ids equal the file's (main splits first), unless given.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from sourcesum.data import Split, dataset_of, load_split, split_names
from sourcesum.errors import ScoreFileError
from sourcesum.evaluation.qrels import check_length


@dataclass
class LoadedScores:
    """Scores read from a file: pair id -> one score per sentence, plus the NaN count replaced."""

    path: Path
    scores: dict[str, list[float]]
    nan_replaced: int = 0
    sentences: dict[str, list[str]] | None = None
    all_nan_pairs: int = 0


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``; a missing, unreadable, non-file or binary path is a
    :class:`ScoreFileError` naming it."""
    path = Path(path)
    if path.is_dir():
        raise ScoreFileError(f"{path}: is a folder, not a score file")
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ScoreFileError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise ScoreFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ScoreFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def read_sourcesum_json(path: Path, field: str) -> LoadedScores:
    """Scores from field ``field`` of every annotation; NaN -> 0 (counted)."""
    return parse_sourcesum_json(read_text(path), Path(path), field)


def parse_sourcesum_json(text: str, path: Path, field: str) -> LoadedScores:
    """:func:`read_sourcesum_json` on the text already read from ``path`` (e.g. sha256-verified
    bytes, decoded)."""
    try:
        rows = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoreFileError(f"{path}: not valid JSON ({exc})") from exc
    except RecursionError:
        raise ScoreFileError(f"{path}: JSON nested too deeply to be a SourceSum file") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python's digit limit
        raise ScoreFileError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(rows, list):
        raise ScoreFileError(f"{path}: expected a JSON list of pairs")
    scores: dict[str, list[float]] = {}
    sentences: dict[str, list[str]] = {}
    replaced = all_nan = 0
    for position, row in enumerate(rows):
        pair_id = row.get("id") if isinstance(row, dict) else None
        if not isinstance(pair_id, str) or not pair_id:
            raise ScoreFileError(f"{path}: entry {position} has no string 'id'")
        if not isinstance(row.get("annotations"), list):
            raise ScoreFileError(f"{path}: pair {pair_id}: 'annotations' is not a list")
        values = []
        replaced_before = replaced
        for i, ann in enumerate(row["annotations"]):
            if not isinstance(ann, dict):
                raise ScoreFileError(f"{path}: pair {pair_id}: annotation {i} is not an object")
            if field not in ann:
                raise ScoreFileError(f"{path}: pair {pair_id}: sentence {i} has no field {field!r}")
            value = ann[field]
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ScoreFileError(
                    f"{path}: pair {pair_id}: sentence {i} field {field!r} is {value!r}, not a number"
                )
            try:
                value = float(value)
            except OverflowError:
                raise ScoreFileError(
                    f"{path}: pair {pair_id}: sentence {i} score {str(value)[:20]}... is too large for a float"
                ) from None
            if math.isnan(value):
                value, replaced = 0.0, replaced + 1
            elif math.isinf(value):
                raise ScoreFileError(f"{path}: pair {pair_id}: sentence {i} score is infinite")
            values.append(value)
        all_nan += bool(values) and replaced - replaced_before == len(values)
        if pair_id in scores:
            raise ScoreFileError(f"{path}: pair {pair_id} appears twice")
        scores[pair_id] = values
        sentences[pair_id] = [str(a.get("sentence", "")) for a in row["annotations"]]
    return LoadedScores(Path(path), scores, replaced, sentences, all_nan)


_DOCNO = re.compile(r"(\d+)$")


def read_trec_run(path: Path) -> LoadedScores:
    """Scores from a TREC run file (see the module docstring); NaN -> 0 (counted)."""
    lines = read_text(path).splitlines()
    cells: dict[str, dict[int, float]] = {}
    nan_cells: dict[str, int] = {}
    replaced = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parts = line.split()
        match = _DOCNO.search(parts[2]) if len(parts) == 6 else None
        if match is None:
            raise ScoreFileError(f"{path}:{number}: expected 'qid Q0 docno rank score tag'")
        try:
            value = float(parts[4])
        except ValueError:
            raise ScoreFileError(f"{path}:{number}: score {parts[4]!r} is not a number") from None
        if math.isnan(value):
            value, replaced = 0.0, replaced + 1
            nan_cells[parts[0]] = nan_cells.get(parts[0], 0) + 1
        elif math.isinf(value):
            raise ScoreFileError(f"{path}:{number}: pair {parts[0]}: infinite score")
        index = int(match.group(1))
        if index in cells.setdefault(parts[0], {}):
            raise ScoreFileError(f"{path}:{number}: pair {parts[0]} sentence {index} appears twice")
        cells[parts[0]][index] = value
    scores = {}
    for pair_id, by_index in cells.items():
        if sorted(by_index) != list(range(len(by_index))):
            raise ScoreFileError(
                f"{path}: pair {pair_id}: sentence indices {sorted(by_index)} are not 0..n-1"
            )
        scores[pair_id] = [by_index[i] for i in range(len(by_index))]
    all_nan = sum(1 for pair_id, count in nan_cells.items() if count == len(scores[pair_id]))
    return LoadedScores(Path(path), scores, replaced, all_nan_pairs=all_nan)


def infer_split(loaded: LoadedScores) -> Split:
    """The split whose pair ids are exactly the file's, among the splits with a local copy
    (board splits first; a split that would need a download is not tried)."""
    ids = set(loaded.scores)
    skipped = []
    for name in split_names():
        ds = dataset_of(name)
        if not ds.available(ds.split_spec(name)):
            skipped.append(name)
            continue
        split = load_split(name)
        if set(split.by_id) == ids:
            return split
    sample = next(iter(ids), "<none>")
    untried = f" (not tried, no local copy: {', '.join(skipped)})" if skipped else ""
    raise ScoreFileError(
        f"{loaded.path}: its {len(ids)} pair ids (e.g. {sample}) match no split exactly{untried}; "
        "pass --split to name it and see which pairs differ"
    )


def check_against_split(loaded: LoadedScores, split: Split) -> None:
    """Error naming the first pair that is missing, extra, or has different sentences."""
    for pair in split:
        if pair.id not in loaded.scores:
            raise ScoreFileError(f"{loaded.path}: pair {pair.id} of split {split.name} is missing")
        check_length(pair, len(loaded.scores[pair.id]), str(loaded.path))
        if loaded.sentences is not None and tuple(loaded.sentences[pair.id]) != pair.sentences:
            raise ScoreFileError(f"{loaded.path}: pair {pair.id}: sentences differ from split {split.name}")
    extra = [pid for pid in loaded.scores if pid not in split.by_id]
    if extra:
        raise ScoreFileError(f"{loaded.path}: pair {extra[0]} is not in split {split.name}")
