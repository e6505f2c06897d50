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
"""

from __future__ import annotations

import math
import os
import queue
import random
import threading
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, cast

from sourcesum.errors import RankerError
from sourcesum.rankers.llm.request_cache import RequestCache, request_key
from sourcesum.rankers.llm.scale import Scale
from sourcesum.rankers.llm.scoring import Diagnostics, Dist, Rating, rating_distributions

_RETRY_STATUS = {408, 409, 429}
MAX_DELAY = 60.0
POLL_SECONDS = 0.1
"""How often the calling thread looks at the requests in flight (so an interruption is seen at
once even where no signal wakes it, e.g. ``_thread.interrupt_main``)."""
PROBABILITY_SLACK = 1e-4
"""How far above 1 a returned probability (``exp(logprob)``), or the sum of one position's
candidates, may be: servers compute in float32 and round (measured with llama.cpp: the largest
logprob -7e-5, the largest sum 0.99999); anything above is a broken response."""
MAX_LOGPROB = math.log1p(PROBABILITY_SLACK)


class MalformedResponse(Exception):
    """A 2xx response that is not a usable completion."""


class InvalidResponse(MalformedResponse):
    """A well-formed response whose values are impossible (see :func:`record_problem`)."""


class Cancelled(Exception):
    """The call that started this request stopped (an error elsewhere, or an interruption)."""


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
    record: dict[str, Any] = {"text": text, "positions": positions, "usage": _usage(response)}
    model = getattr(response, "model", None)
    if isinstance(model, str) and model:
        record["model"] = model
    return record


def _logprob(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedResponse(f"a logprob is {value!r}, not a number")
    return float(value)


def _check_chosen(value: Any, position: int) -> None:
    """The answer's own token's logprob (not kept; ``None`` where a server omits it)."""
    if value is None:
        return
    problem = _logprob_problem(_logprob(value))
    if problem:
        raise InvalidResponse(f"logprobs position {position}: the answer's token has {problem}")


def _logprob_problem(value: float) -> str | None:
    if math.isnan(value):
        return "logprob NaN"
    if value > MAX_LOGPROB:  # +inf (an overflowing number) included
        return f"logprob {value!r} > 0 (a probability above 1)"
    return None


def _first_choice(response: Any) -> Any:
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse("no choices")
    return choices[0]


def _usage(response: Any) -> dict[str, int]:
    usage = getattr(response, "usage", None)
    out = {}
    for key in ("prompt_tokens", "completion_tokens"):
        value = getattr(usage, key, 0) or 0
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if not _is_count(value):
            raise InvalidResponse(f"usage.{key} is {value!r}, not a token count")
        out[key] = int(value)
    return out


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def record_problem(record: Any) -> str | None:
    """Why a normalised response (fresh, or read from the cache) cannot be used, else None.

    It needs an answer ``text``, token counts in ``usage``, a string ``model`` if any, and
    ``positions`` that are None or a list of ``[token, [[candidate, logprob], ...]]`` whose
    logprobs are numbers, not NaN, at most 0 (:data:`PROBABILITY_SLACK`; -inf is probability 0)
    and whose probabilities sum to at most 1 per position. Checked before a response is cached
    or used, so no impossible value reaches the cache or the scores."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if not isinstance(record.get("text"), str):
        return "no answer text"
    usage = record.get("usage")
    if not isinstance(usage, dict) or not all(
        _is_count(usage.get(k)) for k in ("prompt_tokens", "completion_tokens")
    ):
        return f"usage {usage!r} is not two token counts"
    if "model" in record and not isinstance(record["model"], str):
        return f"model {record['model']!r} is not a string"
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
        self._lock, self._client_lock = threading.Lock(), threading.Lock()
        self._client: Any = None
        self._models: set[str] = set()
        self._listed: list[str] | None = None

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/{'chat/completions' if self.chat else 'completions'}"

    def client(self) -> Any:
        with self._client_lock:  # the request threads ask for it at once
            return self._make_client()

    def _make_client(self) -> Any:
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

    def complete(
        self, bodies: Sequence[dict[str, Any]], labels: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Normalised responses, from the cache or the server (``concurrency`` at a time);
        ``labels`` name the requests in errors (default: their number). See the module doc for
        what an error or an interruption stops."""
        names = (
            list(labels)
            if labels is not None
            else [f"request {i + 1} of {len(bodies)}" for i in range(len(bodies))]
        )
        if not bodies:
            return []
        results: list[dict[str, Any] | None] = [None] * len(bodies)
        done: queue.Queue[tuple[int, BaseException | None]] = queue.Queue()
        pending = iter(range(len(bodies)))
        take, stop = threading.Lock(), threading.Event()

        def work() -> None:
            while not stop.is_set():
                with take:
                    i = next(pending, None)
                if i is None:
                    return
                try:
                    results[i] = self._one(bodies[i], names[i], stop)
                except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
                    done.put((i, exc))
                    return
                done.put((i, None))

        workers = [
            threading.Thread(target=work, name=f"llm_judge-request-{k}", daemon=True)
            for k in range(min(self.concurrency, len(bodies)))
        ]
        for worker in workers:
            worker.start()
        finished = 0
        try:
            while finished < len(bodies):
                try:
                    _, error = done.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    continue
                if error is not None:
                    stop.set()
                    for worker in workers:  # their attempts in flight are paid: cache them
                        while worker.is_alive():
                            worker.join(POLL_SECONDS)
                    raise error
                finished += 1
        finally:
            stop.set()  # done, failed or interrupted: no new request, no retry, no backoff wait
        return cast("list[dict[str, Any]]", results)

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

    def server_models(self) -> list[str]:
        """The model ids the server reported: on the responses used by this backend (fresh or
        cached), else from ``/models`` (asked once; the configured model if listed, the only
        model if one is listed, else none); empty when the server says nothing usable."""
        with self._lock:
            seen = sorted(self._models)
        if seen:
            return seen
        if self._listed is None:
            self._listed = self._list_models()
        return list(self._listed)

    def _list_models(self) -> list[str]:
        try:  # a short wait: a server that does not answer this will not answer completions either
            listing = self.client().with_options(timeout=min(self.timeout, 10.0)).models.list()
            ids = [str(m.id) for m in listing]
        except Exception:  # noqa: BLE001 - provenance is best effort: no answer, no claim
            return []
        if self.model in ids:
            return [self.model]
        return ids if len(ids) == 1 else []

    def _count(self, key: str, amount: float = 1, total: bool = False) -> None:
        with self._lock:
            if total:
                self.diagnostics.sums[key] += amount
            else:
                self.diagnostics.counts[key] += int(amount)

    def _use(self, record: dict[str, Any]) -> dict[str, Any]:
        model = record.get("model")
        if isinstance(model, str):
            with self._lock:
                self._models.add(model)
        return record

    def _one(self, body: dict[str, Any], label: str, stop: threading.Event) -> dict[str, Any]:
        key = request_key(self.endpoint, body)
        cached = self.cache.get(key)
        if cached is not None:
            if record_problem(cached) is None:
                self._count("cache_hits")
                return self._use(cast("dict[str, Any]", cached))
            self._count("cache_invalid_refetched")  # saved by an older version: ask again
        record = self._request(body, label, stop)
        self.cache.put(key, record)  # checked by _request: nothing invalid is cached
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
        return self._use(record)

    def _request(self, body: dict[str, Any], label: str, stop: threading.Event) -> dict[str, Any]:
        """One checked response for ``body`` (retried as the module doc says); raises
        :class:`Cancelled` as soon as ``stop`` is set."""
        import openai

        client = self.client()
        for attempt in range(self.max_retries + 1):
            if stop.is_set():
                raise Cancelled(label)
            try:
                if self.chat:
                    record = normalize_chat(client.chat.completions.create(**body))
                else:
                    record = normalize_completion(client.completions.create(**body))
                problem = record_problem(record)
                if problem is not None:
                    raise InvalidResponse(problem)
                return record
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status not in _RETRY_STATUS and status < 500:
                    hint = f" (is ${self.api_key_env} set?)" if status in (401, 403) else ""
                    raise RankerError(
                        f"{self.endpoint} answered {status}{hint} to the request for {label}: {_message(exc)}"
                    ) from exc
                cause, wait = (str(status) if status < 500 else "5xx"), _retry_after(exc)
                error: Exception = exc
            except openai.APITimeoutError as exc:  # before APIConnectionError: a subclass of it
                cause, wait, error = "timeout", 0.0, exc
            except openai.APIConnectionError as exc:
                cause, wait, error = "connection", 0.0, exc
            except (MalformedResponse, openai.APIResponseValidationError, ValueError, TypeError) as exc:
                cause = "invalid" if isinstance(exc, InvalidResponse) else "malformed"
                wait, error = 0.0, exc
            if stop.is_set():
                raise Cancelled(label)
            self._count(f"retries_{cause}")
            if attempt == self.max_retries:
                key = request_key(self.endpoint, body)[:12]
                raise RankerError(
                    f"{self.endpoint}: giving up on the request for {label} (cache key {key}...) after "
                    f"{attempt + 1} attempts; last error ({cause}): {type(error).__name__}: {error}"
                ) from error
            delay = random.uniform(0.0, min(MAX_DELAY, self.backoff * 2**attempt))
            if stop.wait(max(delay, min(wait, MAX_DELAY))):
                raise Cancelled(label)
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
