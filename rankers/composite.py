"""Rankers built from other rankers' stored scores (``fusion``, ``learned``): base rankers as a
typed parameter, their scores read from (or computed into) the score store, per-pair
normalisations.

**Bases.** The parameter ``rankers`` names the base rankers: comma-separated names
(``"bm25,embedding"``) or a JSON list of names and ``{"ranker": NAME, "params": {...}}``
objects. It is canonicalised to a sorted list of ``{"ranker", "params"}`` with every parameter
of every base (defaults included), so equal configurations share one cache key. Reference
rankers (the oracle reads the votes), rankers built from other rankers, and the paper's
published outputs (not rankers) are refused: nothing that has seen the votes is ever a base.

**Store.** The runner hands every ranker its store before ``fit`` (:meth:`Ranker.use_store`,
kept as ``self.store``); each base's entry is then loaded from it, or computed into it under the base's own key, by
:func:`sourcesum.runner.run_ranker`. :meth:`CompositeRanker.key_version` appends to
``version`` a digest of every base's name and key version (and, for a trained ranker, of its
training data), so the composite entry's key changes whenever a base entry's key would.

**Normalisations** of one base's scores ``s_1..s_n`` on one pair (as in ranx's ``zmuv``,
``min-max`` and ``rank`` norms, ties made deterministic):

- ``zscore``: ``(s_i - mean(s)) / max(std(s), 1e-9)`` (population std);
- ``minmax``: ``(s_i - min(s)) / max(max(s) - min(s), 1e-9)``;
- ``rank``: ``1 - (r_i - 1) / n`` with ``r_i`` the tie-averaged rank of ``s_i`` (1 = highest),
  so the top sentence gets 1 and the last ``1/n``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sourcesum.data import Pair, Split, load_split
from sourcesum.errors import ParameterError, RankerError, SourceSumError
from sourcesum.params import JSON, Param
from sourcesum.rankers.base import Ranker, create_ranker
from sourcesum.store import ScoreEntry

NORMALIZATIONS = ("zscore", "minmax", "rank")
EPSILON = 1e-9


def normalize(scores: np.ndarray, how: str) -> np.ndarray:
    """One pair's scores (last axis = sentences) normalised as the module docstring says."""
    scores = np.asarray(scores, dtype=float)
    if how == "zscore":
        mean = scores.mean(axis=-1, keepdims=True)
        std = scores.std(axis=-1, keepdims=True)
        return (scores - mean) / np.maximum(std, EPSILON)
    if how == "minmax":
        low = scores.min(axis=-1, keepdims=True)
        high = scores.max(axis=-1, keepdims=True)
        return (scores - low) / np.maximum(high - low, EPSILON)
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
                base = create_ranker(name, **params)
            except SourceSumError as exc:
                raise ParameterError(f"parameter {where}: base {name!r}: {exc}") from exc
            if base.reference:
                raise ParameterError(
                    f"parameter {where}: {name} is a reference ranker (it reads the votes), never a base"
                )
            if isinstance(base, CompositeRanker):
                raise ParameterError(
                    f"parameter {where}: {name} is itself built from other rankers; name its bases directly"
                )
            out.append({"ranker": base.name, "params": base.get_params()})
        out.sort(key=lambda b: (b["ranker"], json.dumps(b["params"], sort_keys=True, default=str)))
        names = [json.dumps(b, sort_keys=True, default=str) for b in out]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ParameterError(f"parameter {where}: base {duplicates[0]} is named twice")
        return out


def base_label(base: Ranker) -> str:
    """A base's name plus its non-default parameters (``label_params`` shown only if changed)."""
    changed = base.changed_params(include_label_params=False)
    if not changed:
        return base.name
    return f"{base.name}({', '.join(f'{k}={v}' for k, v in sorted(changed.items()))})"


def digest(value: Any) -> str:
    """12 hex digits of sha256 over the canonical JSON of ``value``."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:12]


class CompositeRanker(Ranker):
    """Base class of rankers computed from the stored scores of base rankers."""

    label_params: ClassVar[tuple[str, ...]] = ("rankers",)

    rankers: list[dict[str, Any]]

    @property
    def bases(self) -> list[Ranker]:
        """The base rankers, instantiated from the canonical ``rankers`` parameter."""
        return [create_ranker(b["ranker"], **b["params"]) for b in self.rankers]

    @property
    def base_labels(self) -> list[str]:
        return [base_label(b) for b in self.bases]

    def key_inputs(self) -> list[Any]:
        """What, besides parameters and split, the scores depend on: every base's name and key
        version (its parameters are in ours). Trained rankers add their training data."""
        return [[b.name, b.key_version()] for b in self.bases]

    def key_version(self) -> str:
        return f"{self.version}+{digest(self.key_inputs())}"

    @property
    def label(self) -> str:
        changed = self.changed_params(include_label_params=True)
        changed["rankers"] = "+".join(self.base_labels)
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in sorted(changed.items()))})"

    def base_entries(self, split: Split) -> list[ScoreEntry]:
        """Every base's complete entry on ``split``: from the store, or computed into it."""
        from sourcesum.runner import run_ranker

        if self.store is None:
            raise RankerError(
                f"ranker {self.name} reads its bases' scores from a score store; run it through "
                "sourcesum.runner.run_ranker (or `sourcesum run`), which provides one"
            )
        return [run_ranker(base, split, self.store, progress=False) for base in self.bases]

    def base_scores(self, split_name: str) -> dict[str, np.ndarray]:
        """``pair id -> (n_bases, n_sentences)`` raw base scores on the split, memoised."""
        cache: dict[str, dict[str, np.ndarray]] = self.__dict__.setdefault("_base_scores", {})
        if split_name not in cache:
            entries = self.base_entries(load_split(split_name))
            cache[split_name] = {
                pair_id: np.array([entry.scores[pair_id] for entry in entries], dtype=float)
                for pair_id in entries[0].scores
            }
        return cache[split_name]

    def pair_scores(self, pair: Pair) -> np.ndarray:
        """``(n_bases, n_sentences)`` raw base scores of one pair."""
        scores = self.base_scores(pair.split).get(pair.id)
        if scores is None:
            raise RankerError(f"ranker {self.label}: no base scores for pair {pair.id} of split {pair.split}")
        return scores

    def fit(self, pairs: Sequence[Pair]) -> None:
        """Load (or compute) the bases' entries on the split of ``pairs``."""
        for name in sorted({pair.split for pair in pairs}):
            self.base_scores(name)
