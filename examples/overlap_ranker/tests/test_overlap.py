"""The example plugin: its formula on a hand-made pair, its typed parameters, its entry point."""

from __future__ import annotations

import pytest
from sourcesum.data import Pair
from sourcesum.errors import ParameterError
from sourcesum.rankers import RANKERS, create_ranker
from sourcesum_overlap import OverlapRanker

SENTENCES = (
    "The weather was pleasant on Monday.",  # no summary word
    "The council approved a new budget for schools.",  # council, approv, budget, school
    "Schools will receive more money.",  # school
)
SUMMARY = "Council approves school budget."  # council, approv, school, budget


def pair() -> Pair:
    return Pair(
        id="hand__0",
        split="hand",
        corpus="test",
        model="test",
        original_id="hand",
        summary_idx=0,
        sentences=SENTENCES,
        summary=SUMMARY,
        document=" ".join(SENTENCES),
        reference_summary=SUMMARY,
    )  # inputs only: a ranker never sees labels


def test_recall_is_the_share_of_summary_words_in_the_sentence():
    assert OverlapRanker().score(pair()) == pytest.approx([0 / 4, 4 / 4, 1 / 4])


def test_jaccard_divides_by_the_union():
    # sentence 2: {council, approv, new, budget, school} ∪ summary = 5 words; sentence 3: {school,
    # receiv, money} ∪ summary = 6 words
    assert OverlapRanker(measure="jaccard").score(pair()) == pytest.approx([0, 4 / 5, 1 / 6])


def test_lead_weight_mixes_in_the_position_prior():
    scores = OverlapRanker(lead_weight=0.5).score(pair())
    assert scores == pytest.approx([0.5 * 0 + 0.5 * 1, 0.5 * 1 + 0.5 * 2 / 3, 0.5 * 0.25 + 0.5 * 1 / 3])
    lead_order = OverlapRanker(lead_weight=1.0).score(pair())
    assert lead_order == sorted(lead_order, reverse=True)


def test_entry_point_registers_it_with_typed_parameters():
    # Loaded through the installed package's entry point (`pip install -e examples/overlap_ranker`).
    assert RANKERS.get("overlap") is OverlapRanker
    ranker = create_ranker("overlap", measure="jaccard", lead_weight="0.25")
    assert (ranker.measure, ranker.lead_weight) == ("jaccard", 0.25)
    assert ranker.label == "overlap(lead_weight=0.25, measure=jaccard)"
    with pytest.raises(ParameterError, match="overlap.lead_weight"):
        create_ranker("overlap", lead_weight="2")
    with pytest.raises(ParameterError, match="overlap.measure"):
        create_ranker("overlap", measure="f1")
