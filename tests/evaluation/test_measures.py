"""Measures (sourcesum.evaluation.measures): names round-trip, and the measure table gives names,
keys, relevance and expectations."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.evaluation import metrics
from sourcesum.evaluation.measures import (
    AP,
    DEFAULT_MEASURES,
    EXPECTED_AP,
    NDCG,
    Measure,
    parse_measure,
    parse_measures,
)
from sourcesum.evaluation.metrics import Ranking, pad

TOL = 1e-12


def test_measure_names_round_trip():
    for name in [
        "nDCG",
        "nDCG@10",
        "AP",
        "P@3",
        "R@5",
        "RR",
        "Spearman",
        "nDCG@10(gain=binary)",
        "AP(ties=expected)",
    ]:
        assert parse_measure(name).name == name
    assert parse_measure("ndcg@5").name == "nDCG@5"
    assert parse_measure("AP(ties=block)") == parse_measure("AP")
    assert parse_measure("AP").expectation == parse_measure("AP(ties=expected)")
    assert parse_measure("nDCG").expectation == parse_measure("nDCG")
    from sourcesum.errors import UnknownNameError

    for bad in ["MRR", "AP@3", "P", "nDCG@0", "AP(gain=binary)", "nDCG(ties=expected)", "AP(ties=mean)"]:
        with pytest.raises(UnknownNameError):
            parse_measure(bad)


def test_the_measure_table_gives_names_keys_relevance_and_expectations():
    assert DEFAULT_MEASURES == (NDCG, AP)
    assert (NDCG.display_name, NDCG.json_key, NDCG.relevance) == ("NDCG", "ndcg", "graded")
    assert (AP.display_name, AP.json_key, AP.relevance) == ("MAP", "map", "binary")
    assert (EXPECTED_AP.name, EXPECTED_AP.display_name, EXPECTED_AP.json_key) == (
        "AP(ties=expected)",
        "MAP (ties expected)",
        "map_ties_expected",
    )
    assert Measure.of("AP", ties="block") == AP and Measure.of("nDCG", gain="linear") == NDCG
    exponential = Measure.of("nDCG", 5, gain="exponential")
    assert exponential.name == "nDCG@5(gain=exponential)" and exponential.option("gain") == "exponential"
    assert exponential.display_name == exponential.name
    # JSON keys: one lower-case style, the paper's measures as ndcg and map
    assert exponential.json_key == "ndcg_at_5_gain_exponential"
    keys = {m: parse_measure(m).json_key for m in ("nDCG@10", "P@3", "R@2", "RR", "Spearman")}
    assert keys == {
        "nDCG@10": "ndcg_at_10",
        "P@3": "p_at_3",
        "R@2": "r_at_2",
        "RR": "rr",
        "Spearman": "spearman",
    }
    assert (NDCG.default_tie_rule, AP.default_tie_rule) == ("expected", "block, scikit-learn")
    assert parse_measure("Spearman").expectation is None
    assert parse_measures("nDCG@3,AP(ties=expected), P@2") == (
        Measure.of("nDCG", 3),
        EXPECTED_AP,
        Measure.of("P", 2),
    )
    # a measure computes with its family's kernel: AP(ties=expected) is the expected-AP kernel
    rel, mask = pad([[1, 0, 1], [0, 1]])
    sc, _ = pad([[2, 2, 1], [1, 1]])
    ranking = Ranking.from_scores(sc, mask)
    np.testing.assert_allclose(
        EXPECTED_AP.compute(ranking, rel),
        [
            metrics.expected_average_precision([1, 0, 1], [2, 2, 1]),
            metrics.expected_average_precision([0, 1], [1, 1]),
        ],
        atol=TOL,
    )
