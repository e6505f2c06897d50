"""Training protocols: the only way labels reach a ranker, applied by the harness.

A ranker that learns from labels declares a :class:`~sourcesum.rankers.context.ProtocolSpec`
(:meth:`Ranker.training_protocol`). For the pairs of a split that the runner must score, the
protocol says which labelled pairs may be learned from for which of them (:meth:`Protocol.assign`:
a list of :class:`Assignment`); the runner builds each assignment's
:class:`~sourcesum.rankers.context.TrainingData`, calls ``ranker.train``, then scores that
assignment's pairs. A protocol also names what of the data its configurations' keys must follow
(:meth:`Protocol.key_inputs`).

Protocols (``sourcesum list`` shows them):

* ``own``: the labels of the very pairs scored. Reference rows only (``oracle``).
* ``cross-corpus``: pairs of one corpus are scored after training on every board split of the
  same dataset from the *other* corpora (SourceSum: XSum scored from the two CNN/DM splits and
  vice versa); no pair, document or label of the scored corpus is read. Keyed by the sha256 of
  every board split of the dataset.
* ``same-corpus``: pairs of a split *outside the board* (e.g. SourceSum's held-out splits) are
  scored after training on the board splits of the same corpus, without the pairs of any
  document the scored split holds (SourceSum's held-out CNN/DM documents also appear in main
  pairs, for other summaries). Refused for a board split, whose own labels it would train on.
  Keyed by the sha256 of every board split of the dataset and that rule.
* ``in-domain``: pairs of a split are scored after training on the splits its dataset declares
  for it (``Dataset.training_splits``, e.g. WiCE's dev split for its test split). Keyed by the
  sha256 of those splits.
* ``from-sourcesum``: pairs of another dataset's split are scored after training on every board
  split of SourceSum (out of domain: no pair or label of the scored dataset is read). Keyed by
  the sha256 of SourceSum's board splits. (:class:`FromDataset` makes such a protocol for any
  dataset.)
* ``kfold``: the split's pairs (all of them, whatever subset is being scored) are cut into
  ``folds`` folds by document (:func:`sourcesum.data.folds.document_folds` with ``seed``); the pairs
  of each fold are scored after training on the other folds only.

Adding a protocol: subclass :class:`Protocol` and register an instance in
:data:`~sourcesum.rankers.context.PROTOCOLS` (a plugin: the entry point group ``sourcesum.protocols``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from sourcesum.data import Dataset, Pair, Split, dataset_of, load_split, split_spec
from sourcesum.data.folds import document_folds
from sourcesum.errors import RankerError, UnknownNameError
from sourcesum.rankers.context import PROTOCOLS, ProtocolSpec, TrainingProtocol


@dataclass(frozen=True)
class Assignment:
    """Score ``pairs`` after training on ``training``: ``(split, pair positions)`` in order,
    described as ``trained_on``."""

    training: tuple[tuple[Split, tuple[int, ...]], ...]
    trained_on: tuple[str, ...]
    pairs: tuple[Pair, ...]


class Protocol(TrainingProtocol):
    """Base class of the training protocols (see the module docstring)."""

    description: ClassVar[str]
    reference_only: ClassVar[bool] = False

    def key_inputs(self, spec: ProtocolSpec, split: str) -> list[Any]:
        """What, besides the scored split, the scores of a configuration under ``spec`` on
        ``split`` depend on (it enters the key version)."""
        return []

    def training_splits(self, spec: ProtocolSpec, split: str) -> list[str]:
        """Names of the splits whose labelled pairs the assignments may use (their base scores
        are computed first)."""
        return [split]

    def assign(self, spec: ProtocolSpec, split: Split, pairs: Sequence[Pair]) -> list[Assignment]:
        """The assignments covering ``pairs`` (pending pairs of ``split``)."""
        raise NotImplementedError

    def outside_source(self, split: str) -> str | None:
        """The dataset whose board pairs the protocol fits on when it scores ``split``, where
        none of them is of ``split``'s corpus (``cross-corpus``: the scored split's own dataset;
        ``from-sourcesum``: SourceSum); None where the fit may read pairs of the scored corpus."""
        return None


def _all(split: Split) -> tuple[int, ...]:
    return tuple(range(len(split)))


class OwnLabels(Protocol):
    name = "own"
    description = "the labels of the very pairs scored (reference rows only)"
    reference_only = True

    def assign(self, spec: ProtocolSpec, split: Split, pairs: Sequence[Pair]) -> list[Assignment]:
        return [Assignment(((split, _all(split)),), (split.name,), tuple(pairs))]


class TrainOnSplits(Protocol):
    """Every pending pair scored after training on all pairs of :meth:`training_splits`; keyed
    by the sha256 of :meth:`keyed_splits` (default: every board split of the scored split's
    dataset)."""

    def keyed_splits(self, spec: ProtocolSpec, split: str) -> tuple[Dataset, list[str]]:
        ds = dataset_of(split)
        return ds, ds.board_splits()

    def key_inputs(self, spec: ProtocolSpec, split: str) -> list[Any]:
        ds, names = self.keyed_splits(spec, split)
        return [{name: ds.data_sha256(ds.split_spec(name)) for name in names}]

    def assign(self, spec: ProtocolSpec, split: Split, pairs: Sequence[Pair]) -> list[Assignment]:
        names = self.training_splits(spec, split.name)
        training = tuple((s, _all(s)) for s in (load_split(n) for n in names))
        return [Assignment(training, tuple(names), tuple(pairs))]


class CrossCorpus(TrainOnSplits):
    name = "cross-corpus"
    description = "trained on the board splits of the dataset's other corpora"

    def training_splits(self, spec: ProtocolSpec, split: str) -> list[str]:
        corpus = split_spec(split).corpus
        ds = dataset_of(split)
        names = [n for n in ds.board_splits() if ds.split_spec(n).corpus != corpus]
        if not names:
            raise RankerError(
                f"protocol cross-corpus: dataset {ds.name} has no board split outside corpus {corpus!r} "
                f"(of split {split}) to train on"
            )
        return names

    def outside_source(self, split: str) -> str | None:
        return dataset_of(split).name


class SameCorpus(TrainOnSplits):
    name = "same-corpus"
    description = (
        "trained on the board splits of the scored split's own corpus (splits outside the board "
        "only), without the pairs of any document the scored split holds"
    )
    RULE = "without the pairs of the scored split's documents"
    """In the key: entries fitted before the rule (on every pair of the corpus) keep other keys."""

    def key_inputs(self, spec: ProtocolSpec, split: str) -> list[Any]:
        return [*super().key_inputs(spec, split), self.RULE]

    def assign(self, spec: ProtocolSpec, split: Split, pairs: Sequence[Pair]) -> list[Assignment]:
        """Every pending pair scored after training on the pairs of the corpus's board splits
        whose document the scored split does not hold (SourceSum's held-out CNN/DM pairs share
        documents with main pairs of other summaries: their votes must not be trained on)."""
        scored = {p.document_key for p in split.pairs}
        training = []
        for name in self.training_splits(spec, split.name):
            board = load_split(name)
            training.append(
                (board, tuple(i for i, p in enumerate(board.pairs) if p.document_key not in scored))
            )
        if not any(kept for _, kept in training):
            raise RankerError(
                f"protocol same-corpus: every document of the board splits of {split.name}'s corpus is "
                f"also in {split.name}, so no pair is left to train on"
            )
        names = tuple(
            f"{s.name} ({len(kept)} of {len(s)} pairs: documents not in {split.name})" for s, kept in training
        )
        return [Assignment(tuple(training), names, tuple(pairs))]

    def training_splits(self, spec: ProtocolSpec, split: str) -> list[str]:
        ds = dataset_of(split)
        if split in ds.board_splits():
            raise RankerError(
                f"protocol same-corpus: {split} is a board split, and its own labels would be trained on; "
                "use it for splits outside the board (e.g. the held-out splits), or kfold / cross-corpus"
            )
        corpus = split_spec(split).corpus
        names = [n for n in ds.board_splits() if ds.split_spec(n).corpus == corpus]
        if not names:
            raise RankerError(
                f"protocol same-corpus: dataset {ds.name} has no board split in corpus {corpus!r} "
                f"(of split {split}) to train on"
            )
        return names


class InDomain(TrainOnSplits):
    name = "in-domain"
    description = (
        "trained on the splits the dataset declares for the scored split (e.g. WiCE dev for WiCE test)"
    )

    def keyed_splits(self, spec: ProtocolSpec, split: str) -> tuple[Dataset, list[str]]:
        return dataset_of(split), self.training_splits(spec, split)

    def training_splits(self, spec: ProtocolSpec, split: str) -> list[str]:
        ds = dataset_of(split)
        names = list(ds.training_splits.get(split, ()))
        if not names:
            raise RankerError(
                f"protocol in-domain: dataset {ds.name} declares no training split for {split} "
                f"(Dataset.training_splits: {ds.training_splits or 'none'})"
            )
        return names


class FromDataset(TrainOnSplits):
    """Trained on every board split of another dataset (out of domain)."""

    def __init__(self, source: str):
        self.source = source
        self.name = f"from-{source}"  # type: ignore[misc]
        self.description = f"trained on every board split of dataset {source} (out of domain)"  # type: ignore[misc]

    def _source(self, split: str) -> Dataset:
        from sourcesum.data import dataset

        if dataset_of(split).name == self.source:
            raise RankerError(
                f"protocol {self.name}: {split} is a split of {self.source} itself; use cross-corpus, "
                "same-corpus or kfold there"
            )
        return dataset(self.source)

    def keyed_splits(self, spec: ProtocolSpec, split: str) -> tuple[Dataset, list[str]]:
        ds = self._source(split)
        return ds, ds.board_splits()

    def training_splits(self, spec: ProtocolSpec, split: str) -> list[str]:
        return list(self._source(split).board_splits())

    def outside_source(self, split: str) -> str | None:
        return self._source(split).name


class KFold(Protocol):
    name = "kfold"
    description = "folds by document within the split; each fold scored after training on the others"

    def assign(self, spec: ProtocolSpec, split: Split, pairs: Sequence[Pair]) -> list[Assignment]:
        folds, seed = int(spec.params["folds"]), int(spec.params["seed"])
        documents = {p.document_key for p in split.pairs}
        if folds > len(documents):
            raise RankerError(
                f"protocol kfold: {folds} folds need at least {folds} documents, split {split.name} has "
                f"{len(documents)}; lower folds"
            )
        fold_of = document_folds([p.document_key for p in split.pairs], folds, seed)
        position = split.index
        out = []
        for fold in range(folds):
            scored = tuple(p for p in pairs if fold_of[position[p.id]] == fold)
            if not scored:
                continue
            train = tuple(i for i in range(len(split)) if fold_of[i] != fold)
            out.append(Assignment(((split, train),), (f"{split.name} folds != {fold}",), scored))
        return out


OWN = OwnLabels()
CROSS_CORPUS = CrossCorpus()
SAME_CORPUS = SameCorpus()
KFOLD = KFold()
IN_DOMAIN = InDomain()
FROM_SOURCESUM = FromDataset("sourcesum")


def protocol(name: str) -> Protocol:
    """The registered protocol ``name`` (:data:`~sourcesum.rankers.context.PROTOCOLS`)."""
    found = PROTOCOLS.get(name)
    if not isinstance(found, Protocol):
        raise UnknownNameError(f"training protocol {name!r} is not a Protocol of the harness")
    return found
