"""Scoring pairs in batches of whole documents, each score validated; a failing batch is scored
one pair at a time to name the pair at fault."""

from __future__ import annotations

import typing
import warnings
from collections.abc import Callable, Iterator, Sequence

from sourcesum.data import Pair
from sourcesum.errors import LabelAccessError, RankerError, SourceSumError
from sourcesum.evaluation.qrels import validated_row
from sourcesum.rankers.base import Ranker


def validated_scores(ranker: Ranker, pair: Pair, scores: Sequence[float]) -> list[float]:
    """``scores`` as a list of floats, or :class:`RankerError` naming the ranker and pair
    (:func:`sourcesum.evaluation.qrels.validated_row`)."""
    return validated_row(pair, scores, lambda: f"ranker {ranker.label}", RankerError)


def splitwise(ranker: Ranker) -> bool:
    """True when ``ranker`` overrides :meth:`Ranker.fit`: it is then run one split at a time."""
    return type(ranker).fit is not Ranker.fit


def group_by_document(pairs: Sequence[Pair]) -> list[list[Pair]]:
    """``pairs`` grouped by ``document_key`` (groups in order of first appearance)."""
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(pair.document_key, []).append(pair)
    return list(groups.values())


def group_batches(groups: Sequence[Sequence[Pair]], size: int) -> Iterator[list[Pair]]:
    """Consecutive whole groups, each batch closed once it holds ``size`` pairs or more."""
    batch: list[Pair] = []
    for group in groups:
        batch.extend(group)
        if len(batch) >= max(1, size):
            yield batch
            batch = []
    if batch:
        yield batch


def _named_error(ranker: Ranker, pair: Pair, exc: BaseException) -> SourceSumError:
    if isinstance(exc, LabelAccessError):
        return LabelAccessError(f"ranker {ranker.label} read a label: {exc}")
    if isinstance(exc, SourceSumError):
        return exc
    return RankerError(f"ranker {ranker.label} failed on pair {pair.id}: {type(exc).__name__}: {exc}")


def _raise_named(ranker: Ranker, pair: Pair, exc: BaseException) -> typing.NoReturn:
    """Raise ``exc`` as an error naming the ranker and pair (itself when it already does)."""
    named = _named_error(ranker, pair, exc)
    if named is exc:
        raise named
    raise named from exc


def _score_alone(ranker: Ranker, pair: Pair) -> list[float]:
    """``pair``'s validated scores from a one-pair ``score_batch``; errors name the pair."""
    try:
        results = ranker.score_batch([pair])
    except (Exception, SystemExit) as exc:  # a plugin's sys.exit() must not end the run silently
        _raise_named(ranker, pair, exc)
    if len(results) != 1:
        raise RankerError(
            f"ranker {ranker.label} returned {len(results)} score lists for pair {pair.id} alone"
        )
    return validated_scores(ranker, pair, results[0])


def score_chunk(ranker: Ranker, chunk: Sequence[Pair], record: Callable[[Pair, list[float]], None]) -> None:
    """Score ``chunk`` with one ``score_batch`` call and ``record`` every pair's scores.

    Scores are validated pair by pair; the first invalid one raises its error (naming the
    pair) after the pairs before it are recorded. Fallback, only to name the culprit when
    ``score_batch`` itself raises or returns the wrong number of lists: the pairs are scored
    again one at a time (with a warning); the first that fails alone raises its own error, the
    pairs before it recorded. If every pair succeeds alone, the batch's failure is not hidden:
    a :class:`RankerError` carrying the original error is raised (chained), nothing recorded.
    """
    try:
        results = ranker.score_batch(chunk)
    except SourceSumError as exc:  # the ranker's own error already names what failed
        _raise_named(ranker, chunk[0], exc)
    except (Exception, SystemExit) as exc:  # a plugin's sys.exit() must not end the run silently
        failure: BaseException | None = exc
    else:
        failure = None
        if len(results) != len(chunk):
            failure = RankerError(
                f"ranker {ranker.label} returned {len(results)} score lists for {len(chunk)} pairs "
                f"(first pair {chunk[0].id})"
            )
    if failure is not None:
        if len(chunk) == 1:
            _raise_named(ranker, chunk[0], failure)
        warnings.warn(
            f"ranker {ranker.label} failed on a batch of {len(chunk)} pairs ({type(failure).__name__}: {failure}); "
            "scoring them one at a time to find the pair at fault",
            RuntimeWarning,
            stacklevel=2,
        )
        alone: list[tuple[Pair, list[float]]] = []
        try:
            for pair in chunk:
                alone.append((pair, _score_alone(ranker, pair)))
        finally:
            if len(alone) < len(chunk):  # a pair failed alone: keep those before it
                for done, values in alone:
                    record(done, values)
        raise RankerError(
            f"ranker {ranker.label} failed on a batch of {len(chunk)} pairs (first pair {chunk[0].id}) "
            f"with {type(failure).__name__}: {failure}; each of those pairs succeeded when scored alone, so the "
            "failure comes from scoring them together (score_batch); none of them was saved"
        ) from failure
    for pair, scores in zip(chunk, results, strict=True):
        record(pair, validated_scores(ranker, pair, scores))
