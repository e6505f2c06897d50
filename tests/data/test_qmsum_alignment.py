"""Aligning QMSum's evidence with the meeting (``sourcesum.data.qmsum_alignment``): evidence
location (a repeated sentence placed by the annotators' order), spans, candidates, labels and the
tally on a small inline meeting, and mismatched files named."""

from __future__ import annotations

import pytest
from sourcesum.data.qmsum_alignment import Tally, locate_turn, parse_meeting
from sourcesum.errors import DataError


def test_a_repeated_evidence_sentence_is_placed_by_the_annotators_order():
    text = "Yeah . Okay . Yeah ."
    assert locate_turn(text, {0: "Yeah ."}) == {0: (0, 6)}
    assert locate_turn(text, {1: "Okay .", 2: "Yeah ."}) == {1: (7, 13), 2: (14, 20)}
    assert locate_turn(text, {0: "absent"}) == {0: None}


def _ev(kind: str, turn: int, index: int, content: str) -> dict:
    return {"type": kind, "turn_index": turn, "sent_index": index, "speaker": "X", "content": content}


def _meeting() -> tuple[dict, dict]:
    turns = [
        {"speaker": "A", "content": "Hello . We start ."},  # 0: outside the span
        {"speaker": "B", "content": "The budget is low , so we cut it . Agreed ?"},  # 1
        {"speaker": "C", "content": "   "},  # 2: empty, skipped
        {"speaker": "A", "content": "Yes . The colour is red ."},  # 3
    ]
    transcript = {
        "meeting_transcripts": turns,
        "general_query_list": [],
        "specific_query_list": [
            {
                "query": "What about the budget?",
                "answer": "...",
                "relevant_text_span": [["3", "3"], ["1", "3"]],
            }
        ],
    }
    ces_pes = [
        [  # summary sentence 0
            _ev("PES", 1, 0, "The budget is low ,"),
            _ev("CES", 1, 1, "so we cut it ."),
            _ev("PES", 3, 1, "The colour is red ."),
            _ev("CES", 0, 0, "Hello ."),
        ],
        [  # summary sentence 1: one evidence sentence over two candidates
            _ev("PES", 1, 1, "so we cut it . Agreed ?"),
        ],
        [],  # summary sentence 2: no evidence
    ]
    evidence = {
        "domain": "Product",
        "qmsum": {
            "general_query_list": [],
            "specific_query_list": [
                {
                    "query": "What about the budget?",
                    "tokenized_answer": ["The budget was cut.", "They agreed.", "Nothing else."],
                    "evidence": ces_pes,
                }
            ],
        },
    }
    return evidence, transcript


def test_spans_candidates_labels_and_the_tally_on_a_small_meeting():
    evidence, transcript = _meeting()
    tally = Tally()
    out = parse_meeting("M1.json", evidence, transcript, "qmsum_test", "M1", tally)
    pairs = [p for p, _, _ in out]
    assert [p.id for p in pairs] == ["M1_q0_s0", "M1_q0_s1", "M1_q0_s2"]
    # spans in the order listed ([3, 3] then [1, 3]), turn 3 once, the empty turn skipped
    assert pairs[0].sentences == (
        "Yes .",
        "The colour is red .",
        "The budget is low , so we cut it .",
        "Agreed ?",
    )
    assert pairs[0].document == "A: Yes . The colour is red .\nB: The budget is low , so we cut it . Agreed ?"
    assert pairs[0].query == "What about the budget?" and pairs[0].summary == "The budget was cut."
    assert len({p.document_key for p in pairs}) == 1 and {c for _, _, c in out} == {"M1"}
    # the strongest type a candidate overlaps: CES over PES; the outside CES is not rankable
    assert out[0][1].graded.tolist() == [0, 1, 2, 0]
    assert out[0][1].soft.tolist() == [0, 0.5, 1, 0]
    assert out[1][1].graded.tolist() == [0, 0, 1, 1]  # one evidence sentence, two candidates
    assert out[2][1].graded.tolist() == [0, 0, 0, 0]
    assert (tally.evidence, tally.outside, tally.outside_ces) == (5, 1, 1)
    assert (tally.one_candidate, tally.several_candidates) == (3, 1)
    undefined = (
        tally.pairs_no_evidence,
        tally.pairs_all_outside,
        tally.pairs_no_relevant,
        tally.pairs_no_ces,
    )
    assert undefined == (1, 0, 1, 2)


def test_mismatched_files_are_errors_naming_the_meeting():
    evidence, transcript = _meeting()
    transcript["specific_query_list"][0]["query"] = "Something else?"
    with pytest.raises(DataError, match=r"M1: specific query 0: the evidence file's query differs"):
        parse_meeting("M1.json", evidence, transcript, "qmsum_test", "M1", Tally())
    evidence, transcript = _meeting()
    transcript["specific_query_list"][0]["relevant_text_span"] = [["3", "9"]]
    with pytest.raises(DataError, match=r"relevant_text_span \['3', '9'\] is outside the 4 turns"):
        parse_meeting("M1.json", evidence, transcript, "qmsum_test", "M1", Tally())
