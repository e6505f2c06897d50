"""Run a ranker over one or more splits, validating its scores and caching them as it goes.

Contract: every pair gets exactly ``n_sentences`` finite scores (checked by
:func:`sourcesum.qrels.validated_row`). Each split has its own store
entry, written after every batch of pairs, so an interrupted or failed run keeps what it
finished and the next run resumes with the pairs still missing.

Sharing across splits (the runner owns it): the pending pairs of all the splits of a run are
grouped by document (``Pair.document_key``: XSum-PEGASUS and XSum-Reference share their 119
documents, the two CNN/DM splits their 191) and :meth:`Ranker.score_batch` receives whole
document groups, about ``batch_pairs`` pairs at a time, with pairs of several splits in one call,
so a ranker whose cost is per document pays it once. A ranker that overrides
:meth:`Ranker.fit` (split-dependent state such as an IDF) is instead run one split at a time:
``fit(split.pairs)`` with the whole split, then that split's document groups.

What a ranker declares, the runner provides first (rankers never run the harness):

* **bases** (:meth:`Ranker.base_configurations`): every base's entries on the splits needed
  are read or computed into the store under the base's own key (``run_splits`` on each base),
  then handed over with ``use_bases``;
* **a training protocol** (:meth:`Ranker.training_protocol`): for each assignment of the
  protocol (:mod:`sourcesum.protocols`) the runner builds the labelled training data,
  calls ``train`` and scores that assignment's pairs. No other path gives a ranker a label:
  the pairs it scores are inputs only, and reading a label from one is an error naming it.

A :class:`Selection` restricts which pairs are scored: the first ``limit`` of each split, the
listed pair ids, and/or one :class:`Shard` (every document's pairs, across splits, fall in one
shard by a stable hash of its key). ``fit`` still sees the whole split; the entries written are
partial, and ``sourcesum merge`` joins the shards' stores.
"""

from __future__ import annotations

import typing
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sourcesum.configs import Configuration
from sourcesum.data import Pair, Split, load_split
from sourcesum.errors import LabelAccessError, RankerError, ScoreFileError, SourceSumError
from sourcesum.hashing import sha256_bytes
from sourcesum.protocols import Assignment, protocol
from sourcesum.qrels import validated_row
from sourcesum.rankers.base import Ranker
from sourcesum.rankers.context import BaseScores, TrainingData
from sourcesum.store import ScoreEntry, ScoreStore, StoreStack, agreed_libraries, fit_problem
from tqdm.auto import tqdm


def validated_scores(ranker: Ranker, pair: Pair, scores: Sequence[float]) -> list[float]:
    """``scores`` as a list of floats, or :class:`RankerError` naming the ranker and pair
    (:func:`sourcesum.qrels.validated_row`)."""
    return validated_row(pair, scores, lambda: f"ranker {ranker.label}", RankerError)


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


@dataclass
class SplitRun:
    """The outcome of a run on one split: its store entry and the pairs the run selected."""

    split: Split
    entry: ScoreEntry
    pairs: list[Pair]

    @property
    def partial(self) -> bool:
        """True when the run covered fewer pairs than the split has (``--limit``, ``--shard``...)."""
        return len(self.pairs) < len(self.split)

    def scored_split(self) -> Split:
        """The split restricted to the selected pairs (the split itself when not partial)."""
        return self.split.subset([p.id for p in self.pairs]) if self.partial else self.split

    def scores(self) -> dict[str, list[float]]:
        """Scores of the selected pairs."""
        return {p.id: self.entry.scores[p.id] for p in self.pairs}


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


def _score_chunk(ranker: Ranker, chunk: Sequence[Pair], record: Callable[[Pair, list[float]], None]) -> None:
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


def _new_entry(
    config: Configuration, ranker: Ranker, split: Split, store: ScoreStore | StoreStack
) -> ScoreEntry:
    """The entry of ``config`` on ``split``: from the store (possibly partial), else a new one
    recording this environment's library versions and the ranker's provenance."""
    version = config.key_version(split.name)
    key = config.entry_key(split.name, split.sha256)
    found = store.load(config.ranker, split.name, key)
    if found is not None:
        problem = fit_problem(found, split)
        if problem:
            raise ScoreFileError(f"{store.path_for(config.ranker, split.name, key)}: {problem}; delete it")
        return found
    return ScoreEntry(
        ranker=config.ranker,
        version=version,
        params=config.params,
        label=config.label,
        split=split.name,
        data_sha256=split.sha256,
        n_pairs=len(split),
        libraries=ranker.library_versions(),
        provenance=ranker.provenance(),
    )


