"""Shared plumbing of the LM rankers: model options, loading, grouping pairs by document."""

from __future__ import annotations

from collections import OrderedDict
from typing import ClassVar, Sequence

from sourcesum.data import Pair
from sourcesum.params import Param
from sourcesum.rankers.base import Ranker
from sourcesum.rankers.lm.inputs import Context, check_length
from sourcesum.rankers.lm.models import DEFAULT_LM, LoadedLM, load_lm


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
        "dtype": Param(str, "weights and activations precision",
                       choices=("float32", "bfloat16", "float16", "auto")),
        "batch_size": Param(int, "sequences per forward pass (not in the cache key)", min=1),
        "template": Param(str, "causal LMs: prompt with {document} and {summary}"),
    }
    eager_attention: ClassVar[bool] = False
    batch_pairs = 8  # LM pairs are slow: save (and show progress) often

    def _set_model_options(self, model: str, device: str, dtype: str, batch_size: int) -> None:
        """Store the common options; every LM ranker's ``__init__`` calls this."""
        self.model, self.device, self.dtype, self.batch_size = model, device, dtype, batch_size
        self._memo: dict[tuple[str, str], Sequence[float]] = {}
        self._companions: dict[str, list[Pair]] = {}

    def lm(self) -> LoadedLM:
        return load_lm(self.model, self.device, self.dtype, eager_attention=self.eager_attention)

    def check_fits(self, context: Context, pairs: Sequence[Pair], extra: int) -> None:
        """Error naming the pair when context + ``extra`` tokens exceed the model's window."""
        config = self.lm().model.config
        limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        check_length(context, extra, limit, pairs[0].id)

    def score(self, pair: Pair) -> Sequence[float]:
        return self.score_batch([pair])[0]

    def fit(self, pairs: Sequence[Pair]) -> None:
        """Note the other main split's pairs on the same documents (see :meth:`score_batch`)."""
        from sourcesum.data import companion_pairs

        self._companions = {}
        for pair in companion_pairs(pairs):
            self._companions.setdefault(pair.document_key, []).append(pair)

    def score_batch(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """Scores per pair, computed one document at a time so pairs sharing it share work.

        The document's pairs in the other main split (XSum-PEGASUS/-Reference and
        CNN/DM-PEGASUS/-Reference share documents) are scored in the same pass and memoised
        by (document, summary), so running both splits costs little more than one.
        """
        memo, companions = self._memo, self._companions
        groups: "OrderedDict[str, list[Pair]]" = OrderedDict()
        for pair in pairs:
            if (pair.document_key, pair.summary) not in memo:
                groups.setdefault(pair.document_key, []).append(pair)
        for key, members in groups.items():
            extra = [c for c in companions.get(key, []) if (key, c.summary) not in memo]
            todo = list({p.summary: p for p in members + extra}.values())
            for pair, scores in zip(todo, self.score_document(todo)):
                memo[(key, pair.summary)] = scores
        return [memo[(p.document_key, p.summary)] for p in pairs]

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        """Scores for pairs that share one document (same sentences, different summaries)."""
        raise NotImplementedError
