"""Shared plumbing of the LM rankers: model options, loading, scoring pairs one document at a time."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sourcesum import paths
from sourcesum.data import Pair
from sourcesum.errors import ParameterError, RankerError
from sourcesum.params import Param, signature_params
from sourcesum.rankers.base import Ranker
from sourcesum.rankers.device import resolve_device
from sourcesum.rankers.lm.dtypes import resolve_dtype_name
from sourcesum.rankers.lm.inputs import (
    DEFAULT_TEMPLATE,
    LOGPROBS_APIS,
    PROMPT_FORMATS,
    Context,
    WindowOverflow,
    check_length,
)
from sourcesum.rankers.lm.loading import LoadedLM, load_lm
from sourcesum.rankers.lm.matmul import MATMUL_CHOICES, favoured_path, onednn_problem
from sourcesum.rankers.lm.weights import DEFAULT_LM, PACKAGED_MODELS, weights_identity

if TYPE_CHECKING:
    from sourcesum.rankers.llm.backends.server_requests import RequestCounters
    from sourcesum.rankers.lm.server import Continuation, ServerLM

BACKENDS = ("local", "openai")
OVERFLOWS = ("error", "ties")
UNKEYED_DEFAULTS: dict[str, Any] = {
    "backend": "local",
    "prompt_format": "tokens",
    "tokenizer": None,
    "matmul": "default",
    "overflow": "error",
}
"""Keyed parameters left out of the canonical parameters (hence of keys and labels) at these
values, their defaults: the entries computed before they existed keep their keys."""

ServerPlan = tuple[list["Continuation"], Callable[[Sequence[float]], list[Sequence[float]]]]
"""What a document's scores need from a server: the log-likelihoods (continuations), and how
their mean NLLs (in that order) become the pairs' scores."""


def degenerate_server_scores(
    label: str, base_url: str, pair: Pair, scores: Sequence[float], nll: Sequence[float]
) -> None:
    """Refuse what no language model answers: log-probabilities all exactly 0 (every
    continuation's mean NLL 0), or the same score for every sentence of a pair whose sentences
    differ (the server ignored the context). Either is a :class:`RankerError` naming the pair
    and the server, never an all-ties entry."""
    why = ""
    if nll and all(value == 0.0 for value in nll):
        why = "every log-probability it returned is exactly 0"
    elif len(set(pair.sentences)) > 1 and len(set(scores)) == 1:
        why = f"every sentence gets the same score ({scores[0]!r}): its log-probabilities ignore the context"
    if why:
        raise RankerError(
            f"ranker {label} failed on pair {pair.id}: the server at {base_url} answers no language "
            f"model would: {why}; check the server and its model"
        )


