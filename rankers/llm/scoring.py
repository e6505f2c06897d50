"""Expected rating from next-token distributions, and the counted fallbacks.

The score of a sentence is ``E[r] = sum_r P(r) r / sum_r P(r)`` over the valid ratings ``r`` of
the scale, where ``P(r)`` is the probability that the model's answer *reads* as ``r`` under the
reading rule of :mod:`sourcesum.rankers.llm.scale`. It is computed by expanding the tree of
answer prefixes (digit by digit: each node is a text read so far; its children come from the
next-token distribution at that node):

- a token that ends the reading adds its probability to the rating read so far (or to the
  *invalid* mass when that text is not a rating: prose, out-of-scale numbers);
- a token that leaves the reading open opens a child node, whose own next-token distribution is
  asked for (nodes below ``min_prob`` are not expanded; their mass is counted as *pruned* and
  left out, so the error is at most ``pruned / valid`` times the scale's width).

Which distributions are available decides how exact ``E[r]`` is:

- local models give every node's full distribution: exact (up to ``min_prob`` pruning);
- a server returns ``top_logprobs`` only along its own (greedy) answer. The root is exact up
  to the tail beyond the returned candidates (left out); deeper nodes off the greedy path get
  the greedy path's distribution at the same depth (*approximate* mass, counted), and nodes
  deeper than the answer stop there (counted as *unresolved*).

On a *single-token* scale (every rating one character, e.g. ``0-9``) only the root is needed, so
both backends compute the same quantity, exactly. When no valid rating has any probability (or
the server returned no logprobs), the greedy answer's text is parsed instead (counted as a
*greedy fallback*); when that fails too, the sentence gets the scale's LO (counted as *unrated*),
unless no sentence of its pair is rated: that pair is an error (all-LO scores would be stored as
if they were ratings).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sourcesum.rankers.llm.scale import Scale

Candidate = tuple[str, float, Hashable]
"""A next token: its text, its probability, and a backend handle (token id, or the text)."""


@dataclass
class Dist:
    """A node's next-token distribution: ``candidates`` (tokens that may continue the reading,
    or any returned tokens), ``stop`` (probability of every other token: the reading ends here)
    and whether it is the node's own distribution (``exact``) or a stand-in."""

    candidates: Sequence[Candidate]
    stop: float = 0.0
    exact: bool = True


Oracle = Callable[[Sequence[tuple[int, tuple[Hashable, ...]]]], Sequence[Dist | None]]
"""Distributions for a batch of ``(prompt index, token-handle path)`` nodes (None: unknown)."""


@dataclass
class Rating:
    """The rating distribution of one prompt and what it took to get it."""

    ratings: dict[str, float] = field(default_factory=dict)
    """Valid rating text -> probability."""
    invalid: float = 0.0
    pruned: float = 0.0
    approximate: float = 0.0
    """Mass that went through a stand-in distribution (servers, multi-token scales)."""
    unresolved: float = 0.0
    nodes: int = 0

    @property
    def valid(self) -> float:
        return sum(self.ratings.values())

    def expected(self, scale: Scale) -> float | None:
        """``E[r]`` over the valid ratings, or None when they have no probability."""
        total = self.valid
        if total <= 0.0:
            return None
        return sum(p * scale.ratings[r] for r, p in self.ratings.items()) / total


