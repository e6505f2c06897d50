"""Tokenization shared by the lexical rankers: lower-case, word tokens, stop words out, stemmed.

Stop words are scikit-learn's English list; stemming is NLTK's Porter stemmer (no downloads).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, cast

_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1)
def _stemmer() -> Any:  # nltk's PorterStemmer (nltk is untyped)
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return cast(str, _stemmer().stem(word))


def tokenize(text: str, stem: bool = True, remove_stop_words: bool = True) -> list[str]:
    """``"The cats sat."`` -> ``["cat", "sat"]``: lower-cased alphanumeric runs, filtered, stemmed."""
    words = _WORD.findall(text.lower())
    if remove_stop_words:
        stop = _stop_words()
        words = [w for w in words if w not in stop]
    return [_stem(w) for w in words] if stem else words
