"""The ranker API: subclass :class:`Ranker`, set ``name``, implement ``score``, ``@register``.

A ranker turns one :class:`~sourcesum.data.Pair` (the document's sentences and the summary,
with the full document, reference summary, corpus, query and ids: inputs only, never a label)
into one finite score per sentence; a higher score means "more likely a source of the summary".
Example::

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
before any work. Everything a configuration is known by (its canonical parameters, label,
bases, training protocol) is computed from the class and the parameters alone
(:meth:`Ranker.full_params`, :meth:`Ranker.label_for`...), so the board names rows without
instantiating a ranker.

Reading labels: ``pair.votes`` (or ``graded``, ``binary``) raises an error naming the ranker.
A ranker that learns from labels declares :meth:`training_protocol` and receives labelled
:class:`~sourcesum.rankers.context.TrainingData` through :meth:`train`; one built from other
rankers' scores declares :meth:`base_configurations` and receives them through ``use_bases``
(see :mod:`sourcesum.rankers.composite`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from sourcesum.data.pairs import Pair
from sourcesum.errors import ParameterError, RankerError
from sourcesum.params import Param, signature_params
from sourcesum.rankers.context import ProtocolSpec, TrainingData
from sourcesum.rankers.requirements import check_requirements
from sourcesum.registry import Registry


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
    requires: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """The top-level modules the ranker imports to score, by the extra of ``sourcesum-bench``
    that installs them (e.g. ``{"lm": ("torch", "transformers")}``): :func:`create_ranker`
    checks them before building the ranker, so a missing one is one line naming the ``pip
    install`` to run (see :meth:`requirements`, :mod:`sourcesum.rankers.requirements`)."""
    param_specs: ClassVar[Mapping[str, Param]] = {}
    """Declared parameters (type, allowed values, doc); undeclared ones are inferred."""
    reproduction_tolerance: ClassVar[float] = 0.0
    """Largest difference ``sourcesum verify`` accepts between stored and recomputed scores: 0
    (bit for bit) unless the ranker's floating-point results depend on the machine or on how
    pairs are batched (a test per ranker checks the claim it makes)."""
    verify_sample: ClassVar[int | None] = None
    """Pairs ``sourcesum verify`` recomputes per entry by default (None: every pair)."""
    bases_on_scored_splits: ClassVar[bool] = True
    """Whether :meth:`base_configurations`' scores are read on the pairs scored (composites) or
    on the training pairs only (False: a target to fit, as ``at2``'s ablation effects), in which
    case a run computes the bases on the protocol's training splits alone."""
    board_note: ClassVar[str] = ""
    """Markdown the leaderboard prints under its results when a row of this ranker is on it
    (e.g. how a trained ranker was trained); empty for most rankers."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Ranker:
        if cls.score is Ranker.score and cls.score_batch is Ranker.score_batch:
            raise TypeError(f"ranker class {cls.__name__} defines neither score nor score_batch")
        return super().__new__(cls)

    # -- scoring hooks ----------------------------------------------------------------------
    def fit(self, pairs: Sequence[Pair]) -> None:
        """Called once with every pair of a split before scoring (e.g. to compute IDF). No-op.

        Overriding it declares split-dependent state: the runner then runs this ranker one split
        at a time (``fit`` on the whole split, even in a ``--limit`` or ``--shard`` run, then
        that split's pairs). A ranker that keeps the default gets document groups that span the
        splits of a run (see :meth:`score_batch`). The pairs are inputs only.
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

    def train(self, data: TrainingData) -> None:
        """Learn from labelled pairs (rankers that declare :meth:`training_protocol`): called
        by the runner before it scores the pairs the protocol assigns to ``data``."""
        raise RankerError(f"ranker {self.name} declares no training protocol, so it is never trained")

    def fitted_state(self) -> dict[str, Any] | None:
        """What the last :meth:`train` fitted, as JSON data the runner stores in the entries it
        scores with it (``ScoreEntry.fits``, under the training assignment), or None: nothing is
        stored (the default; ``at2`` stores its head weights)."""
        return None

    def restore_fitted_state(self, state: Mapping[str, Any]) -> None:
        """Take back a fit :meth:`fitted_state` returned, as if :meth:`train` had fitted it
        (``sourcesum explain`` reads a stored fit this way instead of refitting)."""
        raise RankerError(f"ranker {self.name} stores no fit to restore")

    def use_workspace(self, folder: Path) -> None:
        """Called by the runner before scoring with a folder beside the scores where the ranker
        may keep files across runs (e.g. the LLM judge's cache of paid server requests). No-op."""

    def provenance(self) -> dict[str, str]:
        """What the scores come from beyond the code and the libraries, as ``name -> identity``
        strings recorded in every entry's header (e.g. a model's weights: their package version
        and file sha256; a server's reported model id, marked unverified). Entries and resumed
        runs must agree on it. Default: nothing."""
        return {}

    def report(self) -> dict[str, Any]:
        """Counts of how the scores computed since the last call were obtained (e.g.
        fallbacks, tokens used); ``sourcesum run`` shows them after each split. Empty by
        default."""
        return {}

    # -- what a configuration is, from the class and its parameters ----------------------------
    @classmethod
    def base_configurations(cls, params: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The ``(ranker, canonical params)`` of every ranker whose scores this configuration is
        built from, in order (default: none). The runner computes them first, on the scored
        splits and the protocol's training splits, unless :attr:`bases_on_scored_splits` is False."""
        return []

    @classmethod
    def training_protocol(cls, params: Mapping[str, Any]) -> ProtocolSpec | None:
        """The protocol under which this configuration may read labels (default: None, it
        never does). See :mod:`sourcesum.runner.protocols`."""
        return None

    @classmethod
    def canonicalize(cls, params: dict[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
        """Final canonical form of a complete parameter set (``runtime``: the runtime
        parameters' values, e.g. ``device``, which may decide a value such as ``dtype=auto``);
        raise :class:`ParameterError` for combinations that are not allowed. Default: as is."""
        return params

    @classmethod
    def requirements(cls, params: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
        """What the configuration ``params`` (every parameter, runtime ones included, defaults
        filled in) needs installed, as :attr:`requires`; default: :attr:`requires`. Override
        where a parameter decides (a backend, a model)."""
        return cls.requires

    @classmethod
    def library_versions(cls) -> dict[str, str]:
        """Installed versions of Python, numpy, this package, the distribution that provides
        the ranker's class (a plugin's own package) and ``libraries``."""
        import platform

        from sourcesum.util.versions import installed_version

        owner = distribution_of(cls)
        names = ("sourcesum-bench", "numpy", *([owner] if owner else []), *cls.libraries)
        return {"python": platform.python_version(), **{name: installed_version(name) for name in names}}

    @classmethod
    def parameters(cls) -> dict[str, tuple[Param, Any]]:
        """``name -> (Param, default)`` for every ``__init__`` keyword argument (read from the
        signature once per class: labels and keys ask for it for every entry)."""
        if cls not in _PARAMETERS:
            _PARAMETERS[cls] = cls.read_parameters()
        return dict(_PARAMETERS[cls])

    @classmethod
    def read_parameters(cls) -> dict[str, tuple[Param, Any]]:
        """What :meth:`parameters` returns, read from ``__init__``'s signature (a subclass whose
        ``__init__`` takes ``**kwargs`` for common options overrides this)."""
        return signature_params(cls, cls.param_specs)

    @classmethod
    def default_of(cls, key: str) -> Any:
        """Parameter ``key``'s default in canonical form (coerced by its :class:`Param`, as a
        given value would be); ``inspect.Parameter.empty`` when it has none."""
        spec, default = cls.parameters()[key]
        if default is inspect.Parameter.empty:
            return default
        return spec.coerce(default, f"{cls.name}.{key}")

    @classmethod
    def canonical_params(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` (text or Python values) parsed, validated and canonicalised one by one;
        unknown names and bad values raise :class:`ParameterError` naming ``<ranker>.<param>``."""
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

    @classmethod
    def full_params(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """The complete canonical parameters of ``cls(**values)``, without instantiating it:
        every non-runtime parameter, defaults filled in, then :meth:`canonicalize`. Equals
        ``get_params()`` of the instance (a test checks every built-in)."""
        given = cls.canonical_params(values)
        out: dict[str, Any] = {}
        runtime: dict[str, Any] = {}
        for key, (_spec, default) in cls.parameters().items():
            if key in given:
                value = given[key]
            elif default is inspect.Parameter.empty:
                raise ParameterError(f"ranker {cls.name!r} needs parameter {key!r}")
            else:
                value = cls.default_of(key)
            (runtime if key in cls.runtime_params else out)[key] = value
        return cls.canonicalize(out, runtime)

    @classmethod
    def same_scores_when_complete(cls, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        """Whether complete entries of this ranker under parameters ``a`` and ``b`` score a
        split alike: every parameter equal (a missing one holds its default), except that an
        :attr:`~sourcesum.params.Param.unscorable_policy` parameter may differ where one side
        holds its default. That default stops on every pair the other value would apply to, so
        its complete entry met no such pair and holds the scores the other value gives."""
        specs = cls.parameters()
        for key in sorted(set(a) | set(b)):
            if key not in specs:
                return False
            default = cls.default_of(key)
            x, y = a.get(key, default), b.get(key, default)
            if x != y and not (specs[key][0].unscorable_policy and default in (x, y)):
                return False
        return True

    @classmethod
    def changed_params_of(
        cls, params: Mapping[str, Any], include_label_params: bool = True
    ) -> dict[str, Any]:
        """Parameters of ``params`` that differ from their defaults (plus ``label_params`` if
        asked)."""
        changed = {}
        for key, value in params.items():
            if (include_label_params and key in cls.label_params) or cls.default_of(key) != value:
                changed[key] = value
        return changed

    @classmethod
    def label_for(cls, params: Mapping[str, Any]) -> str:
        """``name`` plus non-default parameters, e.g. ``random(seed=1)``."""
        return cls._with_params(cls.changed_params_of(params))

    @classmethod
    def base_label_for(cls, params: Mapping[str, Any]) -> str:
        """As a base of another ranker: ``name`` plus non-default parameters, ``label_params``
        shown only when changed."""
        return cls._with_params(cls.changed_params_of(params, include_label_params=False))

    @classmethod
    def _with_params(cls, params: Mapping[str, Any]) -> str:
        """``name`` alone, or ``name(k=v, ...)`` with ``params`` sorted by name."""
        if not params:
            return cls.name
        return f"{cls.name}({', '.join(f'{k}={v}' for k, v in sorted(params.items()))})"

    # -- the instance's configuration -------------------------------------------------------
    def get_params(self) -> dict[str, Any]:
        """The canonical ``__init__`` keyword arguments (except ``runtime_params``), as set."""
        specs = self.parameters()
        current = {name: getattr(self, name) for name in specs if name not in self.runtime_params}
        runtime = {name: getattr(self, name) for name in specs if name in self.runtime_params}
        return self.canonicalize(self.canonical_params(current), runtime)

    @property
    def label(self) -> str:
        """:meth:`label_for` of this instance's parameters."""
        return self.label_for(self.get_params())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({json.dumps(self.get_params(), sort_keys=True, default=str)})"


_PARAMETERS: dict[type[Ranker], dict[str, tuple[Param, Any]]] = {}


@lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    from importlib.metadata import packages_distributions

    return dict(packages_distributions())


def distribution_of(cls: type) -> str | None:
    """The installed distribution whose top-level package defines ``cls`` (e.g. a plugin's
    ``sourcesum-overlap``), None for this package's own rankers and for classes defined outside
    an installed distribution (a script, a test)."""
    top = cls.__module__.split(".")[0]
    if top == "sourcesum":
        return None
    names = _distributions().get(top, [])
    return names[0] if len(names) == 1 else None


def stores_fit(ranker: Ranker | type[Ranker]) -> bool:
    """Whether the ranker stores what it fits in its entries (it overrides
    :meth:`Ranker.fitted_state`)."""
    cls = ranker if isinstance(ranker, type) else type(ranker)
    return cls.fitted_state is not Ranker.fitted_state


RANKERS: Registry[type[Ranker]] = Registry("ranker", Ranker, "sourcesum.rankers")
register = RANKERS.register


def create_ranker(name: str, **params: Any) -> Ranker:
    """Instantiate the ranker registered as ``name`` with ``params`` (text or Python values),
    parsed and validated first; any problem is a :class:`ParameterError` naming the ranker, a
    library it needs that is not installed a :class:`MissingDependencyError` naming the extra."""
    cls = RANKERS.get(name)
    values = cls.canonical_params(params)
    defaults = {key: cls.default_of(key) for key in cls.parameters()}
    given = {k: v for k, v in defaults.items() if v is not inspect.Parameter.empty} | values
    check_requirements(name, cls.requirements(given))
    try:
        ranker = cls(**values)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"ranker {name!r} rejected parameters {values}: {exc}") from exc
    ranker.get_params()  # validates the defaults a plugin left as they are
    return ranker
