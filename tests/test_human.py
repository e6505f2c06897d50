"""Human agreement: annotators and rankers against the same held-out-annotator references."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.data import load_split
from sourcesum.human import HUMAN_LABEL, HumanAgreement, agreement_per_pair, coverage
from sourcesum.measures import AP, EXPECTED_AP, NDCG
from sourcesum.metrics import average_precision, expected_average_precision, ndcg
from sourcesum.rankers import create_ranker

MEASURES = (NDCG, AP, EXPECTED_AP)


def _by_hand(pair, scores=None):
    """Per measure, the mean over held-out annotators of the value against the others' votes."""
    votes = np.array(pair.votes)
    k = votes.shape[1]
    values = {m.name: [] for m in MEASURES}
    for a in range(k):
        others = votes.sum(axis=1) - votes[:, a]
        binary = (others >= min(2, k - 1)).astype(float)
        ranked = votes[:, a] if scores is None else scores
        values["nDCG"].append(ndcg(others, ranked))
        values["AP"].append(average_precision(binary, ranked))
        values["AP(ties=expected)"].append(expected_average_precision(binary, ranked))
    return {name: np.nanmean(v) if np.isfinite(v).any() else np.nan for name, v in values.items()}


@pytest.mark.parametrize("name", ["xsum_pegasus", "cnn_reference"])
def test_annotators_and_rankers_scored_against_the_same_references(name):
    split = load_split(name)
    lead = create_ranker("lead")
    scores = {p.id: lead.score(p) for p in split}
    human = agreement_per_pair(split, None, MEASURES)
    ranker = agreement_per_pair(split, scores, MEASURES)
    checked = 0
    for pair in split.pairs[:60]:
        if len({len(v) for v in pair.votes}) != 1:
            assert human.loc[pair.id].isna().all() and ranker.loc[pair.id].isna().all()
            continue
        for frame, expected in ((human, _by_hand(pair)), (ranker, _by_hand(pair, scores[pair.id]))):
            for measure in MEASURES:
                assert frame.loc[pair.id, measure.name] == pytest.approx(
                    expected[measure.name], abs=1e-12, nan_ok=True
                )
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("name", ["xsum_pegasus", "xsum_reference", "cnn_pegasus", "cnn_reference"])
def test_coverage_counts_every_edge_case(name):
    split = load_split(name)
    report = coverage(split, MEASURES)
    sizes = [{len(v) for v in p.votes} for p in split]
    assert report["pairs_mixed_annotator_counts"] == sum(len(s) > 1 for s in sizes)
    assert report["pairs_one_annotator"] == sum(s == {1} for s in sizes)
    assert report["pairs_two_annotators"] == sum(s == {2} for s in sizes)
    assert report["pairs_three_or_more"] == sum(len(s) == 1 and min(s) >= 3 for s in sizes)
    uniform = [p for p, s in zip(split, sizes, strict=True) if len(s) == 1 and min(s) >= 2]
    assert report["references"] == sum(len(p.votes[0]) for p in uniform)
    empty_binary = 0
    for pair in uniform:
        votes = np.array(pair.votes)
        k = votes.shape[1]
        empty_binary += sum(((votes.sum(1) - votes[:, a]) >= min(2, k - 1)).sum() == 0 for a in range(k))
    assert report["references_without_relevant"]["AP"] == empty_binary
    human = agreement_per_pair(split, None, MEASURES)
    assert (
        report["pairs_left_out"]["AP"]
        == int(human["AP"].isna().sum())
        >= report["pairs_mixed_annotator_counts"]
    )


def test_ceiling_only_when_every_row_is_significantly_below():
    table = HumanAgreement(measures=(NDCG,), labels=[HUMAN_LABEL, "a", "b"])
    import pandas as pd

    for label, value in ((HUMAN_LABEL, 0.9), ("a", 0.5), ("b", 0.95)):
        table.per_pair[(label, "s")] = pd.DataFrame({"nDCG": [value, value]})
    table.p_vs_human[("a", "s", NDCG)] = 0.001
    table.p_vs_human[("b", "s", NDCG)] = 0.2
    assert table.versus_human("a", "s", NDCG) == -1 and table.versus_human("b", "s", NDCG) == 0
    assert not table.is_ceiling("s", NDCG)
    table.p_vs_human[("b", "s", NDCG)] = 0.01  # significant, but above the human
    assert table.versus_human("b", "s", NDCG) == 1 and not table.is_ceiling("s", NDCG)
    table.per_pair[("b", "s")] = pd.DataFrame({"nDCG": [0.4, 0.4]})
    assert table.is_ceiling("s", NDCG)
