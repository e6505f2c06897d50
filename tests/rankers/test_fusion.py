"""Fusion of base rankers' scores: normalisations and fusion formulas against hand computations,
the canonical ``rankers`` parameter, refused bases, and the harness contract (the runner computes
the bases under their own keys and hands them in; the fusion key follows the bases' versions).

Runs on the synthetic dataset ``synthnews`` (tests/fixtures/synthetic) with cheap bases computed
into a temporary store: no real data is read."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sourcesum.board import is_current
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.errors import ParameterError, RankerError
from sourcesum.rankers import RANKERS, create_ranker
from sourcesum.rankers.composite import normalize
from sourcesum.rankers.context import BaseScores
from sourcesum.rankers.fusion import fuse
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_ranker, run_splits
from sourcesum.store.stores import ScoreStore

SPLIT = "synth_alpha_sys"


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
    # the configuration (no instance) is the instance's: same parameters, label and bases
    config = Configuration.of("fusion", {"rankers": " embedding , bm25"})
    assert config.params == a.get_params() and config.label == a.label
    assert Configuration.of("fusion", config.params).params == config.params
    assert [{"ranker": b.ranker, "params": b.params} for b in config.bases] == a.get_params()["rankers"]
    assert [(b.ranker, b.params) for b in Configuration.of_ranker(d).bases] == [
        ("lead", {}),
        ("random", {"seed": 3}),
    ]


@pytest.mark.parametrize(
    "rankers, message",
    [
        ("oracle,bm25", "reference ranker"),
        ("published:perplexity", "published output"),
        ('["bm25", {"ranker": "fusion"}]', "built from other rankers"),
        ('["bm25", {"ranker": "learned", "params": {"rankers": "lead"}}]', "trained on the votes"),
        ("bm25,bm25", "named twice"),
        ("nope", "unknown ranker 'nope'"),
        ("", "at least one"),
        ('[{"ranker": "random", "params": {"seed": "x"}}]', "random.seed"),
    ],
)
def test_bad_bases_are_refused(rankers, message):
    with pytest.raises(ParameterError, match=message):
        create_ranker("fusion", rankers=rankers)
    with pytest.raises(ParameterError, match=message):  # without an instance too (the board's path)
        Configuration.of("fusion", {"rankers": rankers})


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
    with pytest.raises(ParameterError, match=message):
        Configuration.of("fusion", {"rankers": "bm25,lead", **params})


def test_cli_refuses_bad_bases_with_one_line(capsys, scores_dir):
    code = main(["run", "--ranker", "fusion", "-p", "fusion.rankers=lead,oracle", "--split", SPLIT])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "oracle" in err and len(err.strip().splitlines()) == 1
    assert not list(scores_dir.rglob("*.json"))  # refused before any work


def test_runner_computes_bases_under_their_own_keys_then_fuses(scores_dir):
    split = load_split(SPLIT)
    store = ScoreStore(scores_dir)
    fusion = create_ranker(
        "fusion", rankers='[{"ranker": "random", "params": {"seed": 1}}, "lead"]', method="rrf", k=5
    )
    entry = run_ranker(fusion, split, store, progress=False)
    config = Configuration.of_ranker(fusion)
    bases = [Configuration.of("random", {"seed": 1}), Configuration.of("lead")]
    base_entries = []
    for base in bases:
        key = base.entry_key(split.name, split.sha256)
        assert store.path_for(base.ranker, split.name, key).is_file()
        base_entries.append(store.load(base.ranker, split.name, key))
    assert [b.ranker for b in config.bases] == ["lead", "random"]  # canonical order: sorted
    for pair in split:
        raw = np.array([e.scores[pair.id] for e in sorted(base_entries, key=lambda e: e.ranker)])
        assert entry.scores[pair.id] == fuse(raw, "rrf", k=5).tolist()
    assert entry.version == config.key_version(split.name) and entry.version.startswith("1+")
    assert entry.key == config.entry_key(split.name, split.sha256) and entry.label == config.label
    assert is_current(entry, split) is None
    assert store.path_for("fusion", split.name, entry.key).is_file()
    # a second run reads the entry (no base is recomputed: their files are not rewritten)
    stamps = {p: p.stat().st_mtime_ns for p in scores_dir.rglob("*.json")}
    assert run_ranker(fusion, split, store, progress=False).scores == entry.scores
    assert {p: p.stat().st_mtime_ns for p in scores_dir.rglob("*.json")} == stamps


def test_runner_fuses_several_splits_with_each_splits_bases(scores_dir):
    splits = [load_split(name) for name in dataset("synthnews").board_splits()]
    store = ScoreStore(scores_dir)
    runs = run_splits(create_ranker("fusion", rankers="bm25,rouge1"), splits, store, progress=False)
    for split, run in zip(splits, runs, strict=True):
        per_base = [
            store.load(b.ranker, split.name, b.entry_key(split.name, split.sha256)).scores
            for b in (Configuration.of("bm25"), Configuration.of("rouge1"))
        ]
        assert run.entry.split == split.name and run.entry.complete
        for pair in split:
            raw = np.array([scores[pair.id] for scores in per_base])
            assert run.entry.scores[pair.id] == fuse(raw, "combsum").tolist()


def test_fusion_key_follows_its_bases_versions(scores_dir, monkeypatch):
    split = load_split(SPLIT)
    store = ScoreStore(scores_dir)
    fusion = create_ranker("fusion", rankers="lead,random")
    entry = run_ranker(fusion, split, store, progress=False)
    before = Configuration.of("fusion", {"rankers": "lead,random"})
    assert entry.version == before.key_version(split.name)
    monkeypatch.setattr(RANKERS.get("lead"), "version", "2")
    moved = Configuration.of("fusion", {"rankers": "lead,random"})
    assert moved.params == before.params and moved.label == before.label
    assert moved.key_version(split.name) != entry.version
    assert moved.key_version(split.name).startswith("1+")  # fusion's own version is unchanged
    assert moved.entry_key(split.name, split.sha256) != entry.key
    assert "version" in is_current(entry, split)
    # the next run computes a new entry under the new key, over the base's new entry
    again = run_ranker(create_ranker("fusion", rankers="lead,random"), split, store, progress=False)
    assert again.key != entry.key and again.version == moved.key_version(split.name)
    assert is_current(again, split) is None
    lead = Configuration.of("lead")
    assert lead.key_version(split.name) == "2"
    assert store.path_for("lead", split.name, lead.entry_key(split.name, split.sha256)).is_file()
    assert store.path_for("fusion", split.name, entry.key).is_file()  # the old one is left alone


def test_fusion_key_does_not_follow_other_splits_data(monkeypatch):
    """Fusion trains on nothing: its key follows its own split's data (the entry key's checksum),
    never the other board splits' (unlike a cross-corpus trained ranker, tests/rankers/test_learned.py)."""
    ds = dataset("synthnews")
    config = Configuration.of("fusion", {"rankers": "lead,random"})
    version = config.key_version(SPLIT)
    sha = load_split(SPLIT).sha256
    real = type(ds).data_sha256
    monkeypatch.setattr(
        type(ds),
        "data_sha256",
        lambda self, spec: "0" * 64 if spec.name == "synth_beta_sys" else real(self, spec),
    )
    assert config.key_version(SPLIT) == version
    assert config.entry_key(SPLIT, sha) != config.entry_key(SPLIT, "1" * 64)


def test_scoring_without_the_bases_handed_in_is_an_error():
    fusion = create_ranker("fusion", rankers="lead,random")
    pair = load_split(SPLIT).pairs[0]
    with pytest.raises(RankerError, match="runner hands in"):
        fusion.score(pair)
    # handed in, it fuses exactly the scores it was given, and names a missing pair
    raw = np.array([[3.0, 2.0, 1.0, 0.0, 0.0], [0.5, 0.1, 0.9, 0.2, 0.3]])
    fusion.use_bases(BaseScores({SPLIT: {pair.id: raw}}, ("lead", "random")))
    assert fusion.score(pair) == fuse(raw, "combsum").tolist()
    with pytest.raises(RankerError, match="no base scores for pair"):
        fusion.score(load_split(SPLIT).pairs[1])
