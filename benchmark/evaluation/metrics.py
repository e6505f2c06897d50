"""Ranking metrics under tied scores: vectorized numpy kernels, batch forms, per-list functions.

Conventions (those of the paper, which used scikit-learn):

* Ranks are 1-based; sentences are ordered by descending score.
* **Ties.** nDCG, P@k, R@k and RR are *expectations* over all orderings of tied scores (for
  nDCG exactly ``sklearn.metrics.ndcg_score(..., ignore_ties=False)``). For a measure that sums a
  per-rank weight ``w_r`` times a per-item gain, this equals giving every item of a tie group
  spanning ranks ``s..e`` the mean weight ``(w_s + ... + w_e) / (e - s + 1)``. AP comes in two
  forms: the paper's (scikit-learn's *block* AP, below), which is **not** the expectation, and
  the exact expected AP (:func:`expected_average_precision_batch`).
* ``DCG@k = sum_i gain(rel_i) * avgw_i`` with ``w_r = 1 / log2(r + 1)`` for ``r <= k`` else 0.
  ``nDCG@k = DCG@k / IDCG@k``, the ideal DCG over *all* sentences of the pair (the ideal list is
  the relevance sorted descending, then truncated at ``k``). Undefined (NaN) when IDCG is 0.
  ``gain``: ``linear`` = rel, ``exponential`` = 2**rel - 1, ``binary`` = 1 if rel > 0 else 0.
* Block ``AP = (1/R) * sum_g pos_g * TP(g) / N(g)`` over tie groups ``g`` in rank order, where
  ``pos_g`` is the number of relevant items in ``g``, ``TP(g)``/``N(g)`` the relevant/all items
  ranked at or above the end of ``g``, and ``R`` the number of relevant items: a tie group enters
  at once, as in ``sklearn.metrics.average_precision_score``. It is never below the worst-first
  value but can lie above the expected and even the best-first value (e.g. two relevant items
  tied last among six: block 1/3, every ordering 4/15). Undefined (NaN) when ``R = 0``.
* ``P@k = E[#relevant in top k] / k``; ``R@k = E[#relevant in top k] / R``;
  ``RR = E[1 / rank of the first relevant item]`` over random orderings of ties;
  ``Spearman`` = Pearson correlation of tie-averaged (fractional) ranks of scores and relevance.

Batches are padded 2-D arrays with a boolean mask; per-list functions wrap the batch kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Literal

import numpy as np

Gain = Literal["linear", "exponential", "binary"]
TieBreak = Literal["groups", "worst", "best"]


def pad(rows: Sequence[Sequence[float] | np.ndarray], fill: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Stack ragged rows into a ``(B, L)`` float array padded with ``fill`` and a validity mask."""
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    width = int(lengths.max()) if len(rows) else 0
    mask = np.arange(width)[None, :] < lengths[:, None]
    values = np.full((len(rows), width), fill, dtype=float)
    if len(rows):
        values[mask] = np.fromiter(chain.from_iterable(rows), dtype=float, count=int(lengths.sum()))
    return values, mask


