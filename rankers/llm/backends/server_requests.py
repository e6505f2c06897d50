"""Requests to one OpenAI-compatible endpoint, shared by every ranker that asks a server
(``llm_judge``'s :class:`~sourcesum.rankers.llm.backends.openai_compat.OpenAIBackend`, and the
LM rankers' :class:`~sourcesum.rankers.lm.server.LogprobRequests`), through the official
``openai`` client.

- At most ``concurrency`` requests in flight; 429, 408/409, 5xx, timeouts, connection errors,
  malformed bodies and invalid ones (the subclass's :meth:`ServerRequests.problem`, or a
  per-request check) are retried up to ``max_retries`` times after
  ``uniform(0, min(60, backoff * 2**attempt))`` seconds (full jitter; at least a 429's
  ``Retry-After``); each retry is counted by cause (``retries_invalid``, ...). Other errors (400,
  401, 404, ...) stop the run with the server's message. Errors name the endpoint and the
  request.
- Every response is normalised (the subclass's :meth:`ServerRequests.send`), checked, then saved
  at once in a :class:`~sourcesum.rankers.llm.request_cache.RequestCache` before it is used, so a
  rerun after an interruption pays only for the requests never answered. A cached response that
  fails the check (saved by an older version) is requested again, counted as
  ``cache_invalid_refetched``.
- Requests run on daemon threads; the calling thread polls them every :data:`POLL_SECONDS`. An
  interruption (Ctrl-C) or an error stops every retry and backoff at once and starts no new
  request; after an error the requests in flight are awaited (they are paid: their answers are
  cached), after an interruption they are abandoned (a late answer is still cached).
- The API key is read from the environment variable ``api_key_env`` (servers without
  authentication accept any key).
- Counted in ``diagnostics`` (``counts`` and ``sums``): ``requests``, ``cache_hits``,
  ``cache_invalid_refetched``, ``retries_<cause>``, the summed ``prompt_tokens`` and
  ``completion_tokens``, and ``cost`` when a price is given.
"""

from __future__ import annotations

import math
import os
import queue
import random
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from sourcesum.errors import RankerError
from sourcesum.rankers.llm.request_cache import RequestCache, request_key

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

Check = Callable[[Any], "str | None"]
"""Why a normalised record (fresh, or read from the cache) cannot be used, else None."""


class MalformedResponse(Exception):
    """A 2xx response that is not a usable completion."""


class InvalidResponse(MalformedResponse):
    """A well-formed response whose values are impossible (see the subclass's check)."""


class Cancelled(Exception):
    """The call that started this request stopped (an error elsewhere, or an interruption)."""


class Counts(Protocol):
    """Where the requests are counted (``llm_judge``'s Diagnostics, or :class:`RequestCounters`)."""

    counts: Counter[str]
    sums: dict[str, float]


class RequestCounters:
    """Request counts of one run (reset per split) for rankers with no counters of their own."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.sums: dict[str, float] = cast("dict[str, float]", Counter())

    def reset(self) -> None:
        self.counts.clear()
        self.sums.clear()

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(sorted(self.counts.items()))
        for key in ("prompt_tokens", "completion_tokens"):
            if key in self.sums:
                out[key] = int(self.sums[key])
        if "cost" in self.sums:
            out["cost"] = round(self.sums["cost"], 6)
        return out


# -- pieces of response checks --------------------------------------------------------------------
def logprob_value(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedResponse(f"a logprob is {value!r}, not a number")
    return float(value)


def logprob_problem(value: float) -> str | None:
    if math.isnan(value):
        return "logprob NaN"
    if value > MAX_LOGPROB:  # +inf (an overflowing number) included
        return f"logprob {value!r} > 0 (a probability above 1)"
    return None


def first_choice(response: Any) -> Any:
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse("no choices")
    return choices[0]


def usage_of(response: Any) -> dict[str, int]:
    usage = getattr(response, "usage", None)
    out = {}
    for key in ("prompt_tokens", "completion_tokens"):
        value = getattr(usage, key, 0) or 0
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if not is_count(value):
            raise InvalidResponse(f"usage.{key} is {value!r}, not a token count")
        out[key] = int(value)
    return out


def is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def with_model(record: dict[str, Any], response: Any) -> dict[str, Any]:
    """``record`` plus ``model`` (the id the server says answered) when it sent one."""
    model = getattr(response, "model", None)
    if isinstance(model, str) and model:
        record["model"] = model
    return record


def common_problem(record: Any) -> str | None:
    """The checks every normalised record passes: a JSON object with token counts in ``usage``
    and a string ``model`` if any."""
    if not isinstance(record, dict):
        return "not a JSON object"
    usage = record.get("usage")
    if not isinstance(usage, dict) or not all(
        is_count(usage.get(k)) for k in ("prompt_tokens", "completion_tokens")
    ):
        return f"usage {usage!r} is not two token counts"
    if "model" in record and not isinstance(record["model"], str):
        return f"model {record['model']!r} is not a string"
    return None


@dataclass(frozen=True)
class ServerSettings:
    """How to reach one OpenAI-compatible server and how hard to try: its ``base_url`` and
    ``model``, the environment variable holding the API key, parallel requests, retries with
    exponential ``backoff`` (seconds), the per-request ``timeout`` (seconds), and optional prices
    per million input and output tokens (for the cost report)."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 4
    max_retries: int = 6
    timeout: float = 60.0
    backoff: float = 1.0
    price_input: float | None = None
    price_output: float | None = None


