"""Rankers built from other rankers' stored scores (``fusion``, ``learned``): base rankers as a
typed parameter, their scores handed in by the harness, per-pair normalisations.

**Bases.** The parameter ``rankers`` names the base rankers: comma-separated names
(``"bm25,embedding"``) or a JSON list of names and ``{"ranker": NAME, "params": {...}}``
objects. It is canonicalised to a sorted list of ``{"ranker", "params"}`` with every parameter
of every base (defaults included; from the base's class, never an instance), so equal
configurations share one cache key. Reference rankers (the oracle reads the votes), rankers
built from other rankers, and the paper's published outputs (not rankers) are refused: nothing
that has seen the votes is ever a base.

**Scores.** A composite declares its bases (:meth:`CompositeRanker.base_configurations`); the
runner computes or reads every base's entries under the base's own key and calls
:meth:`CompositeRanker.use_bases` before scoring, so a composite never touches a store. The
entry key of a composite follows its bases: the harness's key version
(:class:`sourcesum.runner.configs.Configuration`) appends to ``version`` a digest of every base's
name and key version (and, for a trained ranker, of its training data).

**Normalisations** of one base's scores ``s_1..s_n`` on one pair (as in ranx's ``zmuv``,
``min-max`` and ``rank`` norms, ties made deterministic):

- ``zscore``: ``(s_i - mean(s)) / max(std(s), 1e-9)`` (population std);
- ``minmax``: ``(s_i - min(s)) / max(max(s) - min(s), 1e-9)``;
- ``rank``: ``1 - (r_i - 1) / n`` with ``r_i`` the tie-averaged rank of ``s_i`` (1 = highest),
  so the top sentence gets 1 and the last ``1/n``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from sourcesum.data.pairs import Pair
from sourcesum.errors import ParameterError, RankerError, SourceSumError
from sourcesum.params import JSON, Param
from sourcesum.rankers.base import RANKERS, Ranker
from sourcesum.rankers.context import BaseScores

NORMALIZATIONS = ("zscore", "minmax", "rank")
EPSILON = 1e-9


def normalize(scores: np.ndarray, how: str) -> np.ndarray:
    """One pair's scores (last axis = sentences) normalised as the module docstring says."""
    scores = np.asarray(scores, dtype=float)
    if how == "zscore":
        mean = scores.mean(axis=-1, keepdims=True)
        std = scores.std(axis=-1, keepdims=True)
        return np.asarray((scores - mean) / np.maximum(std, EPSILON))
    if how == "minmax":
        low = scores.min(axis=-1, keepdims=True)
        high = scores.max(axis=-1, keepdims=True)
        return np.asarray((scores - low) / np.maximum(high - low, EPSILON))
    if how == "rank":
        n = scores.shape[-1]
        from scipy.stats import rankdata  # on use: scipy.stats takes ~0.5 s to import

        ranks = rankdata(-scores, method="average", axis=-1)
        return np.asarray(1.0 - (ranks - 1.0) / n)
    raise ParameterError(f"normalization {how!r}: expected one of {', '.join(NORMALIZATIONS)}")


class BaseRankers(Param):
    """The ``rankers`` parameter: base rankers, canonicalised (see the module docstring)."""

    def __init__(self, doc: str = "base rankers (canonicalised: sorted, with every parameter)"):
        super().__init__(type=JSON, doc=doc)

    @property
    def accepts(self) -> str:
        return "comma-separated ranker names, or a JSON list of names and {ranker, params} objects"

    def coerce(self, value: Any, where: str) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                try:
                    value = json.loads(text)
                except ValueError as exc:
                    raise ParameterError(f"parameter {where}={value}: not valid JSON ({exc})") from None
            else:
                value = [part.strip() for part in text.split(",") if part.strip()]
        if not isinstance(value, (list, tuple)) or not value:
            raise ParameterError(f"parameter {where}={value!r}: expected {self.accepts} (at least one)")
        out = []
        for item in value:
            params: Any
            if isinstance(item, str):
                name, params = item, {}
            elif (
                isinstance(item, dict)
                and isinstance(item.get("ranker"), str)
                and set(item) <= {"ranker", "params"}
            ):
                name, params = item["ranker"], item.get("params") or {}
            else:
                raise ParameterError(
                    f"parameter {where}: base {item!r} is not a name or a {{ranker, params}} object"
                )
            if name.startswith("published:"):
                raise ParameterError(
                    f"parameter {where}: {name} is a published output, never a base ranker "
                    "(published outputs are not features of rankers on the board)"
                )
            try:
                cls = RANKERS.get(name)
                if not isinstance(params, dict):
                    raise ParameterError(f"params {params!r} is not an object")
                canonical = cls.full_params(params)
            except SourceSumError as exc:
                raise ParameterError(f"parameter {where}: base {name!r}: {exc}") from exc
            if cls.reference or cls.training_protocol(canonical) is not None:
                raise ParameterError(
                    f"parameter {where}: {name} is a reference ranker (it reads the votes), never a base"
                    if cls.reference
                    else f"parameter {where}: {name} is trained on the votes, never a base"
                )
            if cls.base_configurations(canonical):
                raise ParameterError(
                    f"parameter {where}: {name} is itself built from other rankers; name its bases directly"
                )
            out.append({"ranker": cls.name, "params": canonical})
        out.sort(key=lambda b: (b["ranker"], json.dumps(b["params"], sort_keys=True, default=str)))
        names = [json.dumps(b, sort_keys=True, default=str) for b in out]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ParameterError(f"parameter {where}: base {duplicates[0]} is named twice")
        return out


class CompositeRanker(Ranker):
    """Base class of rankers computed from the stored scores of base rankers (the ``rankers``
    parameter)."""

    label_params: ClassVar[tuple[str, ...]] = ("rankers",)

    rankers: list[dict[str, Any]]
    _base_scores: BaseScores | None = None

    @classmethod
    def base_configurations(cls, params: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        return [(b["ranker"], dict(b["params"])) for b in params["rankers"]]

    @classmethod
    def base_labels_for(cls, params: Mapping[str, Any]) -> list[str]:
        return [RANKERS.get(name).base_label_for(p) for name, p in cls.base_configurations(params)]

    @classmethod
    def label_for(cls, params: Mapping[str, Any]) -> str:
        changed = cls.changed_params_of(params, include_label_params=True)
        changed["rankers"] = "+".join(cls.base_labels_for(params))
        return cls._with_params(changed)

    @property
    def base_labels(self) -> list[str]:
        return self.base_labels_for(self.get_params())

    def use_bases(self, scores: BaseScores) -> None:
        """Called by the runner before scoring with every base's raw scores."""
        self._base_scores = scores

    def pair_scores(self, pair: Pair) -> np.ndarray:
        """``(n_bases, n_sentences)`` raw base scores of one pair."""
        if self._base_scores is None:
            raise RankerError(
                f"ranker {self.name} is built from its bases' scores, which the runner hands in "
                "(sourcesum.runner.run.run_splits, or `sourcesum run`); it was called without them"
            )
        try:
            return self._base_scores.for_pair(pair)
        except RankerError as exc:
            raise RankerError(f"ranker {self.label}: {exc}") from None
