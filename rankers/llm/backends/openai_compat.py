"""Any OpenAI-compatible server (vLLM, llama.cpp's server, hosted APIs) through the official
``openai`` client.

- ``chat=True`` sends the prompt as the user message of ``/chat/completions`` (the server
  applies the model's chat template), ``chat=False`` as the raw prompt of ``/completions``.
- Greedy (``temperature=0``, ``seed=0``) with ``top_logprobs`` candidates per position; the
  rating distribution is built from them (:mod:`sourcesum.rankers.llm.scoring`); without
  logprobs the answer text is parsed (counted).
- At most ``concurrency`` requests in flight; 429, 408/409, 5xx, timeouts, connection errors and
  malformed bodies are retried up to ``max_retries`` times after ``uniform(0, min(60, backoff *
  2**attempt))`` seconds (full jitter; at least a 429's ``Retry-After``). Other errors (400,
  401, 404, ...) stop the run with the server's message.
- Every response is saved at once in a :class:`~sourcesum.rankers.llm.request_cache.RequestCache`
  before it is used, so a rerun after an interruption pays only for the requests never answered.
- The API key is read from the environment variable ``api_key_env`` (servers without
  authentication accept any key).
"""

from __future__ import annotations

import math
import os
import random
import threading
import time
from collections.abc import Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

from sourcesum.errors import RankerError
from sourcesum.rankers.llm.request_cache import RequestCache, request_key
from sourcesum.rankers.llm.scale import Scale
from sourcesum.rankers.llm.scoring import Diagnostics, Dist, Rating, rating_distributions

_RETRY_STATUS = {408, 409, 429}
MAX_DELAY = 60.0


class MalformedResponse(Exception):
    """A 2xx response that is not a usable completion."""


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
        positions = [
            [p.token, [[t.token, float(t.logprob)] for t in (p.top_logprobs or [])]] for p in content
        ]
    return {"text": text, "positions": positions, "usage": _usage(response)}


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
        positions = [
            [tok, [[t, float(lp)] for t, lp in (top or {}).items()]]
            for tok, top in zip(tokens, tops, strict=True)
        ]
    return {"text": text, "positions": positions, "usage": _usage(response)}


def _first_choice(response: Any) -> Any:
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse("no choices")
    return choices[0]


def _usage(response: Any) -> dict[str, int]:
    usage = getattr(response, "usage", None)
    return {
        "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
    }


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


class OpenAIBackend:
    """Requests to one OpenAI-compatible endpoint (see the module doc)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        chat: bool,
        top_logprobs: int,
        api_key_env: str,
        concurrency: int,
        max_retries: int,
        timeout: float,
        backoff: float,
        price_input: float | None,
        price_output: float | None,
        cache_dir: Path,
        diagnostics: Diagnostics,
    ):
        self.base_url, self.model, self.chat = base_url.rstrip("/"), model, chat
        self.top_logprobs, self.api_key_env = top_logprobs, api_key_env
        self.concurrency, self.max_retries = concurrency, max_retries
        self.timeout, self.backoff = timeout, backoff
        self.price_input, self.price_output = price_input, price_output
        self.cache = RequestCache(cache_dir)
        self.diagnostics = diagnostics
        self._lock = threading.Lock()
        self._client: Any = None

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/{'chat/completions' if self.chat else 'completions'}"

    def client(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as exc:
                raise RankerError(
                    "llm_judge backend=openai needs the openai package: pip install -e '.[llm]'"
                ) from exc
            key = os.environ.get(self.api_key_env) or "unset"
            self._client = openai.OpenAI(
                base_url=self.base_url, api_key=key, max_retries=0, timeout=self.timeout
            )
        return self._client

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

    def complete(self, bodies: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Normalised responses, from the cache or the server (``concurrency`` at a time)."""
        if len(bodies) <= 1 or self.concurrency <= 1:
            return [self._one(b) for b in bodies]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._one, bodies))

    def rate(self, prompts: Sequence[str], scale: Scale, min_prob: float) -> list[tuple[Rating | None, str]]:
        """Rating distribution (None without logprobs) and answer text of each prompt."""
        max_tokens = max(len(r) for r in scale.ratings) + 2
        records = self.complete([self.body(p, max_tokens, logprobs=True) for p in prompts])
        return [(server_rating(r, scale, min_prob), r["text"]) for r in records]

    def generate(self, prompts: Sequence[str], max_tokens: Sequence[int]) -> list[str]:
        """Greedy answers, ``max_tokens[i]`` tokens at most for prompt ``i``."""
        bodies = [self.body(p, m, logprobs=False) for p, m in zip(prompts, max_tokens, strict=True)]
        return [r["text"] for r in self.complete(bodies)]

    def _count(self, key: str, amount: float = 1, total: bool = False) -> None:
        with self._lock:
            if total:
                self.diagnostics.sums[key] += amount
            else:
                self.diagnostics.counts[key] += int(amount)

    def _one(self, body: dict[str, Any]) -> dict[str, Any]:
        key = request_key(self.endpoint, body)
        cached = self.cache.get(key)
        if cached is not None:
            self._count("cache_hits")
            return cast("dict[str, Any]", cached)
        record = self._request(body)
        self.cache.put(key, record)
        self._count("requests")
        usage = record["usage"]
        self._count("prompt_tokens", usage["prompt_tokens"], total=True)
        self._count("completion_tokens", usage["completion_tokens"], total=True)
        if self.price_input is not None or self.price_output is not None:
            cost = (
                usage["prompt_tokens"] * (self.price_input or 0.0)
                + usage["completion_tokens"] * (self.price_output or 0.0)
            ) / 1e6
            self._count("cost", cost, total=True)
        return record

    def _request(self, body: dict[str, Any]) -> dict[str, Any]:
        import openai

        client = self.client()
        for attempt in range(self.max_retries + 1):
            try:
                if self.chat:
                    return normalize_chat(client.chat.completions.create(**body))
                return normalize_completion(client.completions.create(**body))
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status not in _RETRY_STATUS and status < 500:
                    hint = f" (is ${self.api_key_env} set?)" if status in (401, 403) else ""
                    raise RankerError(f"{self.endpoint} answered {status}{hint}: {_message(exc)}") from exc
                cause, wait = (str(status) if status < 500 else "5xx"), _retry_after(exc)
                error: Exception = exc
            except openai.APITimeoutError as exc:  # before APIConnectionError: a subclass of it
                cause, wait, error = "timeout", 0.0, exc
            except openai.APIConnectionError as exc:
                cause, wait, error = "connection", 0.0, exc
            except (MalformedResponse, openai.APIResponseValidationError, ValueError) as exc:
                cause, wait, error = "malformed", 0.0, exc
            self._count(f"retries_{cause}")
            if attempt == self.max_retries:
                raise RankerError(
                    f"{self.endpoint}: giving up after {attempt + 1} attempts; last error "
                    f"({cause}): {type(error).__name__}: {error}"
                ) from error
            delay = random.uniform(0.0, min(MAX_DELAY, self.backoff * 2**attempt))
            time.sleep(max(delay, min(wait, MAX_DELAY)))
        raise AssertionError("unreachable")  # pragma: no cover


def _retry_after(exc: Any) -> float:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        return float(headers.get("retry-after", 0) or 0)
    except (TypeError, ValueError):
        return 0.0


def _message(exc: Any) -> str:
    text = str(getattr(exc, "message", "") or exc)
    return text[:300]