class ServerRequests:
    """Requests to one OpenAI-compatible endpoint (see the module doc). Subclasses define
    :attr:`endpoint`, :meth:`send` (one call, normalised) and :meth:`problem` (the default
    check of a normalised record)."""

    def __init__(self, settings: ServerSettings, cache_dir: Path, diagnostics: Counts, owner: str):
        self.settings = settings
        self.base_url, self.model = settings.base_url.rstrip("/"), settings.model
        self.api_key_env = settings.api_key_env
        self.concurrency, self.max_retries = settings.concurrency, settings.max_retries
        self.timeout, self.backoff = settings.timeout, settings.backoff
        self.price_input, self.price_output = settings.price_input, settings.price_output
        self.cache = RequestCache(cache_dir)
        self.diagnostics = diagnostics
        self.owner = owner
        """The ranker's name: in thread names and errors."""
        self._lock, self._client_lock = threading.Lock(), threading.Lock()
        self._client: Any = None
        self._models: set[str] = set()
        self._listed: list[str] | None = None

    # -- what a subclass defines ------------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        raise NotImplementedError

    def send(self, client: Any, body: dict[str, Any]) -> dict[str, Any]:
        """The normalised record of one call with ``body`` (raises :class:`MalformedResponse`)."""
        raise NotImplementedError

    def problem(self, record: Any) -> str | None:
        """Why a normalised record cannot be used, else None (the default check)."""
        raise NotImplementedError

    # -- the client -------------------------------------------------------------------------------
    def client(self) -> Any:
        with self._client_lock:  # the request threads ask for it at once
            return self._make_client()

    def _make_client(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as exc:
                raise RankerError(
                    f"{self.owner} backend=openai needs the openai package: pip install -e '.[llm]'"
                ) from exc
            key = os.environ.get(self.api_key_env) or "unset"
            self._client = openai.OpenAI(
                base_url=self.base_url, api_key=key, max_retries=0, timeout=self.timeout
            )
        return self._client

    # -- requests ---------------------------------------------------------------------------------
    def complete(
        self,
        bodies: Sequence[dict[str, Any]],
        labels: Sequence[str] | None = None,
        checks: Sequence[Check] | None = None,
    ) -> list[dict[str, Any]]:
        """Normalised responses, from the cache or the server (``concurrency`` at a time, taken
        in the order given); ``labels`` name the requests in errors (default: their number),
        ``checks`` replace :meth:`problem` per request. See the module doc for what an error or
        an interruption stops."""
        names = (
            list(labels)
            if labels is not None
            else [f"request {i + 1} of {len(bodies)}" for i in range(len(bodies))]
        )
        tests: list[Check | None] = list(checks) if checks is not None else [None] * len(bodies)
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
                    results[i] = self._one(bodies[i], names[i], stop, tests[i])
                except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
                    done.put((i, exc))
                    return
                done.put((i, None))

        workers = [
            threading.Thread(target=work, name=f"{self.owner}-request-{k}", daemon=True)
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

    def _one(
        self, body: dict[str, Any], label: str, stop: threading.Event, check: Check | None = None
    ) -> dict[str, Any]:
        key = request_key(self.endpoint, body)
        cached = self.cache.get(key)
        if cached is not None:
            if (check or self.problem)(cached) is None:
                self._count("cache_hits")
                return self._use(cast("dict[str, Any]", cached))
            self._count("cache_invalid_refetched")  # saved by an older version: ask again
        # (without a check of its own, called as (body, label, stop): tests replace _request)
        record = (
            self._request(body, label, stop) if check is None else self._request(body, label, stop, check)
        )
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

    def _request(
        self, body: dict[str, Any], label: str, stop: threading.Event, check: Check | None = None
    ) -> dict[str, Any]:
        """One checked response for ``body`` (retried as the module doc says); raises
        :class:`Cancelled` as soon as ``stop`` is set."""
        import openai

        check = check or self.problem
        client = self.client()
        for attempt in range(self.max_retries + 1):
            if stop.is_set():
                raise Cancelled(label)
            try:
                record = self.send(client, body)
                problem = check(record)
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
