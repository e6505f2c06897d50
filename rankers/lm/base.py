"""Shared plumbing of the LM rankers: model options, loading, scoring pairs one document at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from sourcesum.data import Pair
from sourcesum.params import Param, signature_params
from sourcesum.rankers.base import Ranker
from sourcesum.rankers.lm.inputs import DEFAULT_TEMPLATE, Context, check_length
from sourcesum.rankers.lm.models import DEFAULT_LM, LoadedLM, load_lm, resolve_dtype_name, weights_identity


class LMRanker(Ranker):
    """Base of rankers that read a causal or seq2seq language model.

    The options every LM ranker takes live here, in :meth:`__init__`: ``model`` (hub name or
    local path; default SmolLM2-135M-Instruct, offline), ``template`` (causal prompt; rankers
    with ``uses_template = False`` take none), ``device`` (auto/cuda/mps/cpu), ``dtype``
    (float32/bfloat16/float16/auto) and ``batch_size`` (default ``default_batch_size``). A
    subclass's ``__init__`` takes its own keywords plus ``**options`` for these, and
    :meth:`parameters` lists both. ``device`` and ``batch_size`` are left out of the cache key;
    ``dtype`` is not, since it changes the scores: ``auto`` is resolved when the ranker is made
    (:func:`~sourcesum.rankers.lm.models.resolve_dtype_name`), so the key and label hold the
    precision actually used, never ``auto``.
    """

    label_params = ("model",)
    runtime_params = ("device", "batch_size")
    libraries = ("torch", "transformers", "gguf")
    param_specs = {
        "model": Param(str, "Hugging Face causal or seq2seq LM name or path"),
        "device": Param(str, "where to run (not in the cache key)", choices=("auto", "cpu", "cuda", "mps")),
        "dtype": Param(
            str, "weights and activations precision", choices=("float32", "bfloat16", "float16", "auto")
        ),
        "batch_size": Param(int, "sequences per forward pass (not in the cache key)", min=1),
        "template": Param(str, "causal LMs: prompt with {document} and {summary}", multiline=True),
    }
    eager_attention: ClassVar[bool] = False
    linears_only: ClassVar[bool] = True
    """Reduced ``dtype`` for the Linear layers only, the rest float32 (see
    :mod:`sourcesum.rankers.lm.precision`); False: the whole model in ``dtype``."""
    batch_pairs = 8  # LM pairs are slow: save (and show progress) often
    verify_sample = 8  # `sourcesum verify` recomputes this many pairs per entry by default
    default_batch_size: ClassVar[int] = 8
    uses_template: ClassVar[bool] = True

    def __init__(
        self,
        model: str = DEFAULT_LM,
        template: str = DEFAULT_TEMPLATE,
        device: str = "auto",
        dtype: str = "float32",
        batch_size: int | None = None,
    ):
        if not self.uses_template and template != DEFAULT_TEMPLATE:
            raise ValueError(f"{self.name} takes no template")
        self.model, self.device = model, device
        self.batch_size = int(batch_size) if batch_size is not None else self.default_batch_size
        self.dtype = resolve_dtype_name(dtype, device)
        if self.uses_template:
            self.template = template

    @classmethod
    def canonicalize(cls, params: dict[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
        """``dtype=auto`` resolved for the ``device`` it would run on (never keyed as auto)."""
        return {**params, "dtype": resolve_dtype_name(params["dtype"], runtime.get("device", "auto"))}

    @classmethod
    def parameters(cls) -> dict[str, tuple[Param, Any]]:
        """The subclass's own ``__init__`` keywords and the common options of :meth:`__init__`."""
        common = signature_params(LMRanker, cls.param_specs)
        if not cls.uses_template:
            del common["template"]
        common["batch_size"] = (common["batch_size"][0], cls.default_batch_size)
        return {"model": common.pop("model"), **signature_params(cls, cls.param_specs), **common}

    def lm(self) -> LoadedLM:
        return load_lm(
            self.model,
            self.device,
            self.dtype,
            eager_attention=self.eager_attention,
            linears_only=self.linears_only,
        )

    def provenance(self) -> dict[str, str]:
        """The identity of the weights ``model`` loads, without loading them
        (:func:`~sourcesum.rankers.lm.models.weights_identity`): for the offline default, the
        package version and the GGUF file's sha256 (the dequantized cache is verified against
        them on load)."""
        return weights_identity(self.model)

    def check_fits(self, context: Context, pairs: Sequence[Pair], extra: int) -> None:
        """Error naming the pair when context + ``extra`` tokens exceed the model's window."""
        config = self.lm().model.config
        limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        check_length(context, extra, limit, pairs[0].id)

    def score(self, pair: Pair) -> Sequence[float]:
        return self.score_batch([pair])[0]

    def score_batch(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """Scores per pair, one document at a time, so the pairs handed over together share work.

        Pairs with the same document (same ``document_key`` and sentences; the runner hands
        over whole document groups, possibly from several splits) go to one
        :meth:`score_document` call, and a summary repeated on a document is computed once.
        Nothing is kept between calls.
        """
        groups: dict[tuple[str, tuple[str, ...]], list[Pair]] = {}
        for pair in pairs:
            groups.setdefault((pair.document_key, pair.sentences), []).append(pair)
        by_summary: dict[tuple[str, tuple[str, ...], str], Sequence[float]] = {}
        for key, members in groups.items():
            unique = list({p.summary: p for p in members}.values())
            for pair, scores in zip(unique, self.score_document(unique), strict=True):
                by_summary[(*key, pair.summary)] = scores
        return [by_summary[(p.document_key, p.sentences, p.summary)] for p in pairs]

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """Scores for pairs that share one document (same sentences, different summaries)."""
        raise NotImplementedError