class LMRanker(Ranker):
    """Base of rankers that read a causal or seq2seq language model.

    The options every LM ranker takes live here, in :meth:`__init__`: ``model`` (hub name or
    local path; default SmolLM2-135M-Instruct, offline), ``template`` (causal prompt; rankers
    with ``uses_template = False`` take none), ``device`` (auto/cuda/mps/cpu), ``dtype``
    (float32/bfloat16/float16/auto), ``matmul`` (default/onednn/auto: which kernels run the
    Linear layers, :mod:`~sourcesum.rankers.lm.matmul`) and ``batch_size`` (default
    ``default_batch_size``). A subclass's ``__init__`` takes its own keywords plus ``**options``
    for these, and :meth:`parameters` lists both. ``device`` and ``batch_size`` are left out of
    the cache key; ``dtype`` and ``matmul`` are not, since they change the scores: ``auto`` is
    resolved when the ranker is made (:func:`~sourcesum.rankers.lm.dtypes.resolve_dtype_name`,
    :func:`~sourcesum.rankers.lm.matmul.favoured_path`), so the key and label hold the precision
    and path actually used, never ``auto``; ``matmul=default`` is left out of them.

    ``overflow`` is the context-window policy: ``error`` (default, left out of keys) stops at the
    first pair whose input exceeds the model's window, naming it; ``ties`` (keyed, so it shows in
    the label) gives every candidate of such a pair the score 0, one tie group (its NDCG is the
    expectation over the orderings of its candidates, its MAP scikit-learn's value for one tie
    group, the share of relevant candidates), and counts those pairs in
    :meth:`report` (``overflow_pairs``). Whether a pair fits depends on it alone: the document and
    its own summary, never on the pairs scored with it.

    ``backend=openai`` computes the same log-likelihoods on an OpenAI-compatible server
    (:mod:`sourcesum.rankers.lm.server`; rankers with an empty :attr:`server_refusal` only):
    ``model`` is then the server's model name, ``base_url`` its address, ``tokenizer`` the local
    tokenizer that makes the token ids (default: ``model``'s), ``prompt_format`` whether ids or
    their text are sent, ``logprobs_api`` how the prompt's log-probabilities are asked for, and
    ``api_key_env``, ``concurrency``, ``max_retries``, ``timeout``, ``backoff`` as for
    ``llm_judge``. ``backend``, ``prompt_format`` and ``tokenizer`` are keyed, but left out of the
    canonical parameters at their defaults (:attr:`unkeyed_defaults`); the others, ``base_url``
    included (the shards of a split may run on several servers and merge into one entry), are
    runtime parameters. ``dtype`` under ``backend=openai`` names the precision the server was
    started with (not checked; ``auto`` kept as is).
    """

    label_params = ("model",)
    runtime_params = (
        "device",
        "batch_size",
        "base_url",
        "logprobs_api",
        "api_key_env",
        "concurrency",
        "max_retries",
        "timeout",
        "backoff",
    )
    libraries = ("torch", "transformers", "gguf")
    requires = {"lm": ("torch", "transformers")}
    param_specs = {
        "model": Param(
            str, "Hugging Face causal or seq2seq LM name or path (openai: the server's model name)"
        ),
        "device": Param(str, "where to run (not in the cache key)", choices=("auto", "cpu", "cuda", "mps")),
        "dtype": Param(
            str, "weights and activations precision", choices=("float32", "bfloat16", "float16", "auto")
        ),
        "matmul": Param(
            str,
            "kernels of the Linear layers: default (torch's BLAS), onednn (CPU, float32), auto (chosen by CPU and libraries)",
            choices=MATMUL_CHOICES,
        ),
        "overflow": Param(
            str,
            "pairs longer than the model's window: error (stop, naming the pair) or ties (every candidate scores 0, counted)",
            choices=OVERFLOWS,
            unscorable_policy=True,
        ),
        "batch_size": Param(int, "sequences per forward pass (not in the cache key)", min=1),
        "template": Param(str, "causal LMs: prompt with {document} and {summary}", multiline=True),
        "backend": Param(
            str,
            "local (in-process) or openai (an OpenAI-compatible server's /completions: vLLM, llama-cpp-python)",
            choices=BACKENDS,
        ),
        "base_url": Param(
            str,
            "openai: the server's base URL, e.g. http://127.0.0.1:8000/v1 (not in the cache key)",
            optional=True,
        ),
        "prompt_format": Param(
            str,
            "openai: send the local engine's token ids (tokens) or their text (text: servers that take no ids)",
            choices=PROMPT_FORMATS,
        ),
        "tokenizer": Param(
            str,
            "openai: the local tokenizer that makes the token ids (name or path; default: model)",
            optional=True,
        ),
        "logprobs_api": Param(
            str,
            "openai: echo=true with logprobs, or vLLM's prompt_logprobs (not in the cache key)",
            choices=LOGPROBS_APIS,
        ),
        "api_key_env": Param(str, "openai: environment variable holding the API key"),
        "concurrency": Param(int, "openai: requests in flight (not in the cache key)", min=1),
        "max_retries": Param(int, "openai: retries per request on 429/5xx/timeouts/malformed", min=0),
        "timeout": Param(float, "openai: seconds per request", min=0.001),
        "backoff": Param(float, "openai: base of the exponential backoff, seconds", min=0.0),
    }
    eager_attention: ClassVar[bool] = False
    linears_only: ClassVar[bool] = True
    """Reduced ``dtype`` for the Linear layers only, the rest float32 (see
    :mod:`sourcesum.rankers.lm.precision`); False: the whole model in ``dtype``."""
    batch_pairs = 8  # LM pairs are slow: save (and show progress) often
    verify_sample = 8  # `sourcesum verify` recomputes this many pairs per entry by default
    default_batch_size: ClassVar[int] = 8
    uses_template: ClassVar[bool] = True
    server_refusal: ClassVar[str] = (
        "it reads the model's internals, which a server's completions do not return"
    )
    needs_gradients: ClassVar[bool] = False
    """True: the ranker back-propagates through the model, which ``matmul=onednn`` cannot."""
    """Why ``backend=openai`` is refused (empty: it is supported; see :meth:`server_problem`)."""
    unkeyed_defaults: ClassVar[Mapping[str, Any]] = UNKEYED_DEFAULTS
    """Parameters left out of :meth:`get_params` (so of the key and the label) when they have
    these values: added after entries were committed, which keep their keys."""

    def __init__(
        self,
        model: str = DEFAULT_LM,
        template: str = DEFAULT_TEMPLATE,
        device: str = "auto",
        dtype: str = "float32",
        batch_size: int | None = None,
        matmul: str = "default",
        overflow: str = "error",
        backend: str = "local",
        base_url: str | None = None,
        prompt_format: str = "tokens",
        tokenizer: str | None = None,
        logprobs_api: str = "echo",
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 4,
        max_retries: int = 6,
        timeout: float = 60.0,
        backoff: float = 1.0,
    ):
        if not self.uses_template and template != DEFAULT_TEMPLATE:
            raise ValueError(f"{self.name} takes no template")
        self.model, self.device = model, device
        self.batch_size = int(batch_size) if batch_size is not None else self.default_batch_size
        self.backend, self.base_url, self.prompt_format = backend, base_url, prompt_format
        self.tokenizer, self.logprobs_api, self.api_key_env = tokenizer, logprobs_api, api_key_env
        self.concurrency, self.max_retries, self.timeout, self.backoff = (
            concurrency,
            max_retries,
            timeout,
            backoff,
        )
        # the key holds the precision actually used, never "auto" (servers choose their own)
        self.dtype = resolve_dtype_name(dtype, device) if backend == "local" else dtype
        self.matmul = type(self).resolve_matmul(matmul, backend, device, self.dtype)
        self.overflow, self._overflowed = overflow, 0
        type(self).check_overflow(overflow, backend)
        if self.uses_template:
            self.template = template
        if backend == "openai":
            refusal = type(self).server_problem(vars(self))
            if refusal:
                raise ParameterError(f"ranker {self.name} cannot use backend=openai: {refusal}")
            if not base_url:
                raise ParameterError(
                    f"{self.name} backend=openai needs base_url (e.g. http://127.0.0.1:8000/v1)"
                )
        self._store_root: Path | None = None
        self._server: ServerLM | None = None
        self._counters: RequestCounters | None = None

    @classmethod
    def requirements(cls, params: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
        """torch and transformers (the ``lm`` extra; a packaged GGUF model also gguf, which
        dequantizes it), and under ``backend=openai`` the ``llm`` extra's client too (the local
        tokenizer still makes the token ids)."""
        lm = (*cls.requires["lm"], *(("gguf",) if params["model"] in PACKAGED_MODELS else ()))
        return {"lm": lm, **({"llm": ("openai",)} if params["backend"] == "openai" else {})}

    @classmethod
    def check_overflow(cls, overflow: str, backend: str) -> None:
        """``overflow`` other than ``error`` is for the local backend (a server applies its own limit)."""
        if overflow != "error" and backend != "local":
            raise ParameterError(
                f"parameter {cls.name}.overflow={overflow} is for backend=local only (a server applies its own limit)"
            )

    @classmethod
    def resolve_matmul(cls, matmul: str, backend: str, device: str, dtype: str) -> str:
        """The path ``matmul`` names for this ranker (``auto``: :func:`favoured_path`, or
        ``default`` for rankers that need gradients); error where ``onednn`` cannot run."""
        if backend != "local":
            if matmul == "onednn":
                raise ParameterError(f"parameter {cls.name}.matmul=onednn is for backend=local only")
            return "default"
        if matmul == "default":
            return matmul
        device = resolve_device(device)
        if matmul == "auto":
            return "default" if cls.needs_gradients else favoured_path(device, dtype)
        if matmul == "onednn":
            problem = (
                "it has no backward pass, which this ranker needs"
                if cls.needs_gradients
                else onednn_problem(device, dtype)
            )
            if problem:
                raise ParameterError(f"ranker {cls.name} cannot use matmul=onednn: {problem}")
        return matmul

    @classmethod
    def server_problem(cls, params: Mapping[str, Any]) -> str:
        """Why these parameters cannot run on a server (empty: they can): :attr:`server_refusal`."""
        return cls.server_refusal

    @classmethod
    def canonicalize(cls, params: dict[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
        """``dtype=auto`` resolved for the ``device`` it would run on (never keyed as auto);
        ``backend=local`` refuses the server's keyed parameters off their defaults;
        ``backend=openai`` refuses what a server cannot compute, keeps ``dtype`` as given and
        writes ``tokenizer`` equal to ``model`` as none; then :attr:`unkeyed_defaults` at their
        defaults are left out."""
        out = dict(params)
        if out.get("backend", "local") == "local":
            for name in ("prompt_format", "tokenizer"):
                if out.get(name, UNKEYED_DEFAULTS[name]) != UNKEYED_DEFAULTS[name]:
                    raise ParameterError(f"parameter {cls.name}.{name} is for backend=openai only")
            out["dtype"] = resolve_dtype_name(params["dtype"], runtime.get("device", "auto"))
            out["matmul"] = cls.resolve_matmul(
                params.get("matmul", "default"), "local", runtime.get("device", "auto"), out["dtype"]
            )
        else:
            cls.check_overflow(out.get("overflow", "error"), out.get("backend", "local"))
            out["matmul"] = cls.resolve_matmul(
                params.get("matmul", "default"), "openai", "auto", str(out.get("dtype"))
            )
            refusal = cls.server_problem(params)
            if refusal:
                raise ParameterError(f"ranker {cls.name} cannot use backend=openai: {refusal}")
            if out.get("tokenizer") == out["model"]:
                out["tokenizer"] = None
        for name, default in cls.unkeyed_defaults.items():
            if out.get(name, default) == default:
                out.pop(name, None)
        return out

    @classmethod
    def read_parameters(cls) -> dict[str, tuple[Param, Any]]:
        """The subclass's own ``__init__`` keywords and the common options of :meth:`__init__`."""
        common = signature_params(LMRanker, cls.param_specs)
        if not cls.uses_template:
            del common["template"]
        common["batch_size"] = (common["batch_size"][0], cls.default_batch_size)
        return {"model": common.pop("model"), **signature_params(cls, cls.param_specs), **common}

    def lm(self) -> LoadedLM:
        if self.backend != "local":
            raise RankerError(f"{self.label}: backend={self.backend} loads no local model")
        return load_lm(
            self.model,
            self.device,
            self.dtype,
            eager_attention=self.eager_attention,
            linears_only=self.linears_only,
            matmul=self.matmul,
        )

    def provenance(self) -> dict[str, str]:
        """The identity of the weights ``model`` loads, without loading them
        (:func:`~sourcesum.rankers.lm.weights.weights_identity`): for the offline default, the
        package version and the GGUF file's sha256 (the dequantized cache is verified against
        them on load). ``backend=openai``: the model id the server reports, marked unverified
        (as ``llm_judge`` records it; nothing when it reports none), and the identity of the
        files the local ``tokenizer`` is read from."""
        if self.backend == "openai":
            out: dict[str, str] = {}
            ids = self.server().requests.server_models()
            if ids:
                out["server_model"] = f"{', '.join(ids)} (reported by the server, unverified)"
            out["tokenizer"] = weights_identity(self.tokenizer or self.model)["weights"]
            return out
        return weights_identity(self.model)

    # -- backend=openai -----------------------------------------------------------------------------
    def use_workspace(self, folder: Path) -> None:
        """``backend=openai``: server responses are cached under ``folder / <name> / requests``."""
        if folder != self._store_root:
            self._store_root, self._server = Path(folder), None

    def server(self) -> ServerLM:
        """The server backend (``backend=openai``), made on first use."""
        if self._server is None:
            from sourcesum.rankers.llm.backends.server_requests import RequestCounters, ServerSettings
            from sourcesum.rankers.lm.server import ServerLM

            if self._counters is None:
                self._counters = RequestCounters()
            root = self._store_root or paths.user_scores_dir()
            settings = ServerSettings(
                self.base_url or "",
                self.model,
                self.api_key_env,
                self.concurrency,
                self.max_retries,
                self.timeout,
                self.backoff,
            )
            self._server = ServerLM(
                self.name,
                settings,
                self.tokenizer or self.model,
                self.prompt_format,
                self.logprobs_api,
                root / self.name / "requests",
                self._counters,
            )
        return self._server

    def report(self) -> dict[str, Any]:
        """``backend=openai``: the requests since the last call (``requests``, ``cache_hits``,
        ``retries_<cause>``, ``prompt_tokens``, ``loglikelihoods``, ...); the counters restart.
        ``backend=local``: nothing."""
        out: dict[str, Any] = {}
        if self._overflowed:
            out["overflow_pairs"], self._overflowed = self._overflowed, 0
        if self._counters is not None:
            out.update(self._counters.report())
            self._counters.reset()
        return out

    def server_plan(self, pairs: Sequence[Pair]) -> ServerPlan:
        """The log-likelihoods the scores of ``pairs`` (one document) need, and how their mean
        NLLs become the scores (``backend=openai``)."""
        raise NotImplementedError

    # -- scoring ------------------------------------------------------------------------------------
    def check_fits(self, context: Context, pairs: Sequence[Pair], extras: Sequence[int]) -> None:
        """Error naming the first pair whose context + its own ``extras`` tokens (e.g. its
        summary's) exceed the model's window."""
        config = self.lm().model.config
        limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        for pair, extra in zip(pairs, extras, strict=True):
            check_length(context, extra, limit, pair.id)

    def score(self, pair: Pair) -> Sequence[float]:
        return self.score_batch([pair])[0]

    def score_batch(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """Scores per pair, one document at a time, so the pairs handed over together share work.

        Pairs with the same document (same ``document_key`` and sentences; the runner hands
        over whole document groups, possibly from several splits) go to one
        :meth:`score_document` call, and a summary repeated on a document is computed once.
        Nothing is kept between calls. ``backend=openai``: every document's
        :meth:`server_plan`, then all their requests at once.
        """
        groups: dict[tuple[str, tuple[str, ...]], list[Pair]] = {}
        for pair in pairs:
            groups.setdefault((pair.document_key, pair.sentences), []).append(pair)
        by_summary: dict[tuple[str, tuple[str, ...], str], Sequence[float]] = {}
        if self.backend == "openai":
            self._score_on_server(groups, by_summary)
            return [by_summary[(p.document_key, p.sentences, p.summary)] for p in pairs]
        for key, members in groups.items():
            unique = list({p.summary: p for p in members}.values())
            for pair, scores in zip(unique, self._score_within_window(unique), strict=True):
                by_summary[(*key, pair.summary)] = scores
        return [by_summary[(p.document_key, p.sentences, p.summary)] for p in pairs]

    def _score_within_window(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """:meth:`score_document`, under the ``overflow`` policy: with ``ties``, the pair the
        window error names scores all ties (counted) and the others are scored together again,
        so each pair's fate is its own and the pairs that fit still share their document's work."""
        try:
            return self.score_document(pairs)
        except WindowOverflow as exc:
            if self.overflow == "error" or not any(p.id == exc.pair_id for p in pairs):
                raise
            named = exc.pair_id
        rest = [p for p in pairs if p.id != named]
        self._overflowed += len(pairs) - len(rest)
        scored = iter(self._score_within_window(rest) if rest else [])
        return [[0.0] * len(p.sentences) if p.id == named else next(scored) for p in pairs]

    def _score_on_server(
        self,
        groups: Mapping[tuple[str, tuple[str, ...]], list[Pair]],
        by_summary: dict[tuple[str, tuple[str, ...], str], Sequence[float]],
    ) -> None:
        plans = []
        for key, members in groups.items():
            unique = list({p.summary: p for p in members}.values())
            plans.append((key, unique, self.server_plan(unique)))
        server = self.server()
        nll = server.mean_nll([item for _, _, (items, _) in plans for item in items])
        at = 0
        for key, unique, (items, finish) in plans:
            scores = finish(nll[at : at + len(items)])
            at += len(items)
            for pair, values in zip(unique, scores, strict=True):
                degenerate_server_scores(self.label, server.requests.base_url, pair, values, nll)
                by_summary[(*key, pair.summary)] = values

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """Scores for pairs that share one document (same sentences, different summaries)."""
        raise NotImplementedError
