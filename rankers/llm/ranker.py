"""``llm_judge``: a prompted LLM rates (pointwise) or ranks (listwise) a pair's sentences.

*Pointwise*: one prompt per sentence (a template with ``{summary}`` and ``{sentence}``); the
score is the expected rating ``E[r]`` under the model's next-token distribution
(:mod:`sourcesum.rankers.llm.scoring`), not its greedy text, so ties are rare; a pair none of
whose sentences gets a rating is an error naming it, never stored as all LO. *Listwise*: one
prompt per pair listing the numbered sentences; the greedy answer is parsed as a ranking (every
sentence number in order of first mention, e.g. ``[3] > [1] > [2]``): the sentence named first
scores ``n``, the next ``n - 1``, ...; sentences never named score 0 (tied, counted); an answer
naming no sentence gives every sentence 0 (a counted fallback).

Pinned default: ``mode=pointwise, template=v2, scale=0-9, model=SmolLM2-135M-Instruct``
(local, chat template). See docs/rankers/llm-judge.md for why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sourcesum import paths
from sourcesum.data import Pair
from sourcesum.errors import ParameterError, RankerError
from sourcesum.params import Param
from sourcesum.rankers.base import Ranker, register
from sourcesum.rankers.llm.prompts import PRESETS, canonical_template, load_template
from sourcesum.rankers.llm.scale import Scale
from sourcesum.rankers.llm.scoring import Diagnostics
from sourcesum.rankers.lm.dtypes import resolve_dtype_name
from sourcesum.rankers.lm.weights import DEFAULT_LM, PACKAGED_MODELS, weights_identity

REQUESTS_FOLDER = Path("llm_judge") / "requests"
"""Where, under the runner's workspace (the score store's root), server responses are cached."""


def parse_ranking(answer: str, n: int) -> list[int]:
    """0-based sentence indices in order of first mention of ``1..n`` in ``answer``."""
    order: list[int] = []
    for match in re.finditer(r"\d+", answer):
        index = int(match.group()) - 1
        if 0 <= index < n and index not in order:
            order.append(index)
    return order


@register
class LLMJudgeRanker(Ranker):
    """Prompted LLM judge: expected rating per sentence (pointwise) or a parsed ranking (listwise)."""

    name = "llm_judge"
    version = "1"
    reproduction_tolerance = 2e-4
    """The local backend's float32 logits differ in their last bits with the batch layout, the
    prefix cache's chunking and the CPU's kernels: on AMD EPYC, 60 pairs of the committed entries
    (15 per SourceSum split) were reproduced within 3.4e-5 of the expected 0-9 rating, and a
    tiny model's pairs scored together and one at a time within 2.3e-6."""
    label_params = ("model",)
    runtime_params = (
        "device",
        "batch_size",
        "api_key_env",
        "concurrency",
        "max_retries",
        "timeout",
        "backoff",
        "price_input",
        "price_output",
    )
    libraries = ("torch", "transformers", "openai")
    requires = {"lm": ("torch", "transformers"), "llm": ("openai",)}
    batch_pairs = 8
    param_specs = {
        "mode": Param(
            str,
            "pointwise (a rating per sentence) or listwise (one ranking per pair)",
            choices=("pointwise", "listwise"),
        ),
        "template": Param(
            str, f"auto (v2 pointwise, listwise listwise), a preset ({', '.join(PRESETS)}) or a template file"
        ),
        "scale": Param(str, "pointwise rating scale LO-HI (0-9, 0-100, 0-1.00, ...)"),
        "model": Param(str, "local: HF causal LM name or path; openai: the server's model name"),
        "backend": Param(
            str, "local (in-process) or openai (any OpenAI-compatible server)", choices=("local", "openai")
        ),
        "chat": Param(
            bool, "prompt as the user turn of the chat template (else plain text / the /completions endpoint)"
        ),
        "min_prob": Param(
            float, "rating-tree nodes below this probability are not expanded", min=0.0, max=1.0
        ),
        "base_url": Param(str, "openai: the server's base URL, e.g. http://127.0.0.1:8000/v1", optional=True),
        "top_logprobs": Param(int, "openai: candidates per position", min=1, max=20),
        "dtype": Param(
            str,
            "local: weights and activations precision",
            choices=("float32", "bfloat16", "float16", "auto"),
        ),
        "device": Param(
            str, "local: where to run (not in the cache key)", choices=("auto", "cpu", "cuda", "mps")
        ),
        "batch_size": Param(int, "local: sequences per forward pass (not in the cache key)", min=1),
        "api_key_env": Param(str, "openai: environment variable holding the API key"),
        "concurrency": Param(int, "openai: requests in flight (not in the cache key)", min=1),
        "max_retries": Param(int, "openai: retries per request on 429/5xx/timeouts/malformed", min=0),
        "timeout": Param(float, "openai: seconds per request", min=0.001),
        "backoff": Param(float, "openai: base of the exponential backoff, seconds", min=0.0),
        "price_input": Param(
            float, "openai: price per million prompt tokens (cost report)", min=0.0, optional=True
        ),
        "price_output": Param(float, "openai: price per million completion tokens", min=0.0, optional=True),
    }

    def __init__(
        self,
        mode: str = "pointwise",
        template: str = "auto",
        scale: str = "0-9",
        model: str = DEFAULT_LM,
        backend: str = "local",
        chat: bool = True,
        min_prob: float = 1e-4,
        base_url: str | None = None,
        top_logprobs: int = 20,
        dtype: str = "float32",
        device: str = "auto",
        batch_size: int = 8,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 4,
        max_retries: int = 6,
        timeout: float = 60.0,
        backoff: float = 1.0,
        price_input: float | None = None,
        price_output: float | None = None,
    ):
        self.mode, self.scale, self.model, self.backend, self.chat = mode, scale, model, backend, chat
        self.min_prob, self.base_url, self.top_logprobs = min_prob, base_url, top_logprobs
        # the key holds the precision actually used, never "auto" (servers choose their own)
        self.dtype = resolve_dtype_name(dtype, device) if backend == "local" else dtype
        self.device, self.batch_size, self.api_key_env = device, batch_size, api_key_env
        self.concurrency, self.max_retries, self.timeout, self.backoff = (
            concurrency,
            max_retries,
            timeout,
            backoff,
        )
        self.price_input, self.price_output = price_input, price_output
        listwise = mode == "listwise"
        preset = ("listwise" if listwise else "v2") if template == "auto" else template
        self._template, canonical = load_template(preset, listwise)
        self.template = "auto" if template == "auto" else canonical
        self._scale = Scale.parse(scale)
        if backend == "openai" and not base_url:
            raise ParameterError("llm_judge backend=openai needs base_url (e.g. http://127.0.0.1:8000/v1)")
        self.diagnostics = Diagnostics()
        self._store_root: Path | None = None
        self._backend: Any = None

    # -- plumbing -------------------------------------------------------------------------------

    @classmethod
    def requirements(cls, params: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
        """``backend=local``: torch and transformers (the ``lm`` extra; a packaged GGUF model
        also gguf); ``backend=openai``: the ``llm`` extra's client alone."""
        if params["backend"] == "openai":
            return {"llm": cls.requires["llm"]}
        return {"lm": (*cls.requires["lm"], *(("gguf",) if params["model"] in PACKAGED_MODELS else ()))}

    @classmethod
    def canonicalize(cls, params: dict[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
        """The local precision resolved (never keyed as ``auto``; servers choose their own) and
        a template file pinned by its content (``PATH#sha256=HEX``; presets by name)."""
        out = dict(params)
        if params["backend"] == "local":
            out["dtype"] = resolve_dtype_name(params["dtype"], runtime.get("device", "auto"))
        out["template"] = canonical_template(params["template"])
        return out

    def use_workspace(self, folder: Path) -> None:
        """Server responses are cached under ``folder / llm_judge / requests``."""
        if folder != self._store_root:
            self._store_root, self._backend = Path(folder), None

    def backend_impl(self) -> Any:
        if self._backend is None:
            if self.backend == "local":
                from sourcesum.rankers.llm.backends.local import LocalBackend

                self._backend = LocalBackend(self.model, self.device, self.dtype, self.batch_size, self.chat)
            else:
                from sourcesum.rankers.llm.backends.openai_compat import OpenAIBackend
                from sourcesum.rankers.llm.backends.server_requests import ServerSettings

                root = self._store_root or paths.user_scores_dir()
                settings = ServerSettings(
                    self.base_url or "",
                    self.model,
                    self.api_key_env,
                    self.concurrency,
                    self.max_retries,
                    self.timeout,
                    self.backoff,
                    self.price_input,
                    self.price_output,
                )
                self._backend = OpenAIBackend(
                    settings, self.chat, self.top_logprobs, root / REQUESTS_FOLDER, self.diagnostics
                )
        return self._backend

    def provenance(self) -> dict[str, str]:
        """``backend=openai``: the model id the server reported (on this run's responses, else
        its ``/models``), marked unverified: ``{"server_model": "<id> (reported by the server,
        unverified)"}``; nothing when it reports none. ``backend=local``: the weights' identity
        (:func:`sourcesum.rankers.lm.weights.weights_identity`, as the LM rankers record it)."""
        if self.backend == "openai":
            ids = self.backend_impl().server_models()
            if not ids:
                return {}
            return {"server_model": f"{', '.join(ids)} (reported by the server, unverified)"}
        return weights_identity(self.model)

    def report(self) -> dict[str, Any]:
        """How the scores computed since the last call were obtained (see
        :class:`~sourcesum.rankers.llm.scoring.Diagnostics`); the counters restart."""
        out = self.diagnostics.report()
        self.diagnostics.reset()
        return out

    # -- scoring --------------------------------------------------------------------------------

    def prompts(self, pair: Pair) -> list[str]:
        """The pointwise prompts of ``pair``'s sentences (or its one listwise prompt)."""
        if self.mode == "listwise":
            return [self._template.render(pair.summary, self._scale, sentences=pair.sentences)]
        return [self._template.render(pair.summary, self._scale, sentence=s) for s in pair.sentences]

    def score_batch(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """Pointwise: ``E[r]`` per sentence (else its parsed answer, else the scale's LO, counted);
        a pair none of whose sentences got a rating is a :class:`RankerError` naming it (its
        scores would all be LO, indistinguishable from real ratings once stored)."""
        if self.mode == "listwise":
            return self._listwise(pairs)
        backend, scale, diag = self.backend_impl(), self._scale, self.diagnostics
        if self.backend == "local":
            out: list[Sequence[float]] = []
            for pair in pairs:
                ratings = backend.rate(self.prompts(pair), scale, self.min_prob, pair.id)
                out.append(self._pair_scores(pair, [diag.rate(scale, r, None) for r in ratings]))
            return out
        prompts = [self.prompts(p) for p in pairs]
        labels = [f"pair {p.id} sentence {k + 1}" for p in pairs for k in range(p.n_sentences)]
        flat = backend.rate([q for group in prompts for q in group], scale, self.min_prob, labels)
        out, start = [], 0
        for pair, group in zip(pairs, prompts, strict=True):
            values = [diag.rate(scale, rating, text) for rating, text in flat[start : start + len(group)]]
            out.append(self._pair_scores(pair, values))
            start += len(group)
        return out

    def _pair_scores(self, pair: Pair, values: Sequence[float | None]) -> list[float]:
        """The scale's LO for unrated sentences (counted), unless no sentence is rated."""
        if values and all(v is None for v in values):
            raise RankerError(
                f"ranker {self.label} failed on pair {pair.id}: none of its {len(values)} sentences got a "
                f"valid rating on the scale {self.scale} (no probability on a rating, and no rating in "
                "the answer), so it has no scores; check the template, scale and model (or the server)"
            )
        lo = float(self._scale.lo)
        return [lo if v is None else v for v in values]

    def _listwise(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        backend, diag = self.backend_impl(), self.diagnostics
        prompts = [self.prompts(p)[0] for p in pairs]
        budget = [6 * p.n_sentences + 8 for p in pairs]
        if self.backend == "local":
            answers = [backend.generate(q, b, p.id) for q, b, p in zip(prompts, budget, pairs, strict=True)]
        else:  # per pair: the request is its cache key
            answers = backend.generate(prompts, budget, [f"pair {p.id}" for p in pairs])
        out: list[Sequence[float]] = []
        for pair, answer in zip(pairs, answers, strict=True):
            n = pair.n_sentences
            order = parse_ranking(answer, n)
            diag.counts["pairs"] += 1
            if not order:
                diag.counts["listwise_fallback"] += 1
            elif len(order) < n:
                diag.counts["parsed_partial"] += 1
                diag.counts["unranked_sentences"] += n - len(order)
            else:
                diag.counts["parsed_full"] += 1
            scores = [0.0] * n
            for position, index in enumerate(order):
                scores[index] = float(n - position)
            out.append(scores)
        return out
