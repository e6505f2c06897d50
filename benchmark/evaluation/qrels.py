"""Relevance judgements (qrels) and score runs: the harness's view of labels and scores.

Relevance comes from the dataset's judgments (:class:`sourcesum.data.Judgment`): the *graded*
relevance of a sentence (nDCG, Spearman) and its *binary* relevance ``graded >= min_relevant``
(AP and the other binary measures), ``min_relevant`` being the dataset's threshold (SourceSum:
2 votes). Rankers never see these; only the harness builds them.

* :class:`Qrels`: the graded and binary relevance of some pairs, padded into ``(pairs,
  longest)`` arrays with a validity mask; :meth:`Qrels.of_split` builds a split's once per
  process.
* :class:`Run`: one system's scores on the same pairs, in the same order and padding, checked
  once: every pair present, ``len(scores) == n_sentences``, every score finite.
* :func:`validated_row`: one pair's scores as floats under the same checks (the runner's check
  of what a ranker returns); :func:`check_length` alone (score files).

Every failed check raises the caller's :class:`~sourcesum.errors.SourceSumError` subclass with
a message naming the source (a file, ``ranker <label>``...) and the pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from sourcesum.errors import ScoreFileError, SourceSumError
from sourcesum.evaluation.metrics import pad

Relevance = Literal["graded", "binary"]
"""Which relevance a measure reads."""


class Sized(Protocol):
    """What the score checks read of a pair (:class:`sourcesum.data.Pair` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def n_sentences(self) -> int: ...


class Graded(Protocol):
    """What :meth:`Qrels.of_split` reads of a judgment (:class:`sourcesum.data.Judgment`)."""

    @property
    def graded(self) -> np.ndarray: ...


class JudgedSplit(Protocol):
    """What :meth:`Qrels.of_split` reads of a split (:class:`sourcesum.data.Split` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def sha256(self) -> str: ...

    @property
    def pairs(self) -> Sequence[Sized]: ...

    @property
    def judgments(self) -> Sequence[Graded]: ...

    @property
    def min_relevant(self) -> float: ...


def binary_relevance(graded: np.ndarray, min_relevant: float | np.ndarray) -> np.ndarray:
    """``1.0`` where ``graded >= min_relevant``, else ``0.0`` (``min_relevant`` may broadcast
    per row)."""
    return (np.asarray(graded) >= min_relevant).astype(float)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded and binary relevance of some pairs (rows in pair order, zero-padded, ``mask`` true
    on real sentences)."""

    pair_ids: tuple[str, ...]
    graded: np.ndarray
    binary: np.ndarray
    mask: np.ndarray

    @classmethod
    def from_graded(
        cls,
        graded: Sequence[Sequence[float] | np.ndarray],
        min_relevant: float | Sequence[float] | np.ndarray,
        pair_ids: Sequence[str] = (),
    ) -> Qrels:
        """Qrels of graded rows; ``min_relevant`` is one threshold or one per row (the human
        references use ``min(2, k - 1)`` for ``k`` annotators)."""
        padded, mask = pad(graded)
        thresholds = np.asarray(min_relevant)
        if thresholds.ndim == 1:
            thresholds = thresholds[:, None]
        binary = np.where(mask, binary_relevance(padded, thresholds), 0.0)
        return cls(tuple(pair_ids), padded, binary, mask)

    @classmethod
    def of_split(cls, split: JudgedSplit) -> Qrels:
        """The split's qrels, memoised per (split, data checksum, threshold, pair ids): the
        judgments never change, and the ids keep a subset of a split (a partial run) apart
        from the whole."""
        key = (split.name, split.sha256, split.min_relevant, tuple(p.id for p in split.pairs))
        if key not in _SPLIT_QRELS:
            rows = [j.graded for j in split.judgments]
            _SPLIT_QRELS[key] = cls.from_graded(rows, split.min_relevant, [p.id for p in split.pairs])
        return _SPLIT_QRELS[key]

    def relevance(self, kind: Relevance) -> np.ndarray:
        """The ``graded`` or ``binary`` array."""
        return self.graded if kind == "graded" else self.binary

    def row(self, index: int, kind: Relevance) -> np.ndarray:
        """The unpadded relevance of pair ``index``."""
        row: np.ndarray = self.relevance(kind)[index, self.mask[index]]
        return row


_SPLIT_QRELS: dict[tuple[str, str, float, tuple[str, ...]], Qrels] = {}


def check_length(pair: Sized, count: int, source: str, error: type[SourceSumError] = ScoreFileError) -> None:
    """``error`` naming ``source`` and the pair unless ``count == pair.n_sentences``."""
    if count != pair.n_sentences:
        raise error(f"{source}: pair {pair.id} has {count} scores but {pair.n_sentences} sentences")


def _finite_error(
    pair: Sized, index: int, value: float, source: str, error: type[SourceSumError]
) -> SourceSumError:
    return error(f"{source}: pair {pair.id} has a non-finite score ({value}) for sentence {index}")


def _real(value: object) -> bool:
    """A real number: Python or numpy ints and floats (not bool, not complex, not text)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def validated_row(
    pair: Sized,
    scores: object,
    source: str | Callable[[], str],
    error: type[SourceSumError] = ScoreFileError,
) -> list[float]:
    """``scores`` as floats if they are a sequence (list, tuple, 1-d array) of real numbers, one
    per sentence of ``pair``, all finite; else ``error`` naming ``source`` and the pair.
    Mappings, strings and other iterables are refused (their keys or characters are not
    scores), and so are integers too large for a float. ``source`` may be a function giving the
    name, called only on failure (a ranker's label is costly to build for every pair)."""

    def fail(message: str) -> SourceSumError:
        name = source() if callable(source) else source
        return error(f"{name}: pair {pair.id} {message}")

    if isinstance(scores, np.ndarray):
        if scores.ndim != 1:
            raise fail(f"has scores of shape {scores.shape}, not one score per sentence")
        items: Sequence[object] = scores.tolist()
    elif isinstance(scores, (list, tuple)):
        items = scores
    else:
        raise fail(f"has scores of type {type(scores).__name__}, not a list of numbers")
    bad = next((x for x in items if not _real(x)), None)
    if bad is not None:
        raise fail(f"has a score {bad!r} of type {type(bad).__name__}, not a real number")
    try:
        values = [float(x) for x in items]  # type: ignore[arg-type]
    except OverflowError:
        raise fail("has an integer score too large for a float") from None
    if len(values) == pair.n_sentences and all(map(math.isfinite, values)):
        return values
    name = source() if callable(source) else source
    check_length(pair, len(values), name, error)
    index = next(i for i, value in enumerate(values) if not math.isfinite(value))
    raise _finite_error(pair, index, values[index], name, error)


@dataclass(frozen=True, eq=False)
class Run:
    """One system's scores on some pairs: ``rows`` as given (pair order), ``values`` padded with
    zeros like :class:`Qrels` (``mask`` true on real sentences)."""

    pair_ids: tuple[str, ...]
    rows: tuple[Sequence[float], ...]
    values: np.ndarray
    mask: np.ndarray

    @classmethod
    def of_pairs(
        cls,
        pairs: Sequence[Sized],
        scores: Mapping[str, Sequence[float]],
        source: str,
        error: type[SourceSumError] = ScoreFileError,
        where: str = "",
    ) -> Run:
        """The scores of ``pairs`` (pair id -> scores), checked: a missing pair, a wrong length
        or a non-finite score is ``error`` naming ``source`` and the pair (``where``, e.g. ``" of
        split xsum_pegasus"``, is added to a missing pair's message)."""
        rows = []
        for pair in pairs:
            row = scores.get(pair.id)
            if row is None:
                raise error(f"{source}: no scores for pair {pair.id}{where}")
            check_length(pair, len(row), source, error)
            rows.append(row)
        values, mask = pad(rows)
        finite = np.isfinite(values)
        if not finite[mask].all():
            first, index = np.argwhere(~finite & mask)[0]
            raise _finite_error(pairs[first], int(index), float(values[first, index]), source, error)
        return cls(tuple(p.id for p in pairs), tuple(rows), values, mask)

    @classmethod
    def of_split(cls, split: JudgedSplit, scores: Mapping[str, Sequence[float]], source: str) -> Run:
        """:meth:`of_pairs` on every pair of ``split`` (errors are :class:`ScoreFileError`)."""
        return cls.of_pairs(split.pairs, scores, source, where=f" of split {split.name}")
