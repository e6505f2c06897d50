"""Run a ranker over one or more splits, validating its scores and caching them as it goes.

Contract: every pair gets exactly ``n_sentences`` finite scores (checked by
:func:`sourcesum.evaluation.qrels.validated_row`). Each split has its own store
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
  protocol (:mod:`sourcesum.runner.protocols`) the runner builds the labelled training data,
  calls ``train`` and scores that assignment's pairs. No other path gives a ranker a label:
  the pairs it scores are inputs only, and reading a label from one is an error naming it.

A :class:`Selection` restricts which pairs are scored: the first ``limit`` of each split, the
listed pair ids, and/or one :class:`Shard` (every document's pairs, across splits, fall in one
shard by a stable hash of its key). ``fit`` still sees the whole split; the entries written are
partial, and ``sourcesum merge`` joins the shards' stores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sourcesum.data import Pair, Split, load_split
from sourcesum.errors import LabelAccessError, RankerError, ScoreFileError, SourceSumError
from sourcesum.rankers.base import Ranker, stores_fit
from sourcesum.rankers.context import BaseScores
from sourcesum.runner.batches import group_batches, group_by_document, score_chunk, splitwise
from sourcesum.runner.configs import Configuration
from sourcesum.runner.protocols import Assignment, protocol
from sourcesum.runner.provide import needed_splits, train
from sourcesum.runner.selection import Selection
from sourcesum.store.entry import ScoreEntry, agreed_libraries, fit_key, fit_problem
from sourcesum.store.stores import ScoreStore, StoreStack
from tqdm.auto import tqdm


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


def new_entry(
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
    both, so one entry never mixes scores of two environments. The partial entry of a ranker
    that stores its fits must hold them."""
    if stores_fit(ranker) and entry.scores and not entry.fits:
        raise ScoreFileError(
            f"{where}: a partial entry whose scores were saved without the fit that made them "
            f"(written before {ranker.name} stored its fits); delete it and rerun"
        )
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


def restore_stored_fit(ranker: Ranker, entry: ScoreEntry | None, assignment: Assignment) -> bool:
    """Restore the fit ``entry`` stores for ``assignment`` (under :func:`fit_key` of its
    training splits) into ``ranker``; False, restoring nothing, where there is no entry, the
    ranker stores no fits or the entry has none for that assignment."""
    if entry is None or not stores_fit(ranker):
        return False
    state = entry.fits.get(fit_key(assignment.trained_on))
    if state is None:
        return False
    ranker.restore_fitted_state(state)
    return True


def resume_or_train(
    ranker: Ranker, entry: ScoreEntry, assignment: Assignment, bases: BaseScores | None, votes: bool
) -> None:
    """Train ``ranker`` on ``assignment``, and record its :meth:`~Ranker.fitted_state` in
    ``entry`` (saved with the pairs it scores); where the entry already stores the fit of that
    assignment (a resumed run, or a shard started after another), restore it instead, so every
    pair of an entry comes from the fit it records."""
    if restore_stored_fit(ranker, entry, assignment):
        return
    train(ranker, assignment, bases, votes)
    state = ranker.fitted_state()
    if state is not None:
        entry.fits[fit_key(assignment.trained_on)] = state


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
                score_chunk(ranker, chunk, record)
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
        SplitRun(split, new_entry(config, ranker, split, store), selection.pairs(split)) for split in splits
    ]
    pending = [run for run in runs if any(p.id not in run.entry.scores for p in run.pairs)]
    if not pending:
        return runs
    for run in pending:
        if run.entry.scores:  # resuming: the same environment only
            check_resumable(
                run.entry, ranker, store.path_for(run.entry.ranker, run.split.name, run.entry.key)
            )
    bases = (
        base_scores(config, needed_splits(config, [run.split.name for run in pending]), store)
        if config.bases
        else None
    )
    if bases is not None:
        ranker.use_bases(bases)  # type: ignore[attr-defined]  # composites declare it
    if config.protocol is not None:
        rule = protocol(config.protocol.name)
        for run in pending:
            if splitwise(ranker):
                _fit(ranker, run.split)
            todo = [p for p in run.pairs if p.id not in run.entry.scores]
            for assignment in rule.assign(config.protocol, run.split, todo):
                resume_or_train(ranker, run.entry, assignment, bases, config.protocol.votes)
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
