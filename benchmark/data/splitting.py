"""A small, documented rule-based sentence splitter for transcripts (QMSum's meeting turns).

The rule (:func:`sentence_spans`): a sentence ends after a run of sentence-final punctuation
(``.``, ``?``, ``!``, ``…``), with any closing quotes or brackets attached to it (``."``,
``?)``), when whitespace or the end of the text follows. Three refinements:

1. **abbreviations** do not end a sentence: a token (the text since the last whitespace) that is
   one of :data:`ABBREVIATIONS` (``Mr.``, ``Dr.``, ``e.g.``...) or a dotted acronym of single
   letters (``U.S.``, ``a.m.``);
2. **a detached closing quote** (the tokenized AMI/ICSI transcripts write ``place . "``) joins
   the sentence before it when that sentence holds an odd number of ``"`` (the quote it closes);
3. **pieces with no word** (no letter or digit outside curly-brace markers such as
   ``{vocalsound}``, ``{gap}``, and no other text: ``{vocalsound}``, ``.``) are merged into the
   sentence before them (into the one after at the start of a text), so a turn's trailing noise
   marker is not a candidate of its own.

Known limits (it is a regex, not a model): a sentence that ends in an abbreviation or a dotted
acronym (``... at 3 p.m. Then``) is not split there; a lowercase continuation after ``?``/``!``
is split (``what ? he said``); ellipses ``...`` end a sentence; text with no final punctuation
(a turn cut off by ``{disfmarker}``) is one sentence however long; a quote that opens right after
a sentence end with an odd count before it is taken as closing. QMSum's own evidence annotators
split more finely (at some commas and disfluency markers), so one of their sentences is usually
inside one of ours, and several of theirs may share one of ours (the QMSum data card reports how
often).

Spans are ``(start, end)`` character offsets into the text, stripped of surrounding whitespace,
in order and non-overlapping; :func:`split_sentences` returns their text.
"""

from __future__ import annotations

import re

__all__ = ["ABBREVIATIONS", "sentence_spans", "split_sentences"]

ABBREVIATIONS = frozenset(
    {
        "mr.",
        "mrs.",
        "ms.",
        "mx.",
        "dr.",
        "prof.",
        "hon.",
        "rev.",
        "st.",
        "mt.",
        "jr.",
        "sr.",
        "messrs.",
        "mmes.",
        "vs.",
        "approx.",
        "dept.",
        "fig.",
        "cf.",
    }
)
"""Tokens (lowercased) ending in a period that do not end a sentence."""

_END = re.compile(r"[.?!\u2026]+[\"'\u201d\u2019)\]]*(?=\s|$)")
_ACRONYM = re.compile(r"(?:[A-Za-z]\.){2,}")
_MARKER = re.compile(r"\{[^{}]*\}")
_WORD = re.compile(r"\w")
_OPENERS = "\"'(\u201c\u2018["


def _is_abbreviation(token: str) -> bool:
    bare = token.lstrip(_OPENERS)
    return bare.lower() in ABBREVIATIONS or _ACRONYM.fullmatch(bare) is not None


def _has_word(piece: str) -> bool:
    return _WORD.search(_MARKER.sub(" ", piece)) is not None


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _raw_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    skip_to = 0
    for match in _END.finditer(text):
        end = match.end()
        if end <= skip_to:
            continue
        token_start = max(text.rfind(" ", 0, match.start()), text.rfind("\n", 0, match.start())) + 1
        token = text[token_start:end]
        if token[:1] not in ".?!\u2026" and _is_abbreviation(token):
            continue
        # a detached closing quote: `` . "`` after a sentence with an odd number of quotes
        rest = re.match(r"\s+\"(?=\s|$)", text[end:])
        if rest is not None and text[start:end].count('"') % 2 == 1:
            end += rest.end()
            skip_to = end
        spans.append((start, end))
        start = end
    spans.append((start, len(text)))
    stripped = [_strip(text, s, e) for s, e in spans]
    return [(s, e) for s, e in stripped if e > s]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` as ``(start, end)`` offsets (module docstring: the rule)."""
    merged: list[tuple[int, int]] = []
    pending: int | None = None  # start of word-less pieces at the front, awaiting a sentence
    for start, end in _raw_spans(text):
        if _has_word(text[start:end]):
            merged.append((pending if pending is not None else start, end))
            pending = None
        elif merged:
            merged[-1] = (merged[-1][0], end)
        elif pending is None:
            pending = start
    if pending is not None:  # nothing but markers and punctuation: one piece
        merged.append(_strip(text, pending, len(text)))
    return merged


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (:func:`sentence_spans`), as strings."""
    return [text[s:e] for s, e in sentence_spans(text)]