@dataclass(frozen=True)
class Ranking:
    """Sort order and tie groups of a batch of score lists (computed once, shared by measures).

    ``order[b]`` lists item indices by descending score (padding last); ``start``/``end`` give,
    for each *sorted* position, the first and last sorted position of its tie group.
    """

    order: np.ndarray
    start: np.ndarray
    end: np.ndarray
    sorted_mask: np.ndarray
    mask: np.ndarray

    @classmethod
    def from_scores(
        cls,
        scores: np.ndarray,
        mask: np.ndarray,
        tiebreak: TieBreak = "groups",
        relevance: np.ndarray | None = None,
    ) -> Ranking:
        """Rank padded ``scores`` (finite where ``mask``).

        ``tiebreak="groups"`` keeps tie groups (each kernel then applies its tie rule above);
        ``"worst"``/``"best"`` order each tie group by ascending/descending ``relevance`` and
        treat every item as its own group (pessimistic/optimistic bounds).
        """
        batch, width = scores.shape
        keyed = np.where(mask, -scores, np.inf)  # ascending sort of -score = descending score
        if tiebreak == "groups":
            order = np.argsort(keyed, axis=1, kind="stable")
        else:
            if relevance is None:
                raise ValueError("tiebreak 'worst'/'best' needs the relevance array")
            secondary = relevance if tiebreak == "worst" else -relevance
            order = np.lexsort((secondary, keyed), axis=-1)
        positions = np.broadcast_to(np.arange(width), (batch, width))
        sorted_mask = np.take_along_axis(mask, order, axis=1)
        if tiebreak == "groups" and width:
            sorted_key = np.take_along_axis(keyed, order, axis=1)
            new_group = np.ones((batch, width), dtype=bool)
            new_group[:, 1:] = sorted_key[:, 1:] != sorted_key[:, :-1]
            start = np.maximum.accumulate(np.where(new_group, positions, 0), axis=1)
            last = np.ones((batch, width), dtype=bool)
            last[:, :-1] = new_group[:, 1:]
            end_marks = np.where(last, positions, width)
            end = np.minimum.accumulate(end_marks[:, ::-1], axis=1)[:, ::-1]
        else:
            start = end = positions.copy()
        return cls(order, start, end, sorted_mask, mask)

    def sort(self, values: np.ndarray) -> np.ndarray:
        """``values`` (original item order) rearranged into ranked order, padding zeroed."""
        return np.where(self.sorted_mask, np.take_along_axis(values, self.order, axis=1), 0.0)

    def mean_weight(self, weights: np.ndarray) -> np.ndarray:
        """Per sorted position, the mean of ``weights[r]`` over the ranks ``r`` of its tie group."""
        cumulative = np.concatenate([[0.0], np.cumsum(weights)])
        result: np.ndarray = (cumulative[self.end + 1] - cumulative[self.start]) / (self.end - self.start + 1)
        return result

    def fractional_ranks(self) -> np.ndarray:
        """1-based tie-averaged ranks per item, in original item order (NaN for padding)."""
        sorted_ranks = (self.start + self.end) / 2.0 + 1.0
        ranks = np.empty_like(sorted_ranks)
        np.put_along_axis(ranks, self.order, sorted_ranks, axis=1)
        return np.where(self.mask, ranks, np.nan)


def apply_gain(relevance: np.ndarray, gain: Gain) -> np.ndarray:
    """Gain of each relevance value: linear ``rel``, exponential ``2**rel - 1``, binary ``rel > 0``."""
    if gain == "linear":
        return relevance
    if gain == "exponential":
        result: np.ndarray = np.exp2(relevance) - 1.0
        return result
    if gain == "binary":
        return (relevance > 0).astype(float)
    raise ValueError(f"unknown gain {gain!r}; use 'linear', 'exponential' or 'binary'")


