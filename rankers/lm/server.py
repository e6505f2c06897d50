"""``perplexity_gain`` and ``pmi`` over an OpenAI-compatible server (``backend=openai``: vLLM,
llama-cpp-python): each log-likelihood the local engine computes is one ``/completions`` request
whose prompt is the context followed by the continuation, with the prompt's log-probabilities
returned; the continuation's mean token NLL is read from them.

**What is sent.** The prompt is made from exactly the tokens the local engine reads
(:mod:`sourcesum.rankers.lm.inputs`, with the local tokenizer ``tokenizer``, default the model's):

- ``prompt_format=tokens`` (default): the token ids themselves (OpenAI's ``prompt`` may be a list
  of ids; vLLM accepts it). The server reads the very sequence the local engine reads, so the
  continuation is its last ``k`` positions, ``k`` its length under the local tokenizer, and the
  scores differ from the local ones only by the server's arithmetic.
- ``prompt_format=text``: the text those ids were tokenized from (the start token as its text,
  e.g. ``<|im_start|>``), for servers that take no ids (llama-cpp-python's server). The server
  tokenizes the whole string, the local engine each piece alone (the template's head, every
  sentence, the template's middle, the continuation). The continuation's boundary is kept
  faithfully: the continuation is again the prompt's last ``k`` tokens, after two checks: the
  local tokenizer must tokenize the whole text to end with exactly the continuation's own ids
  (else the request is refused before it is sent: the continuation would not be the same
  tokens), and the server's text offsets (or token texts) must show that its last ``k`` tokens
  span exactly the continuation's characters (else the response is invalid). The *context* may
  be tokenized differently: where a piece ends in a space and the next starts with a word (the
  default template's ``"Document: "`` then ``"The ..."``: the local engine reads ``":"``,
  ``" "``, ``"The"``, a server ``":"``, ``" The"``), the server reads another context and the
  scores differ by more than arithmetic; every such request is counted as
  ``retokenized_contexts`` in the report. PMI's prompts (``" summary"``, ``" sentence"``) and
  templates whose head does not end in a space are read alike.

**How it is read.** ``logprobs_api=echo`` (default): ``echo=true, logprobs=0, max_tokens=1``
(``max_tokens=0`` means *unlimited* on llama-cpp-python), reading ``choices[0].logprobs``
(``token_logprobs``, ``tokens``, ``text_offset``); the ``usage.completion_tokens`` generated
entries at the end are left out. ``logprobs_api=prompt_logprobs``: vLLM's ``prompt_logprobs=0``
(``choices[0].prompt_logprobs``, each position's entry picked by its token id), for servers whose
``echo`` returns no log-probabilities. OpenAI's convention gives the first prompt token no
log-probability; llama-cpp-python also withholds the one *after* the start token (it drops the
start token from the echo, then applies the convention), which PMI's unconditional terms need:
such a value is asked for once per distinct token with a one-token completion of the start
token alone, forced with ``logit_bias`` (+100) to that token, whose reported log-probability is
the unbiased one (checked: a biased one would be about 0); counted as ``first_token_requests``.

**Checks** (:func:`record_problem`, then the selection): every returned log-probability a
finite number at most 0 (:data:`~sourcesum.rankers.llm.backends.server_requests.MAX_LOGPROB`),
token texts and offsets of the same length, offsets non-decreasing, token counts that are
counts; with ids, the server's ``usage.prompt_tokens`` equal to the ids sent. An invalid response
is retried and never cached, and a cached one that fails is requested again, as the judge's
(:mod:`~sourcesum.rankers.llm.backends.server_requests`: concurrency, full-jitter backoff, the
file-locked request cache, fault handling, token counts).

**Order.** A batch's requests are deduplicated and sent sorted by prompt, so prompts sharing a
prefix (a document's leave-one-out variants and their summaries, PMI's conditional terms of one
summary) go out together, for servers with prefix caching (vLLM's
``--enable-prefix-caching``; llama-cpp-python reuses the previous prompt's prefix).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from sourcesum.errors import RankerError, SourceSumError
from sourcesum.rankers.llm.backends.server_requests import (
    MalformedResponse,
    RequestCounters,
    ServerRequests,
    ServerSettings,
    common_problem,
    first_choice,
    is_count,
    logprob_problem,
    usage_of,
    with_model,
)
from sourcesum.rankers.lm.inputs import (
    causal_context,
    causal_summary,
    split_template,
    start_tokens,
)

FIRST_TOKEN_BIAS = 100
"""The ``logit_bias`` that forces the one-token completion of a withheld first token."""
BIASED_LOGPROB = -1e-6
"""A forced token's log-probability above this is the biased one (about 0), not the model's."""


@dataclass(frozen=True)
class Continuation:
    """One log-likelihood: ``continuation`` read after ``context`` (the local engine's token
    ids, the start token first) and the texts they were tokenized from; ``label`` names it in
    errors."""

    context: tuple[int, ...]
    continuation: tuple[int, ...]
    context_text: str
    continuation_text: str
    label: str

    @property
    def ids(self) -> tuple[int, ...]:
        return self.context + self.continuation

    @property
    def text(self) -> str:
        return self.context_text + self.continuation_text


# -- the local engine's inputs, with their texts ----------------------------------------------------
def start_text(tokenizer: Any) -> str:
    """The text of :func:`~sourcesum.rankers.lm.inputs.start_tokens` (e.g. ``<|im_start|>``)."""
    ids = start_tokens(tokenizer)
    return str(tokenizer.decode(list(ids))) if ids else ""


def causal_variants(
    tokenizer: Any, sentences: Sequence[str], template: str
) -> list[tuple[tuple[int, ...], str]]:
    """``(ids, text)`` of the causal context with the whole document, then without sentence
    ``i`` for each ``i``: the ids :func:`~sourcesum.rankers.lm.inputs.causal_context` makes (as
    ``perplexity_gain``'s delete ablation reads them) and the text they were tokenized from."""
    n = len(sentences)
    keeps = [[True] * n] + [[j != i for j in range(n)] for i in range(n)]
    return causal_kept_variants(tokenizer, sentences, template, keeps)


def causal_kept_variants(
    tokenizer: Any, sentences: Sequence[str], template: str, keeps: Sequence[Sequence[bool]]
) -> list[tuple[tuple[int, ...], str]]:
    """``(ids, text)`` of the causal context keeping only the sentences each of ``keeps`` marks
    (one flag per sentence): the ids ``Context.ids(keep=...)`` gives and the text they were
    tokenized from."""
    context = causal_context(tokenizer, sentences, template)
    head, middle = split_template(template)
    pieces = [(" " if i else "") + s for i, s in enumerate(sentences)]
    start = start_text(tokenizer)
    out = []
    for keep in keeps:
        body = "".join(p for p, kept in zip(pieces, keep, strict=True) if kept)
        out.append((tuple(context.ids(keep=keep)), start + head + body + middle))
    return out


def spaced(tokenizer: Any, text: str) -> tuple[tuple[int, ...], str]:
    """``(ids, text)`` of a text read as a continuation: :func:`causal_summary` (``" " + text``)."""
    return causal_summary(tokenizer, text), " " + text


@lru_cache(maxsize=8)
def load_tokenizer(name: str) -> Any:
    """The tokenizer :func:`~sourcesum.rankers.lm.loading.load_lm` loads for ``name``, without the
    model (once per process): the packaged offline default's from its dequantized copy, whose
    manifest and tokenizer files are verified as a load verifies them (the weights are not read;
    a missing or damaged copy is rebuilt, :func:`~sourcesum.rankers.lm.weights.dequantized_copy`)."""
    from sourcesum.rankers.device import quiet_loading
    from sourcesum.rankers.lm import weights as models
    from transformers import AutoTokenizer

    source = name
    if name in models.PACKAGED_MODELS:
        folder = models.dequantized_folder(name)
        try:
            models._manifest(folder, models.gguf_identity(name))
        except models._CacheProblem:
            folder = models.dequantized_copy(name)
        source = str(folder)
    try:
        with quiet_loading():
            return AutoTokenizer.from_pretrained(source)
    except OSError as exc:
        raise SourceSumError(
            f"cannot load the tokenizer {name!r} ({exc}); set tokenizer= to a local path or a cached "
            f"Hugging Face name (the offline default is {models.DEFAULT_LM})"
        ) from exc


# -- responses ------------------------------------------------------------------------------------
def normalize_logprobs(response: Any, body: dict[str, Any]) -> dict[str, Any]:
    """``{"logprobs", "tokens", "offsets", "generated", "usage"[, "model"]}`` from a
    ``/completions`` response: one entry per position returned (prompt positions, then the
    ``generated`` ones); ``tokens`` and ``offsets`` are None where the server sent none."""
    choice = first_choice(response)
    usage = usage_of(response)
    if "prompt_logprobs" in body:
        entries = getattr(choice, "prompt_logprobs", None)
        if entries is None:
            entries = (getattr(choice, "model_extra", None) or {}).get("prompt_logprobs")
        if not isinstance(entries, list):
            raise MalformedResponse("no prompt_logprobs (does the server support vLLM's prompt_logprobs?)")
        ids = body["prompt"] if isinstance(body["prompt"], list) else None
        values: list[Any] = []
        tokens: list[Any] = []
        for position, entry in enumerate(entries):
            if entry is None:
                values.append(None)
                tokens.append(None)
                continue
            if not isinstance(entry, dict) or not entry:
                raise MalformedResponse(f"prompt_logprobs position {position} is {entry!r}")
            if ids is not None and position < len(ids):
                chosen = entry.get(str(ids[position]))
            elif len(entry) == 1:
                chosen = next(iter(entry.values()))
            else:
                chosen = None
            if not isinstance(chosen, dict):
                raise MalformedResponse(f"prompt_logprobs position {position} holds no entry for its token")
            values.append(chosen.get("logprob"))
            tokens.append(chosen.get("decoded_token"))
        record = {"logprobs": values, "tokens": tokens, "offsets": None, "generated": 0, "usage": usage}
        return with_model(record, response)
    logprobs = getattr(choice, "logprobs", None)
    given = getattr(logprobs, "token_logprobs", None)
    if not isinstance(given, list):
        raise MalformedResponse("no token_logprobs (does the server return log-probabilities with echo?)")
    tokens_given = getattr(logprobs, "tokens", None)
    offsets = getattr(logprobs, "text_offset", None)
    record = {
        "logprobs": list(given),
        "tokens": list(tokens_given) if isinstance(tokens_given, list) else None,
        "offsets": list(offsets) if isinstance(offsets, list) else None,
        "generated": usage["completion_tokens"],
        "usage": usage,
    }
    return with_model(record, response)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def record_problem(record: Any) -> str | None:
    """Why a normalised record (fresh, or read from the cache) cannot be used, else None: token
    counts, log-probabilities that are None or finite numbers at most 0 (within the servers'
    rounding), token texts and non-decreasing offsets of the same length, ``generated`` a count
    of at most the positions returned."""
    problem = common_problem(record)
    if problem is not None:
        return problem
    values = record.get("logprobs")
    if not isinstance(values, list):
        return "no list of log-probabilities"
    for k, value in enumerate(values):
        if value is None:
            continue
        if not _number(value):
            return f"log-probability {k} is {value!r}, not a number"
        problem = logprob_problem(float(value))
        if problem is None and math.isinf(value):
            problem = "logprob -inf (a token of probability 0)"
        if problem is not None:
            return f"position {k}: {problem}"
    tokens, offsets = record.get("tokens"), record.get("offsets")
    if tokens is not None and (
        not isinstance(tokens, list)
        or len(tokens) != len(values)
        or not all(t is None or isinstance(t, str) for t in tokens)
    ):
        return f"token texts {str(tokens)[:80]} do not match the {len(values)} log-probabilities"
    if offsets is not None:
        if (
            not isinstance(offsets, list)
            or len(offsets) != len(values)
            or not all(is_count(o) for o in offsets)
        ):
            return f"text offsets {str(offsets)[:80]} are not {len(values)} offsets"
        if any(b < a for a, b in zip(offsets, offsets[1:], strict=False)):
            return "text offsets decrease"
    generated = record.get("generated")
    if not is_count(generated) or generated > len(values):
        return f"generated {generated!r} is not a count of at most {len(values)} positions"
    return None


def continuation_logprobs(
    record: dict[str, Any], item: Continuation, with_ids: bool, start_length: int
) -> tuple[list[float | None], str | None]:
    """The log-probabilities of ``item``'s continuation in a checked record: the last ``k``
    prompt positions (``k`` tokens under the local tokenizer), or why they cannot be read. Only
    the first may be None, where the continuation follows the start token alone (a server that
    withholds it: see the module doc)."""
    values = record["logprobs"]
    k, n = len(item.continuation), len(values) - record["generated"]
    if with_ids:
        sent = len(item.ids)
        if record["usage"]["prompt_tokens"] != sent:
            return (
                [],
                f"the server read {record['usage']['prompt_tokens']} prompt tokens, the request holds {sent}",
            )
        if n not in (sent, sent - 1):  # the start token returned, or left out of the echo
            return [], f"{n} prompt positions returned for {sent} prompt tokens"
    elif n < k:
        return [], f"{n} prompt positions returned, the continuation alone has {k} tokens"
    tokens, offsets = record.get("tokens"), record.get("offsets")
    if not with_ids and (tokens is not None or offsets is not None):
        covered = False
        if tokens is not None and all(isinstance(t, str) for t in tokens[n - k : n]):
            covered = "".join(tokens[n - k : n]) == item.continuation_text
        if not covered and offsets is not None:
            if len(values) > n:
                end = offsets[n]  # where the first generated token starts
            elif tokens is not None and isinstance(tokens[n - 1], str):
                end = offsets[n - 1] + len(tokens[n - 1])
            else:
                end = None
            covered = end is not None and end - offsets[n - k] == len(item.continuation_text)
        if not covered:
            shown = tokens[max(0, n - k - 1) : n] if tokens is not None else offsets
            return [], (
                f"the server's last {k} prompt tokens are not the continuation "
                f"{item.continuation_text[:60]!r} (tokens {str(shown)[:200]}): its tokenizer splits "
                "the prompt otherwise than the local one; use prompt_format=tokens or set tokenizer="
            )
    chosen: list[float | None] = [None if v is None else float(v) for v in values[n - k : n]]
    for j, value in enumerate(chosen):
        if value is None and not (j == 0 and len(item.context) == start_length):
            return [], f"no log-probability for token {j + 1} of the continuation"
    return chosen, None


# -- requests ---------------------------------------------------------------------------------------
class LogprobRequests(ServerRequests):
    """Prompt log-probabilities from one server's ``/completions`` (see the module doc)."""

    def __init__(
        self,
        settings: ServerSettings,
        cache_dir: Path,
        counters: RequestCounters,
        owner: str,
        logprobs_api: str = "echo",
    ):
        super().__init__(settings, cache_dir, counters, owner)
        self.logprobs_api = logprobs_api

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/completions"

    def body(self, prompt: Sequence[int] | str) -> dict[str, Any]:
        """The request for a prompt's log-probabilities (also the cache key with the endpoint)."""
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt if isinstance(prompt, str) else list(prompt),
            "max_tokens": 1,
            "temperature": 0.0,
        }
        if self.logprobs_api == "echo":
            body.update(echo=True, logprobs=0)
        else:
            body["prompt_logprobs"] = 0
        return body

    def first_token_body(self, start: Sequence[int] | str, token: int) -> dict[str, Any]:
        """A one-token completion of ``start`` forced to ``token`` (see the module doc)."""
        return {
            "model": self.model,
            "prompt": start if isinstance(start, str) else list(start),
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": 0,
            "logit_bias": {str(token): FIRST_TOKEN_BIAS},
        }

    def send(self, client: Any, body: dict[str, Any]) -> dict[str, Any]:
        arguments = dict(body)
        extra = {"prompt_logprobs": arguments.pop("prompt_logprobs")} if "prompt_logprobs" in body else None
        response = client.completions.create(**arguments, **({"extra_body": extra} if extra else {}))
        return normalize_logprobs(response, body)

    def problem(self, record: Any) -> str | None:
        return record_problem(record)


