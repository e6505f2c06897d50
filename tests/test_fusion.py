"""Fusion of stored base scores: normalisations and fusion formulas against hand computations,
the canonical ``rankers`` parameter, refused bases, and the store contract (bases computed
under their own keys; the fusion key follows the bases' keys)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sourcesum.cli import main
from sourcesum.data import load_split
from sourcesum.errors import ParameterError, RankerError
from sourcesum.leaderboard import is_current
from sourcesum.rankers import RANKERS, create_ranker
from sourcesum.rankers.composite import normalize
from sourcesum.rankers.fusion import fuse
from sourcesum.runner import run_ranker
from sourcesum.store import ScoreStore, entry_key


def test_normalisations_match_their_formulas():
    s = np.array([3.0, 1.0, 1.0, 7.0])
    mean, std = s.mean(), math.sqrt(((s - s.mean()) ** 2).mean())
    assert normalize(s, "zscore").tolist() == pytest.approx(((s - mean) / std).tolist())
    assert normalize(s, "minmax").tolist() == pytest.approx([2 / 6, 0.0, 0.0, 1.0])
    # ranks (1 = highest, ties averaged): 2, 3.5, 3.5, 1 -> 1 - (r - 1) / 4
    assert normalize(s, "rank").tolist() == pytest.approx([0.75, 0.375, 0.375, 1.0])
    constant = np.array([2.0, 2.0, 2.0])
    assert normalize(constant, "zscore").tolist() == [0.0, 0.0, 0.0]
    assert normalize(constant, "minmax").tolist() == [0.0, 0.0, 0.0]
    assert normalize(np.array([5.0]), "rank").tolist() == [1.0]
    with pytest.raises(ParameterError, match="normalization 'l2'"):
        normalize(s, "l2")


def test_fusion_formulas_by_hand():
    scores = np.array(
        [
            [0.0, 2.0, 1.0, 0.0],  # base 1: minimum 0 twice
            [4.0, 1.0, 1.0, 9.0],
        ]
    )  # base 2
    minmax = np.array([[0.0, 1.0, 0.5, 0.0], [3 / 8, 0.0, 0.0, 1.0]])
    assert fuse(scores, "combsum", "minmax").tolist() == pytest.approx(minmax.sum(axis=0).tolist())
    hits = np.array([1, 1, 1, 1])  # sentence 0: base 2 only; 1: base 1 only; 2: base 1; 3: base 2
    assert fuse(scores, "combmnz", "minmax").tolist() == pytest.approx((hits * minmax.sum(axis=0)).tolist())
    z = np.vstack([normalize(row, "zscore") for row in scores])
    assert fuse(scores, "combsum", "zscore").tolist() == pytest.approx(z.sum(axis=0).tolist())
    ranks = np.array([[3.5, 1, 2, 3.5], [2, 3.5, 3.5, 1]])
    assert fuse(scores, "rrf", k=60).tolist() == pytest.approx((1 / (60 + ranks)).sum(axis=0).tolist())
    both = np.array([[2.0, 1.0, 0.0], [5.0, 0.0, 0.0]])  # sentence 0 retrieved by both bases
    assert fuse(both, "combmnz", "rank").tolist() == pytest.approx(
        [2 * (1 + 1), 1 * (2 / 3 + 0.5), 0 * (1 / 3 + 0.5)]
    )


def test_rankers_parameter_is_canonical():
    a = create_ranker("fusion", rankers="bm25,embedding")
    b = create_ranker("fusion", rankers=" embedding , bm25")
    c = create_ranker("fusion", rankers=json.dumps(["embedding", {"ranker": "bm25", "params": {"k1": 1.5}}]))
    assert a.get_params() == b.get_params() == c.get_params()
    assert a.get_params()["rankers"][0] == {
        "ranker": "bm25",
        "params": {"k1": 1.5, "b": 0.75, "variant": "okapi", "delta": 1.0},
    }
    assert a.label == "fusion(method=combsum, rankers=bm25+embedding)"
    d = create_ranker("fusion", rankers='[{"ranker": "random", "params": {"seed": 3}}, "lead"]', method="rrf")
    assert d.label == "fusion(method=rrf, rankers=lead+random(seed=3))"
    assert type(a).canonical_params(a.get_params()) == a.get_params()  # idempotent (is_current relies on it)


@pytest.mark.parametrize(
    "rankers, message",
    [
        ("oracle,bm25", "reference ranker"),
        ("published:perplexity", "published output"),
        ('["bm25", {"ranker": "fusion"}]', "built from other rankers"),
        ("bm25,bm25", "named twice"),
        ("nope", "unknown ranker 'nope'"),
        ("", "at least one"),
        ('[{"ranker": "random", "params": {"seed": "x"}}]', "random.seed"),
    ],
)
def test_bad_bases_are_refused(rankers, message):
    with pytest.raises(ParameterError, match=message):
        create_ranker("fusion", rankers=rankers)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"method": "combmnz"}, "non-negative normalization"),
        ({"method": "rrf", "normalization": "rank"}, "rrf uses ranks only"),
        ({"k": 10}, "k applies to method=rrf only"),
    ],
)
def test_inapplicable_parameters_are_refused(params, message):
    with pytest.raises(ParameterError, match=message):
        create_ranker("fusion", rankers="bm25,lead", **params)


def test_cli_refuses_bad_bases_with_one_line(capsys, scores_dir):
    code = main(["run", "--ranker", "fusion", "-p", "fusion.rankers=lead,oracle", "--split", "xsum_pegasus"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "oracle" in err and len(err.strip().splitlines()) == 1


def test_runner_computes_bases_under_their_own_keys_then_fuses(scores_dir):
    split = load_split("xsum_pegasus")
    store = ScoreStore(scores_dir)
    fusion = create_ranker(
        "fusion", rankers='[{"ranker": "random", "params": {"seed": 1}}, "lead"]', method="rrf", k=5
    )
    entry = run_ranker(fusion, split, store, progress=False)
    bases = [create_ranker("random", seed=1), create_ranker("lead")]
    for base in bases:
        path = store.path_for(
            base.name, split.name, entry_key(base.name, base.version, base.get_params(), split.sha256)
        )
        assert path.is_file(), path
    base_entries = [
        store.load(b.name, split.name, entry_key(b.name, b.version, b.get_params(), split.sha256))
        for b in bases
    ]
    for pair in split:
        raw = np.array([e.scores[pair.id] for e in sorted(base_entries, key=lambda e: e.ranker)])
        assert entry.scores[pair.id] == fuse(raw, "rrf", k=5).tolist()
    assert entry.version.startswith("1+") and is_current(entry, split) is None
    assert store.path_for("fusion", split.name, entry.key).is_file()


def test_fusion_key_follows_its_bases_versions(scores_dir, monkeypatch):
    split = load_split("xsum_pegasus")
    store = ScoreStore(scores_dir)
    fusion = create_ranker("fusion", rankers="lead,random")
    entry = run_ranker(fusion, split, store, progress=False)
    monkeypatch.setattr(RANKERS.get("lead"), "version", "2")
    moved = create_ranker("fusion", rankers="lead,random")
    assert moved.get_params() == fusion.get_params()
    assert moved.key_version() != entry.version
    assert "version" in is_current(entry, split)


def test_scoring_without_a_store_is_an_error():
    fusion = create_ranker("fusion", rankers="lead,random")
    with pytest.raises(RankerError, match="score store"):
        fusion.fit(load_split("xsum_pegasus").pairs)
