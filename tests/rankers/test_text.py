"""Tokenization (sourcesum.rankers.text): lower-cased, stemmed, stop words dropped."""

from __future__ import annotations

from sourcesum.rankers.text import tokenize


def test_tokenize_lowercases_stems_and_drops_stop_words():
    assert tokenize("The Cats were running to the parks!") == ["cat", "run", "park"]
