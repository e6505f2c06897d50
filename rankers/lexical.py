"""Lexical-overlap rankers: BM25 (rank-bm25), ROUGE (rouge-score) and TF-IDF cosine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sourcesum.data import Pair
from sourcesum.params import Param
from sourcesum.rankers.base import Ranker, register
from sourcesum.rankers.text import tokenize

_BM25_VARIANTS = ("okapi", "plus", "l")


@register
class BM25Ranker(Ranker):
    """Okapi BM25 (rank-bm25): the pair's sentences are the corpus, the summary the query.

    ``score(s) = sum_{t in q} idf(t) * tf(t,s) (k1+1) / (tf(t,s) + k1 (1 - b + b |s|/avgdl))``
    with IDF over the pair's sentences. ``variant``: ``okapi`` (BM25Okapi), ``plus`` (BM25+,
    lower-bounded term frequency, ``delta``) or ``l`` (BM25L). Tokens: lower-cased, stop words
    removed, Porter-stemmed.
    """

    name = "bm25"
    version = "1"
    libraries = ("rank-bm25", "nltk", "scikit-learn")
    param_specs = {
        "k1": Param(float, "term-frequency saturation", min=0.0),
        "b": Param(float, "length normalisation", min=0.0, max=1.0),
        "variant": Param(str, "okapi (BM25Okapi), plus (BM25+) or l (BM25L)", choices=_BM25_VARIANTS),
        "delta": Param(float, "term-frequency lower bound of BM25+ and BM25L", min=0.0),
    }

    def __init__(self, k1: float = 1.5, b: float = 0.75, variant: str = "okapi", delta: float = 1.0):
        self.k1, self.b, self.variant, self.delta = k1, b, variant, delta

    def score(self, pair: Pair) -> Sequence[float]:
        from rank_bm25 import BM25L, BM25Okapi, BM25Plus

        corpus = [tokenize(s) for s in pair.sentences]
        query = tokenize(pair.summary)
        if not any(corpus) or not query:
            return [0.0] * pair.n_sentences  # nothing to match: every sentence ties
        if self.variant == "okapi":
            model = BM25Okapi(corpus, k1=self.k1, b=self.b)
        elif self.variant == "plus":
            model = BM25Plus(corpus, k1=self.k1, b=self.b, delta=self.delta)
        else:
            model = BM25L(corpus, k1=self.k1, b=self.b, delta=self.delta)
        scores: list[float] = model.get_scores(query).tolist()
        return scores


class _MemoTokenizer:
    """rouge-score's default tokenizer with a per-text memo: the summary is compared with every
    sentence, and stemming dominates the cost, so each unique text is tokenized once."""

    def __init__(self, use_stemmer: bool):
        from rouge_score.tokenizers import DefaultTokenizer

        self._inner = DefaultTokenizer(use_stemmer=use_stemmer)
        self._memo: dict[str, list[str]] = {}

    def tokenize(self, text: str) -> list[str]:
        tokens = self._memo.get(text)
        if tokens is None:
            tokens = self._memo[text] = self._inner.tokenize(text)
        return tokens


class _RougeRanker(Ranker):
    """ROUGE between the summary (target) and each sentence (prediction), Google's rouge-score.

    ``measure`` picks ``fmeasure`` (default, as the paper), ``precision`` or ``recall``;
    ``use_stemmer`` is on, as in the paper. Tokens are memoised per text (same results).
    """

    rouge_type: ClassVar[str]
    version = "1"
    batch_pairs = 256

    libraries = ("rouge-score", "nltk")
    param_specs = {
        "measure": Param(str, "which ROUGE score", choices=("fmeasure", "precision", "recall")),
        "use_stemmer": Param(bool, "Porter-stem tokens (rouge-score's option)"),
    }

    def __init__(self, measure: str = "fmeasure", use_stemmer: bool = True):
        self.measure, self.use_stemmer = measure, use_stemmer
        self._scorer: Any = None  # a rouge_score RougeScorer (rouge-score is untyped)

    def score(self, pair: Pair) -> Sequence[float]:
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._scorer = rouge_scorer.RougeScorer(
                [self.rouge_type], tokenizer=_MemoTokenizer(self.use_stemmer)
            )
        return [
            getattr(self._scorer.score(pair.summary, sentence)[self.rouge_type], self.measure)
            for sentence in pair.sentences
        ]


@register
class Rouge1Ranker(_RougeRanker):
    """ROUGE-1 F-measure (unigram overlap) of each sentence with the summary (paper: ROUGE-1)."""

    name = "rouge1"
    rouge_type = "rouge1"


@register
class Rouge2Ranker(_RougeRanker):
    """ROUGE-2 F-measure (bigram overlap) of each sentence with the summary."""

    name = "rouge2"
    rouge_type = "rouge2"


@register
class RougeLRanker(_RougeRanker):
    """ROUGE-L F-measure (longest common subsequence) of each sentence with the summary."""

    name = "rougeL"
    rouge_type = "rougeL"


@register
class TfidfRanker(Ranker):
    """Cosine similarity of TF-IDF vectors (scikit-learn) of the summary and each sentence.

    ``idf="split"`` (default): IDF with every sentence of every distinct document of the split as
    one IDF document (fitted in :meth:`fit`); ``idf="document"``: IDF over the pair's own
    sentences only. Smoothed IDF ``ln((1+n)/(1+df)) + 1``, sublinear TF off, L2-normalised.
    Tokens: lower-cased, stop words removed, Porter-stemmed.
    """

    name = "tfidf"
    version = "1"
    batch_pairs = 256

    libraries = ("scikit-learn", "nltk")
    param_specs = {
        "idf": Param(
            str,
            "IDF over the split's distinct documents or the pair's sentences",
            choices=("split", "document"),
        ),
    }

    def __init__(self, idf: str = "split"):
        self.idf = idf
        self._vectorizer: Any = None

    def _new_vectorizer(self) -> Any:  # a TfidfVectorizer (scikit-learn is untyped)
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None)

    def fit(self, pairs: Sequence[Pair]) -> None:
        if self.idf == "split":
            documents = {p.document_key: p.sentences for p in pairs}
            self._vectorizer = self._new_vectorizer().fit(
                [s for sentences in documents.values() for s in sentences]
            )

    def score(self, pair: Pair) -> Sequence[float]:
        vectorizer = self._vectorizer
        if self.idf == "document" or vectorizer is None:
            vectorizer = self._new_vectorizer()
            try:
                vectorizer.fit(pair.sentences)
            except ValueError:  # every sentence is only stop words
                return [0.0] * pair.n_sentences
        matrix = vectorizer.transform([pair.summary, *pair.sentences])
        return np.asarray((matrix[1:] @ matrix[0].T).todense()).ravel().tolist()
