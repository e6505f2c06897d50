"""Unsupervised rank fusion of base rankers' stored scores (definitions as in ranx's fusion
module: Fox & Shaw 1993 for CombSUM / CombMNZ, Cormack et al. 2009 for RRF).

For a pair with sentences ``i = 1..n`` and bases ``j = 1..m`` with raw scores ``s_j(i)`` and
per-pair normalised scores ``t_j(i)`` (see :mod:`sourcesum.rankers.composite`):

- ``combsum``: ``F(i) = sum_j t_j(i)``;
- ``combmnz``: ``F(i) = h(i) * sum_j t_j(i)``, ``h(i) = |{j : s_j(i) > min_k s_j(k)}|``, the
  number of bases that "retrieve" sentence ``i``. ranx counts the runs in which a document
  appears; every base scores every sentence here, so that count would be the constant ``m``
  (CombMNZ = m * CombSUM); a base is taken to retrieve every sentence except those it scores
  at its minimum (e.g. no word overlap for ``bm25``). Needs a non-negative normalisation
  (``minmax`` or ``rank``): a negative sum times a larger count would rank it lower.
- ``rrf``: ``F(i) = sum_j 1 / (k + r_j(i))``, ``r_j(i)`` the tie-averaged rank (1 = highest) of
  ``s_j(i)`` among the pair's sentences; uses ranks only, so ``normalization`` does not apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sourcesum.data.pairs import Pair
from sourcesum.errors import ParameterError
from sourcesum.params import Param
from sourcesum.rankers.base import register
from sourcesum.rankers.composite import NORMALIZATIONS, BaseRankers, CompositeRanker, normalize

METHODS = ("combsum", "combmnz", "rrf")
DEFAULT_RRF_K = 60
DEFAULT_NORMALIZATION = "zscore"


def fuse(
    scores: np.ndarray, method: str, normalization: str = DEFAULT_NORMALIZATION, k: int = DEFAULT_RRF_K
) -> np.ndarray:
    """Fused scores of one pair from its ``(m bases, n sentences)`` raw scores (module docstring)."""
    scores = np.asarray(scores, dtype=float)
    if method == "rrf":
        from scipy.stats import rankdata  # on use: scipy.stats takes ~0.5 s to import

        ranks = rankdata(-scores, method="average", axis=-1)
        return np.asarray((1.0 / (k + ranks)).sum(axis=0))
    normalized = normalize(scores, normalization)
    total = normalized.sum(axis=0)
    if method == "combsum":
        return np.asarray(total)
    if method == "combmnz":
        hits = (scores > scores.min(axis=-1, keepdims=True)).sum(axis=0)
        return np.asarray(hits * total)
    raise ParameterError(f"fusion method {method!r}: expected one of {', '.join(METHODS)}")


@register
class FusionRanker(CompositeRanker):
    """Unsupervised fusion of base rankers' stored scores: CombSUM, CombMNZ or reciprocal rank fusion."""

    name = "fusion"
    version = "1"
    label_params = ("rankers", "method")
    board_note = (
        "unsupervised fusion of the stored scores of the base rankers in its label, pair by pair "
        "(`combsum`: sum of per-pair z-scores unless the label names another normalisation; "
        "`combmnz`: that sum times the number of bases that score the sentence above their minimum; "
        "`rrf`: sum of 1 / (k + rank)); no vote is read."
    )
    param_specs = {
        "rankers": BaseRankers(),
        "method": Param(
            str,
            "combsum, combmnz (sum times the number of bases that retrieve the sentence) "
            "or rrf (reciprocal rank fusion)",
            choices=METHODS,
        ),
        "normalization": Param(
            str, "per-pair normalisation of each base's scores (combsum, combmnz)", choices=NORMALIZATIONS
        ),
        "k": Param(int, "RRF constant in 1 / (k + rank)", min=0),
    }

    def __init__(
        self,
        rankers: str | list[Any] = "bm25,embedding",
        method: str = "combsum",
        normalization: str = DEFAULT_NORMALIZATION,
        k: int = DEFAULT_RRF_K,
    ):
        self.rankers = self.param_specs["rankers"].coerce(rankers, f"{self.name}.rankers")
        self.method, self.normalization, self.k = method, normalization, k
        self.canonicalize({"method": method, "normalization": normalization, "k": k}, {})

    @classmethod
    def canonicalize(cls, params: dict[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
        """Refuses options that do not apply to the method."""
        method, normalization, k = params["method"], params["normalization"], params["k"]
        if method == "rrf" and normalization != DEFAULT_NORMALIZATION:
            raise ParameterError(
                f"{cls.name}.normalization={normalization}: rrf uses ranks only; leave "
                "normalization at its default"
            )
        if method != "rrf" and k != DEFAULT_RRF_K:
            raise ParameterError(f"{cls.name}.k={k}: k applies to method=rrf only")
        if method == "combmnz" and normalization == "zscore":
            raise ParameterError(
                f"{cls.name}.method=combmnz needs a non-negative normalization (minmax or rank)"
            )
        return params

    def score(self, pair: Pair) -> Sequence[float]:
        scores: list[float] = fuse(self.pair_scores(pair), self.method, self.normalization, self.k).tolist()
        return scores