class ServerLM:
    """Mean token NLLs of continuations from a server, for one LM ranker (see the module doc)."""

    def __init__(
        self,
        owner: str,
        settings: ServerSettings,
        tokenizer: str,
        prompt_format: str,
        logprobs_api: str,
        cache_dir: Path,
        counters: RequestCounters,
    ):
        self.tokenizer_name, self.prompt_format, self.counters = tokenizer, prompt_format, counters
        self.requests = LogprobRequests(settings, cache_dir, counters, owner, logprobs_api=logprobs_api)
        self._tokenizer: Any = None

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.tokenizer_name)
        return self._tokenizer

    @property
    def with_ids(self) -> bool:
        return self.prompt_format == "tokens"

    def prompt(self, item: Continuation) -> list[int] | str:
        return list(item.ids) if self.with_ids else item.text

    def _check_text(self, item: Continuation) -> None:
        """Text prompts: refuse one whose continuation the whole text does not end with (module
        doc); count one whose context the whole text tokenizes otherwise."""
        joint = tuple(self.tokenizer(item.text, add_special_tokens=False)["input_ids"])
        k = len(item.continuation)
        if joint[len(joint) - k :] != item.continuation:
            raise RankerError(
                f"{item.label}: read as one text, the prompt does not end with the continuation's own "
                f"{k} tokens ({item.continuation_text[:60]!r} is tokenized across its boundary), so a "
                "server tokenizing the text would score other tokens; use prompt_format=tokens"
            )
        if joint[: len(joint) - k] != item.context:
            self.counters.counts["retokenized_contexts"] += 1

    def _order(self, item: Continuation) -> tuple[Any, ...]:
        return (item.ids,) if self.with_ids else (item.text, item.ids)

    def mean_nll(self, items: Sequence[Continuation]) -> list[float]:
        """Mean token NLL of each continuation after its context (nats per token), one request
        per distinct (context, continuation), sent sorted by prompt (module doc)."""
        distinct = list({(i.context, i.continuation): i for i in items}.values())
        if not self.with_ids:
            for item in distinct:
                self._check_text(item)
        distinct.sort(key=self._order)
        start = start_tokens(self.tokenizer)
        bodies = [self.requests.body(self.prompt(i)) for i in distinct]

        def check(item: Continuation) -> Any:
            def problem(record: Any) -> str | None:
                return (
                    record_problem(record)
                    or continuation_logprobs(record, item, self.with_ids, len(start))[1]
                )

            return problem

        try:
            records = self.requests.complete(
                bodies, [i.label for i in distinct], [check(i) for i in distinct]
            )
        except RankerError as exc:
            if not self.with_ids:
                raise
            raise RankerError(
                f"{exc} (a server that takes no token ids as its prompt, e.g. llama-cpp-python's, needs "
                "prompt_format=text)"
            ) from exc
        chosen = [
            continuation_logprobs(r, i, self.with_ids, len(start))[0]
            for r, i in zip(records, distinct, strict=True)
        ]
        missing = sorted({i.continuation[0] for i, c in zip(distinct, chosen, strict=True) if c[0] is None})
        if missing:
            first = self._first_tokens(start, missing)
            for item, values in zip(distinct, chosen, strict=True):
                if values[0] is None:
                    values[0] = first[item.continuation[0]]
        self.counters.counts["loglikelihoods"] += len(distinct)
        nll = {
            (i.context, i.continuation): -math.fsum(v for v in values if v is not None) / len(values)
            for i, values in zip(distinct, chosen, strict=True)
        }
        return [nll[(i.context, i.continuation)] for i in items]

    def _first_tokens(self, start: tuple[int, ...], tokens: Sequence[int]) -> dict[int, float]:
        """log P(token | start token) for each of ``tokens``, from forced one-token completions."""
        prompt: list[int] | str = list(start) if self.with_ids else start_text(self.tokenizer)
        expected = {t: str(self.tokenizer.decode([t])) for t in tokens}

        def check(token: int) -> Any:
            def problem(record: Any) -> str | None:
                found = record_problem(record)
                if found is not None:
                    return found
                values, texts = record["logprobs"], record.get("tokens")
                if record["generated"] != 1 or len(values) != 1 or values[0] is None:
                    return "not one generated token with its log-probability"
                if texts is not None and "\ufffd" not in expected[token] and texts[0] != expected[token]:
                    return f"the server generated {texts[0]!r}, not the forced {expected[token]!r} (logit_bias ignored?)"
                if values[0] > BIASED_LOGPROB:
                    return (
                        f"the forced token's log-probability {values[0]!r} is the biased one, not the model's"
                    )
                return None

            return problem

        bodies = [self.requests.first_token_body(prompt, t) for t in tokens]
        labels = [
            f"the log-probability of the first token {expected[t]!r} after the start token" for t in tokens
        ]
        records = self.requests.complete(bodies, labels, [check(t) for t in tokens])
        self.counters.counts["first_token_requests"] += len(tokens)
        return {t: float(r["logprobs"][0]) for t, r in zip(tokens, records, strict=True)}
