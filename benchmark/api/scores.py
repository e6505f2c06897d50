"""Score sets for notebooks: the stored scores of a configuration (:func:`load_scores`) and one's
own scores (:func:`read_scores`: a dict, a DataFrame or a TREC run file), each a :class:`Scores`
checked against its split."""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from sourcesum.data import Split, dataset_of, load_split
from sourcesum.errors import ScoreFileError, SourceSumError, UnknownNameError
from sourcesum.evaluation.qrels import Run
from sourcesum.store.entry import scores_sha256
from sourcesum.store.scorefiles import LoadedScores, check_against_split, read_trec_run

FRAME_COLUMNS = ("pair_id", "sentence_index", "score")
"""The columns of a DataFrame of scores: one row per sentence, its 0-based index in the pair."""


@dataclass(frozen=True)
class Scores(Mapping[str, list[float]]):
    """One score set on one split: pair id -> one score per sentence, for every pair of the
    split in its order (read as a mapping; ``by_pair`` is the plain dict). ``name`` is what tables show, ``label`` the full label (a stored
    configuration's, else the name), ``identity`` what :func:`sourcesum.api.compare` seeds its
    tests by (a stored row: its ranker and canonical parameters, as ``sourcesum compare``;
    one's own scores: the sha256 of the scores). ``nan_replaced``: NaN scores read as 0, as the
    paper did (in a TREC run, or in a published system's output)."""

    name: str
    label: str
    split: str
    by_pair: dict[str, list[float]] = field(repr=False)
    identity: str = field(repr=False)
    nan_replaced: int = 0

    def __getitem__(self, pair_id: str) -> list[float]:
        return self.by_pair[pair_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_pair)

    def __len__(self) -> int:
        return len(self.by_pair)


def _split(split: str | Split) -> Split:
    return split if isinstance(split, Split) else load_split(split)


def load_scores(name_or_label: str, split: str | Split, scores_dir: str | Path | None = None) -> Scores:
    """The stored scores of the configuration named or labelled ``name_or_label`` (a display
    name, a full label, or a ranker's name when the ranker has one row) on ``split``, a board
    split of its dataset, resolved as ``sourcesum compare`` resolves it: every valid, complete,
    current entry of the user store (``scores_dir``, else ``$SOURCESUM_SCORES_DIR`` or
    ``$XDG_DATA_HOME/sourcesum/scores``) over the committed store, plus the published outputs.
    An unknown name, or a split outside the board, is a :class:`~sourcesum.errors.SourceSumError`."""
    from sourcesum.board.collect import collect_stores
    from sourcesum.board.statistics import row_identity

    loaded = _split(split)
    ds = dataset_of(loaded.name)
    if loaded.name not in ds.board_splits():
        raise UnknownNameError(
            f"load_scores: {loaded.name} is not a board split of {ds.name} "
            f"({', '.join(ds.board_splits())}); stored scores are looked up on those"
        )
    row = collect_stores(scores_dir, ds.name).row(name_or_label)
    entry = row.entries.get(loaded.name)
    if entry is None:
        raise UnknownNameError(f"load_scores: {row.label} has no scores on {loaded.name}")
    return Scores(
        name=row.name or row.label,
        label=row.label,
        split=loaded.name,
        by_pair={pair.id: list(entry.scores[pair.id]) for pair in loaded},
        identity=row_identity(row),
        nan_replaced=row.nan_replaced.get(loaded.name, (0, 0))[0],
    )


def read_scores(data: Any, split: str | Split, name: str) -> Scores:
    """One's own scores as a :class:`Scores` named ``name``, checked against ``split`` (every
    pair, no other, one score per sentence, finite; else a
    :class:`~sourcesum.errors.ScoreFileError` naming the pair). ``data`` is a mapping (pair id
    -> scores), a DataFrame with the columns :data:`FRAME_COLUMNS` (one row per sentence), or
    the path of a TREC run file (``qid Q0 docno rank score tag``, as ``sourcesum evaluate
    --format trec`` reads it: NaN scores read as 0, counted in ``nan_replaced``)."""
    if not isinstance(name, str) or not name.strip():
        raise SourceSumError("read_scores: name must be a non-empty string")
    loaded = _split(split)
    if isinstance(data, (str, os.PathLike)):
        scores = read_trec_run(Path(data))
    elif isinstance(data, pd.DataFrame):
        scores = LoadedScores(Path(name), _of_frame(data, name))
    elif isinstance(data, Mapping):
        scores = LoadedScores(Path(name), _of_mapping(data, name))
    else:
        raise SourceSumError(
            f"read_scores {name}: expected a mapping, a DataFrame or a TREC run's path, not {type(data).__name__}"
        )
    check_against_split(scores, loaded)
    Run.of_split(loaded, scores.scores, name)  # finite scores, one per sentence
    values = {pair.id: scores.scores[pair.id] for pair in loaded}
    return Scores(
        name=name,
        label=name,
        split=loaded.name,
        by_pair=values,
        identity=f"scores|{scores_sha256(values)}",
        nan_replaced=scores.nan_replaced,
    )


def _of_mapping(data: Mapping[Any, Any], name: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for pair_id, row in data.items():
        if not isinstance(pair_id, str):
            raise ScoreFileError(f"{name}: pair id {pair_id!r} is not a string")
        if isinstance(row, (str, bytes)) or not hasattr(row, "__iter__"):
            raise ScoreFileError(f"{name}: pair {pair_id}: expected a sequence of scores")
        out[pair_id] = _numbers(list(row), f"{name}: pair {pair_id}")
    return out


def _numbers(values: list[Any], where: str) -> list[float]:
    """``values`` as floats; anything but a real number (a bool, a string...) is an error."""
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ScoreFileError(f"{where}: score {value!r} is not a number")
    return [float(v) for v in values]


def _of_frame(frame: pd.DataFrame, name: str) -> dict[str, list[float]]:
    missing = [c for c in FRAME_COLUMNS if c not in frame.columns]
    if missing:
        raise ScoreFileError(
            f"{name}: the DataFrame lacks column(s) {', '.join(missing)} (needs {', '.join(FRAME_COLUMNS)})"
        )
    out: dict[str, list[float]] = {}
    for pair_id, group in frame.groupby("pair_id", sort=False):
        where = f"{name}: pair {pair_id}"
        if not isinstance(pair_id, str):
            raise ScoreFileError(f"{name}: pair id {pair_id!r} is not a string")
        indices = group["sentence_index"].tolist()
        if sorted(indices) != list(range(len(indices))):
            raise ScoreFileError(f"{where}: sentence indices {sorted(indices)} are not 0..n-1, each once")
        ordered = group.sort_values("sentence_index", kind="stable")["score"].tolist()
        out[pair_id] = _numbers(ordered, where)
    return out
