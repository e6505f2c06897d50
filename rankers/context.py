"""What the harness hands a ranker besides its pairs: base scores and labelled training data.

Rankers never fetch these themselves (no ranker imports the runner, the store or a split
loader); they declare what they need and the runner computes it first:

* a ranker built from other rankers' scores declares :meth:`Ranker.base_configurations`; the
  runner computes (or reads) every base's entries and calls ``use_bases(BaseScores)``;
* a ranker that learns from labels declares :meth:`Ranker.training_protocol` (a
  :class:`ProtocolSpec`); the runner applies the protocol (:mod:`sourcesum.runner.protocols`): for
  each group of pairs to score it builds the :class:`TrainingData` the protocol allows, calls
  ``train(data)``, then scores that group. No other path gives a ranker a label.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sourcesum.data.pairs import Judgment, Pair
from sourcesum.errors import LabelAccessError, RankerError
from sourcesum.registry import Registry


class TrainingProtocol:
    """What a training protocol is to a ranker: a name and a description. The protocols
    themselves (which labelled pairs may be learned from for which pairs) are the harness's
    (:mod:`sourcesum.runner.protocols`, whose :class:`~sourcesum.runner.protocols.Protocol`
    subclasses this)."""

    name: ClassVar[str]
    description: ClassVar[str]
    reference_only: ClassVar[bool] = False


PROTOCOLS: Registry[TrainingProtocol] = Registry(
    "training protocol",
    TrainingProtocol,
    "sourcesum.protocols",
    instances=True,
    name_pattern=re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*"),
)
"""The training protocols by name (plugins through the entry point group ``sourcesum.protocols``,
whose value names a :class:`~sourcesum.runner.protocols.Protocol` instance). The built-in ones
are declared here and imported on first use, so a ranker's ``protocol`` parameter checks its
value against the names without loading the runner."""
PROTOCOLS.register_lazy(
    {
        name: f"sourcesum.runner.protocols:{attr}"
        for name, attr in (
            ("own", "OWN"),
            ("cross-corpus", "CROSS_CORPUS"),
            ("same-corpus", "SAME_CORPUS"),
            ("kfold", "KFOLD"),
            ("in-domain", "IN_DOMAIN"),
            ("from-sourcesum", "FROM_SOURCESUM"),
        )
    }
)


class _LearnableProtocols:
    """The protocols a trained ranker may be given: every registered one except the
    reference-only (``own``, the labels of the very pairs scored). A :class:`~sourcesum.params.Param`
    ``registry``: its ``names()`` are read when a value is checked."""

    def names(self) -> list[str]:
        return [name for name in PROTOCOLS.names() if not PROTOCOLS.get(name).reference_only]


LEARNABLE_PROTOCOLS = _LearnableProtocols()
"""The ``protocol`` parameter's allowed values for trained rankers (``learned``, ``overlap_prior``)."""


@dataclass(frozen=True)
class ProtocolSpec:
    """A training protocol and its parameters, as a ranker declares it (e.g. ``kfold`` with
    ``folds`` and ``seed``). ``own`` (the labels of the very pairs scored) is allowed for
    reference rows only."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    votes: bool = True
    """False: the ranker learns from the training pairs' inputs and its bases' scores alone; their
    votes are withheld (:class:`WithheldJudgments`), so its rows read no vote (zero-shot)."""


class BaseScores:
    """Raw scores of a ranker's bases: per (split, pair id) an ``(n_bases, n_sentences)`` array,
    bases in the order the ranker declared them."""

    def __init__(self, by_split: Mapping[str, Mapping[str, np.ndarray]], labels: tuple[str, ...] = ()):
        self._by_split = by_split
        self.labels = labels

    def of(self, split: str, pair_id: str) -> np.ndarray:
        scores = self._by_split.get(split, {}).get(pair_id)
        if scores is None:
            raise RankerError(f"no base scores for pair {pair_id} of split {split}")
        return scores

    def for_pair(self, pair: Pair) -> np.ndarray:
        return self.of(pair.split, pair.id)

    def splits(self) -> list[str]:
        return list(self._by_split)


class WithheldJudgments(Sequence[Judgment]):
    """The judgments of training pairs under a protocol that withholds votes
    (``ProtocolSpec.votes=False``): any read raises :class:`LabelAccessError`."""

    def __init__(self, trained_on: tuple[str, ...]):
        self.trained_on = trained_on

    def _refuse(self) -> LabelAccessError:
        return LabelAccessError(
            f"the votes of the training pairs ({', '.join(self.trained_on)}) are withheld: this "
            "ranker's protocol lets it learn from their inputs and its bases' scores only"
        )

    def __len__(self) -> int:
        raise self._refuse()

    def __getitem__(self, index: Any) -> Any:
        raise self._refuse()

    def __iter__(self) -> Iterator[Judgment]:
        raise self._refuse()


@dataclass(frozen=True)
class TrainingData:
    """Labelled pairs a protocol allows a ranker to learn from, in a fixed order.

    ``judgments[i]`` labels ``pairs[i]``; ``base_scores[i]`` (rankers with bases) holds the
    bases' raw scores on it; ``trained_on`` says where the pairs come from, in words (e.g.
    ``("cnn_pegasus", "cnn_reference")`` or ``("xsum_pegasus folds != 3",)``); binary relevance
    of these pairs is ``graded >= min_relevant`` (their dataset's threshold)."""

    pairs: tuple[Pair, ...]
    judgments: Sequence[Judgment]
    """One per pair; a :class:`WithheldJudgments` under a protocol that withholds votes."""
    trained_on: tuple[str, ...]
    min_relevant: float
    base_scores: tuple[np.ndarray, ...] | None = None
