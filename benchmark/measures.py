"""Measures as small declarative objects with canonical names (``nDCG``, ``nDCG@10``, ``AP``...).

A :class:`Measure` knows which relevance it reads (graded votes or binary ``>= 2`` votes) and
which batch kernel of :mod:`sourcesum.metrics` computes it. :func:`parse_measure` turns a
canonical name back into a measure, so CLIs and configs can name measures as strings.

Ties: ``nDCG``, ``P@k``, ``R@k`` and ``RR`` are expectations over uniform random orderings of
tied scores. ``AP`` is scikit-learn's ``average_precision_score`` (a tie block enters at once,
every relevant item of the block getting the precision at the block's end), the paper's
measure and not an expectation; ``AP(ties=expected)`` is the exact expected AP over random
orderings of ties. ``Spearman`` uses tie-averaged (fractional) ranks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from sourcesum import metrics
from sourcesum.errors import UnknownNameError
from sourcesum.metrics import Gain, Ranking
from sourcesum.qrels import Relevance

Ties = Literal["block", "expected"]


@dataclass(frozen=True)
class Measure:
    """One measure: ``family`` (nDCG, AP, P, R, RR, Spearman), optional cutoff ``k``, gain (nDCG)
    and tie rule (AP: ``block`` = scikit-learn's, ``expected`` = expectation over tie orderings)."""

    family: str
    k: int | None = None
    gain: Gain = "linear"
    ties: Ties = "block"

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``nDCG@10``, ``nDCG(gain=exponential)``, ``AP(ties=expected)``."""
        text = self.family if self.k is None else f"{self.family}@{self.k}"
        if self.gain != "linear":
            return f"{text}(gain={self.gain})"
        return text if self.ties == "block" else f"{text}(ties={self.ties})"

    @property
    def expectation(self) -> Measure | None:
        """The measure whose value is the expectation of this one over uniform random orderings
        of tied scores: ``AP`` -> ``AP(ties=expected)``; nDCG, P, R, RR are their own; Spearman
        (fractional ranks) has none here."""
        if self.family == "AP":
            return Measure("AP", ties="expected")
        return None if self.family == "Spearman" else self

    def __str__(self) -> str:
        return self.name

    @property
    def relevance(self) -> Relevance:
        """nDCG and Spearman read graded relevance; the others read binary relevance."""
        return "graded" if self.family in ("nDCG", "Spearman") else "binary"

    def compute(self, ranking: Ranking, relevance: np.ndarray) -> np.ndarray:
        """Per-row values for a ranked batch and the matching (padded) relevance array."""
        return _KERNELS[self.family](self, ranking, relevance)


_KERNELS: dict[str, Callable[[Measure, Ranking, np.ndarray], np.ndarray]] = {
    "nDCG": lambda m, r, rel: metrics.ndcg_batch(r, rel, k=m.k, gain=m.gain),
    "AP": lambda m, r, rel: (
        metrics.expected_average_precision_batch(r, rel)
        if m.ties == "expected"
        else metrics.average_precision_batch(r, rel)
    ),
    "P": lambda m, r, rel: metrics.precision_at_k_batch(r, rel, _need_k(m)),
    "R": lambda m, r, rel: metrics.recall_at_k_batch(r, rel, _need_k(m)),
    "RR": lambda m, r, rel: metrics.reciprocal_rank_batch(r, rel),
    "Spearman": lambda m, r, rel: metrics.spearman_batch(r, rel),
}
_FAMILIES_WITH_K = {"nDCG", "P", "R"}


def _need_k(measure: Measure) -> int:
    if measure.k is None:
        raise UnknownNameError(f"{measure.family} needs a cutoff, e.g. {measure.family}@3")
    return measure.k


NDCG = Measure("nDCG")
AP = Measure("AP")
EXPECTED_AP = Measure("AP", ties="expected")
DEFAULT_MEASURES: tuple[Measure, ...] = (NDCG, AP)
"""The paper's two measures; the harness reports ``nDCG`` as "ndcg" and ``AP`` (mean) as "map"."""

_NAME = re.compile(r"^(?P<family>[A-Za-z]+)(@(?P<k>\d+))?(\((?P<option>gain|ties)=(?P<value>\w+)\))?$")


def parse_measure(text: str) -> Measure:
    """Parse a canonical name (``nDCG@5``, ``AP``, ``P@3``, ``nDCG(gain=exponential)``,
    ``AP(ties=expected)``...)."""
    match = _NAME.match(text.strip())
    families = {f.lower(): f for f in _KERNELS}
    family = families.get(match.group("family").lower()) if match else None
    if match is None or family is None:
        raise UnknownNameError(
            f"unknown measure {text!r}; use one of nDCG[@k], AP, AP(ties=expected), P@k, R@k, RR, Spearman"
        )
    k = int(match.group("k")) if match.group("k") else None
    if k is not None and (family not in _FAMILIES_WITH_K or k < 1):
        raise UnknownNameError(f"measure {text!r}: a cutoff applies to nDCG, P and R only, k >= 1")
    option, value = match.group("option"), match.group("value")
    gain = value if option == "gain" else "linear"
    ties = value if option == "ties" else "block"
    if gain not in ("linear", "exponential", "binary") or (gain != "linear" and family != "nDCG"):
        raise UnknownNameError(f"measure {text!r}: gain applies to nDCG only (linear, exponential, binary)")
    if ties not in ("block", "expected") or (ties != "block" and family != "AP"):
        raise UnknownNameError(
            f"measure {text!r}: ties applies to AP only (block = scikit-learn's, expected)"
        )
    measure = Measure(family, k, gain, ties)  # type: ignore[arg-type]
    if family in ("P", "R"):
        _need_k(measure)
    return measure


def parse_measures(spec: str) -> tuple[Measure, ...]:
    """Parse a comma-separated list of measure names."""
    return tuple(parse_measure(part) for part in spec.split(",") if part.strip())
