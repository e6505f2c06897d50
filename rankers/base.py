"""The ranker API: subclass :class:`Ranker`, set ``name``, implement ``score``, ``@register``.

A ranker turns one :class:`~sourcesum.data.Pair` (document sentences + summary, with the full
document, reference summary, corpus and ids) into one finite score per sentence; a higher score
means "more likely a source of the summary". Example::

    from sourcesum.rankers import Ranker, register

    @register
    class LengthRanker(Ranker):
        name = "length"
        version = "1"

        def __init__(self, longest_first: bool = True):
            self.longest_first = longest_first

        def score(self, pair):
            sign = 1 if self.longest_first else -1
            return [sign * len(s) for s in pair.sentences]

Parameters are the ``__init__`` keyword arguments, read back from attributes of the same name
(the scikit-learn convention); together with ``name``, ``version`` and the data checksum they
key the score cache, so bump ``version`` whenever the scoring code changes.
"""

from __future__ import annotations

import inspect
import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Sequence

from sourcesum.data import Pair
from sourcesum.errors import SourceSumError
from sourcesum.registry import Registry


class Ranker(ABC):
    """Base class of every ranker. Subclasses set ``name`` (and ``version``) and define ``score``."""

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    reference: ClassVar[bool] = False
    """True for reference rows (e.g. the oracle), shown apart from the ranked leaderboard."""
    label_params: ClassVar[tuple[str, ...]] = ()
    """Parameters always shown in the row label (e.g. ``model``), default or not."""
    runtime_params: ClassVar[tuple[str, ...]] = ()
    """Parameters that change where or how fast scores are computed, not what (e.g. ``device``,
    ``batch_size``): left out of :meth:`get_params`, hence out of the cache key and the label."""
    batch_pairs: ClassVar[int] = 64
    """How many pairs the runner hands to :meth:`score_batch` at once (and caches after)."""

    def fit(self, pairs: Sequence[Pair]) -> None:
        """Called once with every pair of a split before scoring (e.g. to compute IDF). No-op."""

    @abstractmethod
    def score(self, pair: Pair) -> Sequence[float]:
        """One finite score per sentence of ``pair`` (``len == pair.n_sentences``)."""

    def score_batch(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """Scores for several pairs; override to batch across pairs (default: one by one)."""
        return [self.score(pair) for pair in pairs]

    def get_params(self) -> dict[str, Any]:
        """The ``__init__`` keyword arguments (except ``runtime_params``), as currently set."""
        params = {}
        for parameter in inspect.signature(type(self).__init__).parameters.values():
            if parameter.name in ("self", *self.runtime_params) or parameter.kind in (
                parameter.VAR_POSITIONAL,
                parameter.VAR_KEYWORD,
            ):
                continue
            params[parameter.name] = getattr(self, parameter.name)
        return params

    @property
    def label(self) -> str:
        """``name`` plus non-default parameters, e.g. ``random(seed=1)``."""
        defaults = {
            p.name: p.default
            for p in inspect.signature(type(self).__init__).parameters.values()
            if p.default is not inspect.Parameter.empty
        }
        changed = {
            k: v
            for k, v in self.get_params().items()
            if k in self.label_params or defaults.get(k, object()) != v
        }
        if not changed:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in sorted(changed.items()))})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({json.dumps(self.get_params(), sort_keys=True, default=str)})"


RANKERS: Registry[type[Ranker]] = Registry("ranker", Ranker, "sourcesum.rankers")
register = RANKERS.register


def create_ranker(name: str, **params: Any) -> Ranker:
    """Instantiate the ranker registered as ``name`` with ``params``; bad params are an error."""
    cls = RANKERS.get(name)
    try:
        return cls(**params)
    except TypeError as exc:
        accepted = [
            p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "args", "kwargs")
        ]
        raise SourceSumError(
            f"ranker {name!r} rejected parameters {params}: {exc}; it accepts {accepted}"
        ) from exc