def dcg_weights(width: int, k: int | None) -> np.ndarray:
    """``w_r = 1 / log2(r + 1)`` for ranks ``r = 1..width``, zero past ``k``."""
    weights = 1.0 / np.log2(np.arange(width) + 2.0)
    if k is not None:
        weights[k:] = 0.0
    result: np.ndarray = weights
    return result


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` with NaN where the denominator is 0 (metric undefined)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def ndcg_batch(
    ranking: Ranking, relevance: np.ndarray, k: int | None = None, gain: Gain = "linear"
) -> np.ndarray:
    """Tie-averaged nDCG@k per row (NaN where the ideal DCG is 0). See the module docstring."""
    gains = apply_gain(np.where(ranking.mask, relevance, 0.0), gain)
    weights = dcg_weights(gains.shape[1], k)
    dcg = (ranking.sort(gains) * ranking.mean_weight(weights)).sum(axis=1)
    ideal = (-np.sort(-gains, axis=1) * weights).sum(axis=1)
    return _safe_divide(dcg, ideal)


def average_precision_batch(ranking: Ranking, relevance: np.ndarray) -> np.ndarray:
    """AP per row for binary ``relevance`` with tie groups entering at once (NaN if none relevant)."""
    rel_sorted = ranking.sort(relevance)
    hits = np.cumsum(rel_sorted, axis=1)
    hits_at_group_end = np.take_along_axis(hits, ranking.end, axis=1)
    precision = hits_at_group_end / (ranking.end + 1.0)
    return _safe_divide((rel_sorted * precision).sum(axis=1), rel_sorted.sum(axis=1))


def expected_average_precision_batch(ranking: Ranking, relevance: np.ndarray) -> np.ndarray:
    """Expected AP per row under uniform random orderings of tied scores (NaN if none relevant).

    For a tie group at 1-based ranks ``s + 1 .. s + c`` holding ``m`` relevant items, with ``H``
    relevant items ranked above it, the item at rank ``s + t`` is relevant with probability
    ``m / c`` and, given that, is preceded within the group by ``(t - 1)(m - 1) / (c - 1)``
    relevant items on average (hypergeometric), so precision being linear in the hit count,
    ``E[AP] = (1/R) * sum_g sum_{t=1..c} (m/c) * (H + 1 + (t-1)(m-1)/(c-1)) / (s + t)``.
    Without ties this is ordinary AP.
    """
    rel_sorted = ranking.sort(relevance)
    hits = np.cumsum(rel_sorted, axis=1)
    above = np.take_along_axis(hits - rel_sorted, ranking.start, axis=1)  # H
    in_group = np.take_along_axis(hits, ranking.end, axis=1) - above  # m
    size = ranking.end - ranking.start + 1  # c
    positions = np.arange(relevance.shape[1])[None, :]
    earlier = positions - ranking.start  # t - 1
    preceding = earlier * (in_group - 1) / np.maximum(size - 1, 1)  # 0 when c = 1
    precision = (in_group / size) * (above + 1 + preceding) / (positions + 1)
    total = np.where(ranking.sorted_mask, precision, 0.0).sum(axis=1)
    return _safe_divide(total, rel_sorted.sum(axis=1))


def _expected_hits_at_k(ranking: Ranking, relevance: np.ndarray, k: int) -> np.ndarray:
    weights = (np.arange(relevance.shape[1]) < k).astype(float)
    result: np.ndarray = (ranking.sort(relevance) * ranking.mean_weight(weights)).sum(axis=1)
    return result


def precision_at_k_batch(ranking: Ranking, relevance: np.ndarray, k: int) -> np.ndarray:
    """Tie-averaged P@k = E[#relevant in the top k] / k (k fixed even for shorter lists)."""
    return _expected_hits_at_k(ranking, relevance, k) / k


def recall_at_k_batch(ranking: Ranking, relevance: np.ndarray, k: int) -> np.ndarray:
    """Tie-averaged R@k = E[#relevant in the top k] / #relevant (NaN if none relevant)."""
    return _safe_divide(_expected_hits_at_k(ranking, relevance, k), relevance.sum(axis=1))


def reciprocal_rank_batch(ranking: Ranking, relevance: np.ndarray) -> np.ndarray:
    """E[1 / rank of the first relevant item] over random orderings of ties (NaN if none).

    If the first tie group holding relevant items starts at rank ``s + 1`` and has ``c`` items of
    which ``m`` are relevant, the number ``x`` of irrelevant items drawn before the first relevant
    one has ``P(x) = C(c - 1 - x, m - 1) / C(c, m)``; RR = ``sum_x P(x) / (s + 1 + x)``.
    """
    rel_sorted = ranking.sort(relevance) > 0
    has_rel = rel_sorted.any(axis=1)
    first = np.argmax(rel_sorted, axis=1)
    rows = np.arange(len(first))
    s = ranking.start[rows, first]
    e = ranking.end[rows, first]
    c = e - s + 1
    group = (np.arange(rel_sorted.shape[1])[None, :] >= s[:, None]) & (
        np.arange(rel_sorted.shape[1])[None, :] <= e[:, None]
    )
    m = (rel_sorted & group).sum(axis=1)
    x = np.arange(rel_sorted.shape[1])[None, :]
    from scipy.special import comb  # imported on use: scipy.special costs ~0.2 s to import

    prob = comb(c[:, None] - 1 - x, m[:, None] - 1) / comb(c, m)[:, None]
    expected = (prob / (s[:, None] + 1.0 + x)).sum(axis=1)
    return np.where(has_rel, expected, np.nan)


def spearman_batch(ranking: Ranking, relevance: np.ndarray) -> np.ndarray:
    """Spearman correlation of scores with relevance per row (NaN if either is constant)."""
    mask = ranking.mask
    score_ranks = ranking.fractional_ranks()
    # Rank relevance descending too, so both rank vectors share orientation.
    rel_ranks = Ranking.from_scores(np.where(mask, relevance, 0.0), mask).fractional_ranks()
    n = mask.sum(axis=1)
    a = np.where(mask, score_ranks - np.nanmean(score_ranks, axis=1, keepdims=True), 0.0)
    b = np.where(mask, rel_ranks - np.nanmean(rel_ranks, axis=1, keepdims=True), 0.0)
    cov = (a * b).sum(axis=1)
    norm = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    return np.where(n > 1, _safe_divide(cov, norm), np.nan)


def _single(relevance: Sequence[float], scores: Sequence[float]) -> tuple[Ranking, np.ndarray]:
    """Validate one list and wrap it as a batch of one."""
    rel = np.asarray(relevance, dtype=float).reshape(-1)
    sc = np.asarray(scores, dtype=float).reshape(-1)
    if rel.shape != sc.shape:
        raise ValueError(f"relevance has {rel.size} items but scores has {sc.size}")
    if rel.size == 0:
        raise ValueError("empty list")
    if not np.all(np.isfinite(sc)):
        raise ValueError("scores must be finite")
    if np.any(rel < 0) or not np.all(np.isfinite(rel)):
        raise ValueError("relevance must be finite and non-negative")
    mask = np.ones((1, rel.size), dtype=bool)
    return Ranking.from_scores(sc[None, :], mask), rel[None, :]


def _validate_k(k: int | None) -> None:
    if k is not None and k < 1:
        raise ValueError(f"k must be a positive integer, got {k}")


def ndcg(
    relevance: Sequence[float], scores: Sequence[float], k: int | None = None, gain: Gain = "linear"
) -> float:
    """Tie-averaged nDCG@k of one list (``k=None``: the full list). NaN if no item is relevant.

    ``DCG@k = sum_i gain(rel_i) * mean_{r in ties(i)} [r <= k] / log2(r + 1)``;
    ``nDCG@k = DCG@k / IDCG@k`` with the ideal computed over all items, truncated at ``k``.
    """
    _validate_k(k)
    ranking, rel = _single(relevance, scores)
    return float(ndcg_batch(ranking, rel, k=k, gain=gain)[0])


def average_precision(relevance: Sequence[float], scores: Sequence[float]) -> float:
    """AP of one list with binary ``relevance`` (0/1); tie groups enter at once. NaN if R = 0.

    ``AP = (1/R) * sum_g pos_g * TP(g) / N(g)`` over tie groups in rank order.
    """
    ranking, rel = _single(relevance, scores)
    if not np.all((rel == 0) | (rel == 1)):
        raise ValueError("average_precision needs binary relevance (0 or 1)")
    return float(average_precision_batch(ranking, rel)[0])


def expected_average_precision(relevance: Sequence[float], scores: Sequence[float]) -> float:
    """Expected AP of one list with binary ``relevance`` over uniform random orderings of ties.

    See :func:`expected_average_precision_batch` for the closed form. NaN if R = 0.
    """
    ranking, rel = _single(relevance, scores)
    if not np.all((rel == 0) | (rel == 1)):
        raise ValueError("expected_average_precision needs binary relevance (0 or 1)")
    return float(expected_average_precision_batch(ranking, rel)[0])


def precision_at_k(relevance: Sequence[float], scores: Sequence[float], k: int) -> float:
    """Tie-averaged P@k of one list with binary relevance."""
    _validate_k(k)
    ranking, rel = _single(relevance, scores)
    return float(precision_at_k_batch(ranking, rel, k)[0])


def recall_at_k(relevance: Sequence[float], scores: Sequence[float], k: int) -> float:
    """Tie-averaged R@k of one list with binary relevance (NaN if nothing is relevant)."""
    _validate_k(k)
    ranking, rel = _single(relevance, scores)
    return float(recall_at_k_batch(ranking, rel, k)[0])


def reciprocal_rank(relevance: Sequence[float], scores: Sequence[float]) -> float:
    """Tie-averaged reciprocal rank of the first relevant item of one list (NaN if none)."""
    ranking, rel = _single(relevance, scores)
    return float(reciprocal_rank_batch(ranking, rel)[0])


def spearman(relevance: Sequence[float], scores: Sequence[float]) -> float:
    """Spearman's rho between scores and relevance of one list (NaN if either is constant)."""
    ranking, rel = _single(relevance, scores)
    return float(spearman_batch(ranking, rel)[0])
