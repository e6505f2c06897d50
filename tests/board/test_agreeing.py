"""Agreeing configurations (sourcesum.board.agreeing): rows of one ranker whose scores agree
within its reproduction tolerance on every split are shown once, named with both names (or both
default names where that is too long), the other labels kept; anything else stays apart."""

from __future__ import annotations

from sourcesum.board.agreeing import merge_agreeing
from sourcesum.board.model import Row
from sourcesum.store.entry import ScoreEntry

SCORES = {"a": [0.5, 0.25, 0.0], "b": [1.0, 0.0]}


def _row(ranker: str, params: dict, label: str, scores: dict, name: str = "", splits=("s1", "s2")) -> Row:
    row = Row(label, ranker, params, reference=False, name=name or label)
    for split in splits:
        row.entries[split] = ScoreEntry(
            ranker, "1", params, label, split, "0" * 64, len(scores), dict(scores)
        )
    return row


def test_rows_whose_scores_agree_are_shown_once_with_both_labels():
    plain = _row("bm25", {}, "bm25", SCORES)
    same = _row("bm25", {"k1": 1.2}, "bm25(k1=1.2)", SCORES)
    near = _row("bm25", {"k1": 2.0}, "bm25(k1=2)", {**SCORES, "b": [1.0, 1e-12]})  # bm25 is exact
    fewer = _row("bm25", {"b": 0.5}, "bm25(b=0.5)", SCORES, splits=("s1",))
    other = _row("tfidf", {}, "tfidf", SCORES)
    kept, notes = merge_agreeing([same, near, other, plain, fewer])
    assert kept == [near, other, plain, fewer]  # the shorter label stays, in the rows' order
    assert plain.same_as == ("bm25(k1=1.2)",) and plain.name == "bm25 = bm25(k1=1.2)"
    assert near.same_as == () and near.name == "bm25(k1=2)" and fewer.same_as == ()
    assert notes == [
        "bm25(k1=1.2) is shown as bm25: every score within 0 on every split (the row 'bm25 = bm25(k1=1.2)')"
    ]


def test_agreement_within_the_rankers_tolerance_and_default_names_when_names_are_long():
    """attention declares a reproduction tolerance of 1e-5; declared names too long to join
    give way to the default names."""
    base = _row("attention", {}, "attention", SCORES, name="attention (SmolLM2-135M-Instruct, declared)")
    ties = _row("attention", {"overflow": "ties"}, "attention(overflow=ties)", {**SCORES, "b": [1.0, 5e-6]})
    kept, notes = merge_agreeing([base, ties])
    assert kept == [base] and base.same_as == ("attention(overflow=ties)",) and len(notes) == 1
    assert base.name == "attention = attention(overflow=ties)"
    apart = _row("attention", {"overflow": "ties"}, "attention(overflow=ties)", {**SCORES, "b": [1.0, 2e-5]})
    base.name, base.same_as = "attention", ()
    assert merge_agreeing([base, apart])[0] == [base, apart]