def check_resumable(entry: ScoreEntry, ranker: Ranker, where: Path) -> None:
    """A partial entry may be resumed only in an environment that would record the same
    library versions (the harness's own excepted) and provenance; otherwise an error naming
    both, so one entry never mixes scores of two environments."""
    have = agreed_libraries(entry.libraries), entry.provenance
    now = agreed_libraries(ranker.library_versions()), ranker.provenance()
    if have != now:
        differ = [
            f"{name}: {have[i].get(name, 'absent')} in the entry, {now[i].get(name, 'absent')} here"
            for i in (0, 1)
            for name in sorted(set(have[i]) | set(now[i]))
            if have[i].get(name) != now[i].get(name)
        ]
        raise ScoreFileError(
            f"{where}: a partial entry computed under other versions ({'; '.join(differ)}); resume it "
            "where it was made, or run into another --scores-dir (a new entry), or delete it"
        )


def _fit(ranker: Ranker, split: Split) -> None:
    """``ranker.fit`` on the whole split; a failure is an error naming the ranker and split."""
    try:
        ranker.fit(split.pairs)
    except LabelAccessError as exc:
        raise LabelAccessError(f"ranker {ranker.label} read a label in fit(): {exc}") from exc
    except SourceSumError:
        raise
    except (Exception, SystemExit) as exc:  # a plugin's sys.exit() must not end the run silently
        raise RankerError(
            f"ranker {ranker.label} failed in fit() on split {split.name}: {type(exc).__name__}: {exc}"
        ) from exc


def _score_pending(
    ranker: Ranker,
    runs: Sequence[SplitRun],
    store: ScoreStore | StoreStack,
    progress: bool,
    only: Sequence[Pair] | None = None,
) -> None:
    """Score the selected pairs still missing from ``runs``' entries (``only``: those of them
    in ``only``), in cross-split document groups."""
    allowed = None if only is None else {id(p) for p in only}
    owner: dict[Pair, ScoreEntry] = {}
    for run in runs:
        owner.update(
            (p, run.entry)
            for p in run.pairs
            if p.id not in run.entry.scores and (allowed is None or id(p) in allowed)
        )
    touched: set[int] = set()

    def record(pair: Pair, scores: list[float]) -> None:
        entry = owner[pair]
        entry.scores[pair.id] = scores
        touched.add(id(entry))

    total = sum(len(run.pairs) for run in runs) if only is None else len(owner)
    with tqdm(
        total=total,
        initial=total - len(owner),
        desc=f"{ranker.label} on {', '.join(run.split.name for run in runs)}",
        unit="pair",
        disable=not progress,
        leave=False,
    ) as bar:
        for chunk in group_batches(group_by_document(list(owner)), ranker.batch_pairs):
            try:
                _score_chunk(ranker, chunk, record)
            finally:
                for run in runs:
                    if id(run.entry) in touched:
                        store.save(run.entry)
                touched.clear()
            bar.update(len(chunk))


def base_scores(
    config: Configuration, split_names: Sequence[str], store: ScoreStore | StoreStack
) -> BaseScores:
    """Every base's complete scores on the named splits, read from ``store`` or computed into it
    under the base's own key (one :func:`run_splits` per base over all the splits)."""
    splits = [load_split(name) for name in split_names]
    entries = [
        [run.entry for run in run_splits(base.create(), splits, store, progress=False)]
        for base in config.bases
    ]
    by_split: dict[str, dict[str, np.ndarray]] = {}
    for index, split in enumerate(splits):
        per_base = [entries[b][index] for b in range(len(config.bases))]
        by_split[split.name] = {
            pair.id: np.array([entry.scores[pair.id] for entry in per_base], dtype=float) for pair in split
        }
    return BaseScores(by_split, tuple(b.label for b in config.bases))


def training_data(assignment: Assignment, bases: BaseScores | None) -> TrainingData:
    """The labelled pairs of ``assignment``, in order, with their bases' scores."""
    pairs, judgments, scores = [], [], []
    thresholds = {split.min_relevant for split, _ in assignment.training}
    if len(thresholds) != 1:
        raise RankerError(f"training on {assignment.trained_on}: the splits' binary thresholds differ")
    for split, positions in assignment.training:
        for i in positions:
            pairs.append(split.pairs[i])
            judgments.append(split.judgments[i])
            if bases is not None:
                scores.append(bases.of(split.name, split.pairs[i].id))
    return TrainingData(
        tuple(pairs),
        tuple(judgments),
        assignment.trained_on,
        thresholds.pop(),
        tuple(scores) if bases is not None else None,
    )


