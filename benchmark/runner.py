"""Run a ranker over a split, validating its scores and caching them as it goes.

Contract: every pair gets exactly ``n_sentences`` finite scores. The store is written after each
batch of ``ranker.batch_pairs`` pairs, so an interrupted or failed run keeps what it finished
and the next run resumes with the pairs still missing.
"""

from __future__ import annotations

import math
from typing import Sequence

from tqdm.auto import tqdm

from sourcesum.data import Pair, Split
from sourcesum.errors import RankerError, SourceSumError
from sourcesum.store import ScoreEntry, ScoreStore, StoreStack, entry_key
from sourcesum.rankers.base import Ranker


def validated_scores(ranker: Ranker, pair: Pair, scores: Sequence[float]) -> list[float]:
    """``scores`` as a list of floats, or :class:`RankerError` naming the ranker and pair."""
    try:
        values = [float(x) for x in scores]
    except (TypeError, ValueError) as exc:
        raise RankerError(f"ranker {ranker.label} returned non-numeric scores for pair {pair.id}: {exc}")
    if len(values) != pair.n_sentences:
        raise RankerError(
            f"ranker {ranker.label} returned {len(values)} scores for pair {pair.id}, "
            f"which has {pair.n_sentences} sentences"
        )
    bad = [i for i, x in enumerate(values) if not math.isfinite(x)]
    if bad:
        raise RankerError(
            f"ranker {ranker.label} returned a non-finite score ({values[bad[0]]}) for sentence "
            f"{bad[0]} of pair {pair.id}"
        )
    return values


def _score_chunk(ranker: Ranker, chunk: Sequence[Pair], entry: ScoreEntry) -> None:
    """Score ``chunk`` into ``entry``; on failure, retry pair by pair to name the culprit."""
    try:
        results = ranker.score_batch(chunk)
        if len(results) != len(chunk):
            raise RankerError(
                f"ranker {ranker.label} returned {len(results)} score lists for {len(chunk)} pairs "
                f"(first pair {chunk[0].id})"
            )
        checked = [validated_scores(ranker, pair, scores) for pair, scores in zip(chunk, results)]
    except Exception as exc:
        if len(chunk) > 1:
            for pair in chunk:  # salvage the pairs that work, fail on the first that does not
                _score_chunk(ranker, [pair], entry)
            return
        if isinstance(exc, SourceSumError):
            raise
        raise RankerError(
            f"ranker {ranker.label} failed on pair {chunk[0].id}: {type(exc).__name__}: {exc}"
        ) from exc
    for pair, scores in zip(chunk, checked):
        entry.scores[pair.id] = scores


def run_ranker(
    ranker: Ranker, split: Split, store: ScoreStore | StoreStack, progress: bool = True
) -> ScoreEntry:
    """Scores of ``ranker`` on every pair of ``split``, from the store where already computed."""
    if ranker.needs_store:
        ranker.store = store
    params = ranker.get_params()
    version = ranker.key_version()
    key = entry_key(ranker.name, version, params, split.sha256)
    entry = store.load(ranker.name, split.name, key) or ScoreEntry(
        ranker=ranker.name,
        version=version,
        params=params,
        label=ranker.label,
        split=split.name,
        data_sha256=split.sha256,
        n_pairs=len(split),
        libraries=ranker.library_versions(),
    )
    todo = [pair for pair in split if pair.id not in entry.scores]
    if not todo:
        return entry
    ranker.use_store(store.root)
    try:
        ranker.fit(split.pairs)
    except SourceSumError:
        raise
    except Exception as exc:
        raise RankerError(
            f"ranker {ranker.label} failed in fit() on split {split.name}: {type(exc).__name__}: {exc}"
        ) from exc
    step = max(1, ranker.batch_pairs)
    with tqdm(
        total=len(split),
        initial=len(split) - len(todo),
        desc=f"{ranker.label} on {split.name}",
        unit="pair",
        disable=not progress,
        leave=False,
    ) as bar:
        for start in range(0, len(todo), step):
            chunk = todo[start : start + step]
            try:
                _score_chunk(ranker, chunk, entry)
            finally:
                if entry.scores:
                    store.save(entry)
            bar.update(len(chunk))
    return entry
