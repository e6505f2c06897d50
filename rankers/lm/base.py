"""Shared plumbing of the LM rankers: model options, loading, scoring pairs one document at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from sourcesum.data import Pair
from sourcesum.params import Param
from sourcesum.rankers.base import Ranker
from sourcesum.rankers.lm.inputs import Context, check_length
from sourcesum.rankers.lm.models import LoadedLM, load_lm


class LMRanker(Ranker):
    """Base of rankers that read a causal or seq2seq language model.

    Common options: ``model`` (hub name or local path; default SmolLM2-135M-Instruct, offline),
    ``device`` (auto/cuda/mps/cpu), ``dtype`` (float32/bfloat16/float16/auto) and
    ``batch_size``. ``device`` and ``batch_size`` are left out of the cache key; ``dtype`` is
    not, since it changes the scores.
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
        "template": Param(str, "causal LMs: prompt with {document} and {summary}"),
    }
    eager_attention: ClassVar[bool] = False
    batch_pairs = 8  # LM pairs are slow: save (and show progress) often

    def _set_model_options(self, model: str, device: str, dtype: str, batch_size: int) -> None:
        """Store the common options; every LM ranker's ``__init__`` calls this."""
        self.model, self.device, self.dtype, self.batch_size = model, device, dtype, batch_size

    def lm(self) -> LoadedLM:
        return load_lm(self.model, self.device, self.dtype, eager_attention=self.eager_attention)

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
