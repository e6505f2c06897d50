"""The sentence splitter (``sourcesum.data.splitting``): its rule, and its known limits."""

from __future__ import annotations

import pytest
from sourcesum.data.splitting import sentence_spans, split_sentences


@pytest.mark.parametrize(
    "text,sentences",
    [
        ("Nice .", ["Nice ."]),
        ("So . The mode has three outputs . The", ["So .", "The mode has three outputs .", "The"]),
        ("right ? Because {pause} if you want", ["right ?", "Because {pause} if you want"]),
        # word-less pieces (markers, stray punctuation) join the sentence before, or after
        ("Plate ? {vocalsound}", ["Plate ? {vocalsound}"]),
        ("{vocalsound} Okay . Yeah .", ["{vocalsound} Okay .", "Yeah ."]),
        ("Okay . . .", ["Okay . . ."]),
        ("{vocalsound}", ["{vocalsound}"]),
        ("", []),
        # untokenized committee transcripts: abbreviations and dotted acronyms do not end one
        (
            "Yes. Thank you, Mr. Chair. That's sufficient.",
            ["Yes.", "Thank you, Mr. Chair.", "That's sufficient."],
        ),
        ('In the U.S. they said "no." Then e.g. this.', ['In the U.S. they said "no."', "Then e.g. this."]),
        ("What? Really! Yes", ["What?", "Really!", "Yes"]),
        # a detached quote closes the sentence holding an odd number of quotes
        ('He said " go home . " Then left .', ['He said " go home . "', "Then left ."]),
        ('Fine . " Next one . "', ["Fine .", '" Next one . "']),
    ],
)
def test_the_splitter_rule(text, sentences):
    assert split_sentences(text) == sentences
    spans = sentence_spans(text)
    assert all(text[s:e] == want for (s, e), want in zip(spans, sentences, strict=True))
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_known_limits_of_the_splitter():
    # a sentence ending in an abbreviation or an acronym is not split there
    assert split_sentences("We met at 3 p.m. Then we left.") == ["We met at 3 p.m. Then we left."]
    # a turn cut off with no final punctuation is one sentence
    assert split_sentences("and then {disfmarker} so we") == ["and then {disfmarker} so we"]
