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
key the score cache, so bump ``version`` whenever the scoring code changes. Declare them in
``param_specs`` (type, choices or range, one line of doc; see :mod:`sourcesum.params`) or let
their annotations and defaults give their types; values are parsed, validated and canonicalised
before any work.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from sourcesum.data import Pair
from sourcesum.errors import ParameterError
from sourcesum.params import Param, signature_params
from sourcesum.registry import Registry

if TYPE_CHECKING:  # the harness's store types, for annotations only (rankers import the core)
    from sourcesum.store import ScoreStore, StoreStack


class Ranker:
    """Base class of every ranker. Subclasses set ``name`` (and ``version``) and define
    ``score``, ``score_batch`` or both (each defaults to the other; a class defining neither
    cannot be instantiated)."""

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
    """About how many pairs the runner hands to :meth:`score_batch` at once (and caches after);
    whole document groups, so a call may hold more."""
    libraries: ClassVar[tuple[str, ...]] = ()
    """Distributions whose versions are recorded with the scores (numpy, Python and this
    package always are)."""
    param_specs: ClassVar[Mapping[str, Param]] = {}
    """Declared parameters (type, allowed values, doc); undeclared ones are inferred."""
    board_note: ClassVar[str] = ""
    """Markdown the leaderboard prints under its results when a row of this ranker is on it
    (e.g. how a trained ranker was trained); empty for most rankers."""
    store: ScoreStore | StoreStack | None = None
    """The score store (or stack) of the current run, set by :meth:`use_store`."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Ranker:
        if cls.score is Ranker.score and cls.score_batch is Ranker.score_batch:
            raise TypeError(f"ranker class {cls.__name__} defines neither score nor score_batch")
        return super().__new__(cls)

    def key_version(self) -> str:
        """The version written into this ranker's entries and their cache keys: ``version``.

        A ranker built from other rankers' scores extends it with a digest of everything it
        reads besides its own parameters and split (its bases' versions, training data), so a
        new base version or new training data makes a new key and never reuses a stale entry."""
        return self.version

    def fit(self, pairs: Sequence[Pair]) -> None:
        """Called once with every pair of a split before scoring (e.g. to compute IDF). No-op.

        Overriding it declares split-dependent state: the runner then runs this ranker one split
        at a time (``fit`` on the whole split, even in a ``--limit`` or ``--shard`` run, then
        that split's pairs). A ranker that keeps the default gets document groups that span the
        splits of a run (see :meth:`score_batch`).
        """

    def score(self, pair: Pair) -> Sequence[float]:
        """One finite score per sentence of ``pair`` (``len == pair.n_sentences``); default:
        ``score_batch([pair])[0]``, for rankers that only batch."""
        return self.score_batch([pair])[0]

    def score_batch(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """Scores for several pairs, in order; override to batch across pairs (default: one by one).

        The runner hands over whole document groups (every pending pair of a document, grouped
        by ``document_key``; about ``batch_pairs`` pairs per call, more when a group is larger),
        from several splits at once unless :meth:`fit` is overridden. Share per-document work
        within the call; there is no need to memoise scores across calls (the runner caches
        them per split).
        """
        return [self.score(pair) for pair in pairs]

    def use_store(self, store: ScoreStore | StoreStack) -> None:
        """Called by the runner, before :meth:`fit` and scoring, with the store (or stack) it
        reads and writes; kept as :attr:`store`. Rankers built from other rankers' scores
        (``fusion``, ``learned``) read or compute their bases' entries there; others may keep
        files beside the scores under ``store.root`` (e.g. a cache of paid server requests)."""
        self.store = store

    def report(self) -> dict[str, Any]:
        """Counts of how the scores computed since the last call were obtained (e.g.
        fallbacks, tokens used); ``sourcesum run`` shows them after each split. Empty by
        default."""
        return {}

    @classmethod
    def library_versions(cls) -> dict[str, str]:
        """Installed versions of Python, numpy, this package and ``libraries``."""
        import platform
        from importlib.metadata import PackageNotFoundError, version

        out = {"python": platform.python_version()}
        for name in ("sourcesum-bench", "numpy", *cls.libraries):
            try:
                out[name] = version(name)
            except PackageNotFoundError:
                out[name] = "not installed"
        return out

    @classmethod
    def parameters(cls) -> dict[str, tuple[Param, Any]]:
        """``name -> (Param, default)`` for every ``__init__`` keyword argument (read from the
        signature once per class: labels and keys ask for it for every entry)."""
        if cls not in _PARAMETERS:
            _PARAMETERS[cls] = signature_params(cls, cls.param_specs)
        return dict(_PARAMETERS[cls])

    @classmethod
    def canonical_params(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` (text or Python values) parsed, validated and canonicalised; unknown names
        and bad values raise :class:`ParameterError` naming ``<ranker>.<param>``."""
        specs = cls.parameters()
        out = {}
        for key, value in values.items():
            if key not in specs:
                raise ParameterError(
                    f"ranker {cls.name!r} has no parameter {key!r}; it accepts "
                    f"{', '.join(specs) or 'none'} (see `sourcesum list`)"
                )
            out[key] = specs[key][0].coerce(value, f"{cls.name}.{key}")
        return out

    def get_params(self) -> dict[str, Any]:
        """The canonical ``__init__`` keyword arguments (except ``runtime_params``), as set."""
        current = {name: getattr(self, name) for name in self.parameters() if name not in self.runtime_params}
        return self.canonical_params(current)

    def changed_params(self, include_label_params: bool = True) -> dict[str, Any]:
        """Parameters that differ from their defaults (plus ``label_params`` if asked)."""
        specs = self.parameters()
        changed = {}
        for key, value in self.get_params().items():
            spec, default = specs[key]
            if default is not inspect.Parameter.empty:
                default = spec.coerce(default, f"{self.name}.{key}")
            if (include_label_params and key in self.label_params) or default != value:
                changed[key] = value
        return changed

    @property
    def label(self) -> str:
        """``name`` plus non-default parameters, e.g. ``random(seed=1)``."""
        changed = self.changed_params()
        if not changed:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in sorted(changed.items()))})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({json.dumps(self.get_params(), sort_keys=True, default=str)})"


_PARAMETERS: dict[type[Ranker], dict[str, tuple[Param, Any]]] = {}

RANKERS: Registry[type[Ranker]] = Registry("ranker", Ranker, "sourcesum.rankers")
register = RANKERS.register


def create_ranker(name: str, **params: Any) -> Ranker:
    """Instantiate the ranker registered as ``name`` with ``params`` (text or Python values),
    parsed and validated first; any problem is a :class:`ParameterError` naming the ranker."""
    cls = RANKERS.get(name)
    values = cls.canonical_params(params)
    try:
        ranker = cls(**values)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"ranker {name!r} rejected parameters {values}: {exc}") from exc
    ranker.get_params()  # validates the defaults a plugin left as they are
    return ranker
