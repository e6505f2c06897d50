"""Any OpenAI-compatible server (vLLM, llama.cpp's server, hosted APIs) through the official
``openai`` client.

- ``chat=True`` sends the prompt as the user message of ``/chat/completions`` (the server
  applies the model's chat template), ``chat=False`` as the raw prompt of ``/completions``.
- Greedy (``temperature=0``, ``seed=0``) with ``top_logprobs`` candidates per position; the
  rating distribution is built from them (:mod:`sourcesum.rankers.llm.scoring`); without
  logprobs the answer text is parsed (counted).
- At most ``concurrency`` requests in flight; 429, 408/409, 5xx, timeouts, connection errors,
  malformed bodies and invalid ones (:func:`record_problem`: log-probabilities that are NaN or
  above 0, candidates whose probabilities sum above 1, token counts that are not counts) are
  retried up to ``max_retries`` times after ``uniform(0, min(60, backoff * 2**attempt))``
  seconds (full jitter; at least a 429's ``Retry-After``); each retry is counted by cause
  (``retries_invalid``, ...). Other errors (400, 401, 404, ...) stop the run with the server's
  message. Errors name the endpoint and the request (pair and sentence).
- Every response is checked, then saved at once in a
  :class:`~sourcesum.rankers.llm.request_cache.RequestCache` before it is used, so a rerun after
  an interruption pays only for the requests never answered. A cached response that fails the
  check (saved by an older version) is requested again, counted as ``cache_invalid_refetched``.
- Requests run on daemon threads; the calling thread polls them every :data:`POLL_SECONDS`.
  An interruption (Ctrl-C) or an error stops every retry and backoff at once and starts no new
  request; after an error the requests in flight are awaited (they are paid: their answers are
  cached), after an interruption they are abandoned (a late answer is still cached).
- The API key is read from the environment variable ``api_key_env`` (servers without
  authentication accept any key).

The request machinery (concurrency, retries, the cache, counting) is shared with the LM rankers'
server backend: :mod:`sourcesum.rankers.llm.backends.server_requests`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from sourcesum.rankers.llm.backends.server_requests import (
    _RETRY_STATUS,
    MAX_DELAY,
    MAX_LOGPROB,
    POLL_SECONDS,
    PROBABILITY_SLACK,
    Cancelled,
    InvalidResponse,
    MalformedResponse,
    ServerRequests,
    ServerSettings,
    _message,
    _retry_after,
    common_problem,
    with_model,
)
from sourcesum.rankers.llm.backends.server_requests import first_choice as _first_choice
from sourcesum.rankers.llm.backends.server_requests import logprob_problem as _logprob_problem
from sourcesum.rankers.llm.backends.server_requests import logprob_value as _logprob
from sourcesum.rankers.llm.backends.server_requests import usage_of as _usage
from sourcesum.rankers.llm.scale import Scale
from sourcesum.rankers.llm.scoring import Diagnostics, Dist, Rating, rating_distributions

__all__ = [
    "MAX_DELAY",
    "MAX_LOGPROB",
    "POLL_SECONDS",
    "PROBABILITY_SLACK",
    "_RETRY_STATUS",
    "Cancelled",
    "InvalidResponse",
    "MalformedResponse",
    "OpenAIBackend",
    "_message",
    "_retry_after",
    "normalize_chat",
    "normalize_completion",
    "record_problem",
    "server_rating",
]


def normalize_chat(response: Any) -> dict[str, Any]:
    """``{"text", "positions", "usage"}`` from a chat completion; ``positions`` is a list of
    ``[greedy token, [[token, logprob], ...]]`` or None when the server sent no logprobs."""
    choice = _first_choice(response)
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None)
    if not isinstance(text, str):
        raise MalformedResponse("no message content")
    positions = None
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if content:
        positions = []
        for k, p in enumerate(content):
            _check_chosen(getattr(p, "logprob", None), k)
            candidates = [[t.token, _logprob(t.logprob)] for t in (p.top_logprobs or [])]
            positions.append([p.token, candidates])
    return _record(text, positions, response)


def normalize_completion(response: Any) -> dict[str, Any]:
    """As :func:`normalize_chat`, for ``/completions`` (legacy ``logprobs`` layout)."""
    choice = _first_choice(response)
    text = getattr(choice, "text", None)
    if not isinstance(text, str):
        raise MalformedResponse("no completion text")
    positions = None
    logprobs = getattr(choice, "logprobs", None)
    tokens = getattr(logprobs, "tokens", None)
    tops = getattr(logprobs, "top_logprobs", None)
    if tokens and tops and len(tops) == len(tokens):
        chosen = getattr(logprobs, "token_logprobs", None) or [None] * len(tokens)
        for k, value in enumerate(chosen):
            _check_chosen(value, k)
        positions = [
            [tok, [[t, _logprob(lp)] for t, lp in (top or {}).items()]]
            for tok, top in zip(tokens, tops, strict=True)
        ]
    return _record(text, positions, response)


def _record(text: str, positions: list[Any] | None, response: Any) -> dict[str, Any]:
    """The normalised record; ``model`` (the id the server says answered) when it sent one."""
    return with_model({"text": text, "positions": positions, "usage": _usage(response)}, response)


def _check_chosen(value: Any, position: int) -> None:
    """The answer's own token's logprob (not kept; ``None`` where a server omits it)."""
    if value is None:
        return
    problem = _logprob_problem(_logprob(value))
    if problem:
        raise InvalidResponse(f"logprobs position {position}: the answer's token has {problem}")


def record_problem(record: Any) -> str | None:
    """Why a normalised response (fresh, or read from the cache) cannot be used, else None.

    It needs an answer ``text``, token counts in ``usage``, a string ``model`` if any, and
    ``positions`` that are None or a list of ``[token, [[candidate, logprob], ...]]`` whose
    logprobs are numbers, not NaN, at most 0 (:data:`PROBABILITY_SLACK`; -inf is probability 0)
    and whose probabilities sum to at most 1 per position. Checked before a response is cached
    or used, so no impossible value reaches the cache or the scores."""
    problem = common_problem(record)
    if problem is not None:
        return problem
    if not isinstance(record.get("text"), str):
        return "no answer text"
    positions = record.get("positions")
    if positions is None:
        return None
    if not isinstance(positions, list):
        return "logprobs are not a list of positions"
    for k, position in enumerate(positions):
        if not (
            isinstance(position, list)
            and len(position) == 2
            and isinstance(position[0], str)
            and isinstance(position[1], list)
        ):
            return f"logprobs position {k} is not [token, candidates]"
        total = 0.0
        for candidate in position[1]:
            if not (
                isinstance(candidate, list)
                and len(candidate) == 2
                and isinstance(candidate[0], str)
                and isinstance(candidate[1], (int, float))
                and not isinstance(candidate[1], bool)
            ):
                return f"logprobs position {k}: candidate {candidate!r} is not [token, logprob]"
            problem = _logprob_problem(float(candidate[1]))
            if problem:
                return f"logprobs position {k}: candidate {candidate[0]!r} has {problem}"
            total += math.exp(candidate[1])
        if total > 1.0 + PROBABILITY_SLACK:
            return f"logprobs position {k}: the candidates' probabilities sum to {total:.6g} > 1"
    return None


def server_rating(record: dict[str, Any], scale: Scale, min_prob: float) -> Rating | None:
    """The rating distribution from a response's ``positions`` (None without logprobs).

    The node on the greedy answer's path at depth ``k`` gets the candidates returned at position
    ``k`` (its own distribution; tokens beyond the returned ones are left out); a node off the
    path gets the same position's candidates as a stand-in (``exact=False``); a node deeper than
    the answer gets none (unresolved)."""
    positions = record.get("positions")
    if not positions:
        return None
    greedy = [p[0] for p in positions]

    def oracle(nodes: Sequence[tuple[int, tuple[Hashable, ...]]]) -> list[Dist | None]:
        out: list[Dist | None] = []
        for _, path in nodes:
            depth = len(path)
            if depth >= len(positions):
                out.append(None)
                continue
            candidates = [(t, math.exp(lp), t) for t, lp in positions[depth][1]]
            out.append(Dist(candidates, 0.0, exact=list(path) == greedy[:depth]))
        return out

    return rating_distributions(scale, 1, oracle, min_prob)[0]


class OpenAIBackend(ServerRequests):
    """The judge's requests to one OpenAI-compatible endpoint (see the module doc)."""

    def __init__(
        self,
        settings: ServerSettings,
        chat: bool,
        top_logprobs: int,
        cache_dir: Path,
        diagnostics: Diagnostics,
    ):
        super().__init__(settings, cache_dir, diagnostics, owner="llm_judge")
        self.chat, self.top_logprobs = chat, top_logprobs

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/{'chat/completions' if self.chat else 'completions'}"

    def send(self, client: Any, body: dict[str, Any]) -> dict[str, Any]:
        if self.chat:
            return normalize_chat(client.chat.completions.create(**body))
        return normalize_completion(client.completions.create(**body))

    def problem(self, record: Any) -> str | None:
        return record_problem(record)

    def body(self, prompt: str, max_tokens: int, logprobs: bool) -> dict[str, Any]:
        """The request body (also the cache key with the endpoint)."""
        body: dict[str, Any] = {"model": self.model, "temperature": 0.0, "seed": 0, "max_tokens": max_tokens}
        if self.chat:
            body["messages"] = [{"role": "user", "content": prompt}]
            if logprobs:
                body.update(logprobs=True, top_logprobs=self.top_logprobs)
        else:
            body["prompt"] = prompt
            if logprobs:
                body["logprobs"] = self.top_logprobs
        return body

    def rate(
        self, prompts: Sequence[str], scale: Scale, min_prob: float, labels: Sequence[str] | None = None
    ) -> list[tuple[Rating | None, str]]:
        """Rating distribution (None without logprobs) and answer text of each prompt."""
        max_tokens = max(len(r) for r in scale.ratings) + 2
        records = self.complete([self.body(p, max_tokens, logprobs=True) for p in prompts], labels)
        return [(server_rating(r, scale, min_prob), r["text"]) for r in records]

    def generate(
        self, prompts: Sequence[str], max_tokens: Sequence[int], labels: Sequence[str] | None = None
    ) -> list[str]:
        """Greedy answers, ``max_tokens[i]`` tokens at most for prompt ``i``."""
        bodies = [self.body(p, m, logprobs=False) for p, m in zip(prompts, max_tokens, strict=True)]
        return [r["text"] for r in self.complete(bodies, labels)]