def rating_distributions(
    scale: Scale, n_prompts: int, oracle: Oracle, min_prob: float = 1e-4
) -> list[Rating]:
    """Expand every prompt's answer tree breadth-first, one oracle call per depth."""
    results = [Rating() for _ in range(n_prompts)]
    frontier: list[tuple[int, tuple[Hashable, ...], str, float]] = [
        (i, (), "", 1.0) for i in range(n_prompts)
    ]
    while frontier:
        dists = oracle([(i, path) for i, path, _, _ in frontier])
        following = []
        for (i, path, text, mass), dist in zip(frontier, dists, strict=True):
            result = results[i]
            result.nodes += 1
            if dist is None:  # nothing known below this node: the reading stops here
                result.unresolved += mass
                _add_leaf(result, scale, text, mass)
                continue
            if not dist.exact:
                result.approximate += mass
            if dist.stop > 0:
                _add_leaf(result, scale, text, mass * dist.stop)
            for token, prob, handle in dist.candidates:
                if prob <= 0.0:
                    continue
                read, stopped = scale.extend(text, token, first=not path)
                share = mass * prob
                if stopped:
                    _add_leaf(result, scale, read, share)
                elif share < min_prob:
                    result.pruned += share
                else:
                    following.append((i, path + (handle,), read, share))
        frontier = following
    return results


def _add_leaf(result: Rating, scale: Scale, text: str, mass: float) -> None:
    if scale.value(text) is None:
        result.invalid += mass
    else:
        result.ratings[text] = result.ratings.get(text, 0.0) + mass


class Diagnostics:
    """Counters of one run (reset per split): how every score was obtained.

    ``sentences``; ``distributions`` (sentences with a rating distribution); ``expected``
    (scored by ``E[r]``), ``greedy_fallback``, ``unrated``;
    ``approximate_sentences`` (some mass through stand-in distributions); the summed ``valid``,
    ``pruned`` and ``approximate`` masses (their means are reported); listwise ``pairs``,
    ``parsed_full``, ``parsed_partial``, ``listwise_fallback``, ``unranked_sentences``; server
    ``requests``, ``cache_hits``, ``cache_invalid_refetched`` (cached responses that failed
    the response check, requested again), ``retries_<cause>`` (``429``, ``5xx``, ``timeout``,
    ``connection``, ``malformed``, ``invalid``), ``prompt_tokens``, ``completion_tokens`` and
    ``cost``.
    """

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.sums: dict[str, float] = cast("dict[str, float]", Counter())  # a Counter of float sums

    def reset(self) -> None:
        self.counts.clear()
        self.sums.clear()

    def score(self, scale: Scale, rating: Rating | None, answer: str | None) -> float:
        """One sentence's score from its rating distribution, else its greedy ``answer``
        parsed, else the scale's LO; every path is counted."""
        value = self.rate(scale, rating, answer)
        return float(scale.lo) if value is None else value

    def rate(self, scale: Scale, rating: Rating | None, answer: str | None) -> float | None:
        """As :meth:`score`, but None for an unrated sentence (counted as ``unrated``): the
        ranker gives it LO only when another sentence of its pair is rated."""
        self.counts["sentences"] += 1
        if rating is not None:
            self.counts["distributions"] += 1
            self.sums["valid"] += rating.valid
            self.sums["pruned"] += rating.pruned
            self.sums["approximate"] += rating.approximate
            self.sums["unresolved"] += rating.unresolved
            if rating.approximate > 0 or rating.unresolved > 0:
                self.counts["approximate_sentences"] += 1
            value = rating.expected(scale)
            if value is not None:
                self.counts["expected"] += 1
                return value
        parsed = scale.parse_answer(answer) if answer is not None else None
        if parsed is not None:
            self.counts["greedy_fallback"] += 1
            return parsed
        self.counts["unrated"] += 1
        return None

    def report(self) -> dict[str, Any]:
        """Counts, plus mean masses per sentence scored from a distribution."""
        out: dict[str, Any] = dict(sorted(self.counts.items()))
        scored = self.counts.get("distributions", 0)
        for key in ("valid", "pruned", "approximate", "unresolved"):
            if scored and key in self.sums:
                out[f"mean_{key}_mass"] = round(self.sums[key] / scored, 6)
        for key in ("prompt_tokens", "completion_tokens"):
            if key in self.sums:
                out[key] = int(self.sums[key])
        if "cost" in self.sums:
            out["cost"] = round(self.sums["cost"], 6)
        return out