def _train(ranker: Ranker, assignment: Assignment, bases: BaseScores | None) -> None:
    data = training_data(assignment, bases)
    try:
        ranker.train(data)
    except SourceSumError:
        raise
    except (Exception, SystemExit) as exc:  # a plugin's sys.exit() must not end the run silently
        raise RankerError(
            f"ranker {ranker.label} failed in train() on {', '.join(data.trained_on)}: {type(exc).__name__}: {exc}"
        ) from exc


def _needed_splits(config: Configuration, runs: Sequence[SplitRun]) -> list[str]:
    """The splits whose base scores a run needs: the scored ones, then the protocol's training
    splits."""
    names = [run.split.name for run in runs]
    if config.protocol is not None:
        for run in runs:
            names += protocol(config.protocol.name).training_splits(config.protocol, run.split.name)
    return list(dict.fromkeys(names))


def run_splits(
    ranker: Ranker,
    splits: Sequence[Split],
    store: ScoreStore | StoreStack,
    selection: Selection = Selection(),
    progress: bool = True,
) -> list[SplitRun]:
    """Scores of ``ranker`` on the selected pairs of every split, from the store where cached.

    Pending pairs of all ``splits`` are scored together in document groups, unless the ranker
    overrides ``fit`` or is trained (then split by split: ``fit`` on the whole split, then each
    assignment of its protocol; see the module docstring). Returns one :class:`SplitRun` per
    split, in order.
    """
    names = [split.name for split in splits]
    if len(set(names)) != len(names):
        raise SourceSumError(f"run_splits: a split is listed twice in {names}")
    selection.check(splits)
    config = Configuration.of_ranker(ranker)
    ranker.use_workspace(store.root)
    runs = [
        SplitRun(split, _new_entry(config, ranker, split, store), selection.pairs(split)) for split in splits
    ]
    pending = [run for run in runs if any(p.id not in run.entry.scores for p in run.pairs)]
    if not pending:
        return runs
    for run in pending:
        if run.entry.scores:  # resuming: the same environment only
            check_resumable(
                run.entry, ranker, store.path_for(run.entry.ranker, run.split.name, run.entry.key)
            )
    bases = base_scores(config, _needed_splits(config, pending), store) if config.bases else None
    if bases is not None:
        ranker.use_bases(bases)  # type: ignore[attr-defined]  # composites declare it
    if config.protocol is not None:
        rule = protocol(config.protocol.name)
        for run in pending:
            if splitwise(ranker):
                _fit(ranker, run.split)
            todo = [p for p in run.pairs if p.id not in run.entry.scores]
            for assignment in rule.assign(config.protocol, run.split, todo):
                _train(ranker, assignment, bases)
                _score_pending(ranker, [run], store, progress, only=assignment.pairs)
    elif splitwise(ranker):
        for run in pending:
            _fit(ranker, run.split)
            _score_pending(ranker, [run], store, progress)
    else:
        _score_pending(ranker, pending, store, progress)
    return runs


def run_ranker(
    ranker: Ranker, split: Split, store: ScoreStore | StoreStack, progress: bool = True
) -> ScoreEntry:
    """Scores of ``ranker`` on every pair of one ``split`` (``run_splits`` on that split alone)."""
    return run_splits(ranker, [split], store, progress=progress)[0].entry


def explain(ranker: Ranker, split: Split, store: ScoreStore | StoreStack) -> list[dict[str, object]]:
    """What a trained ranker fits to score ``split``: for each assignment of its protocol (in
    order), ``ranker.describe_model()`` after training on it. Bases are read or computed."""
    config = Configuration.of_ranker(ranker)
    describe = getattr(ranker, "describe_model", None)
    if config.protocol is None or describe is None:
        raise SourceSumError(
            f"ranker {ranker.name!r} fits no model to explain (try `sourcesum explain learned`)"
        )
    ranker.use_workspace(store.root)
    runs = [SplitRun(split, _new_entry(config, ranker, split, store), list(split.pairs))]
    bases = base_scores(config, _needed_splits(config, runs), store) if config.bases else None
    if bases is not None:
        ranker.use_bases(bases)  # type: ignore[attr-defined]
    out: list[dict[str, object]] = []
    for assignment in protocol(config.protocol.name).assign(config.protocol, split, split.pairs):
        _train(ranker, assignment, bases)
        described = describe()
        if described not in out:
            out.append(described)
    return out
