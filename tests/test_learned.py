"""Learning to rank: no leakage under either protocol (permuted votes leave the scores of the
pairs that must not see them bit-identical, and do change the others), folds grouped by
document, features by their formulas, the inner CV, LambdaMART, explain, and the key."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from sourcesum import data, paths
from sourcesum.cli import main
from sourcesum.data import Split, load_split
from sourcesum.errors import ParameterError
from sourcesum.rankers import create_ranker
from sourcesum.rankers.learned import C_GRID, L1_GRID, document_folds, length_features, position_features
from sourcesum.store import ScoreStore, StoreStack

BASES = "bm25,rouge1"  # committed entries: no base is computed here


@pytest.fixture
def store(tmp_path):
    """A temporary store over the committed one (the base rankers' committed entries)."""
    return StoreStack(
        [ScoreStore(tmp_path / "scores"), ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False)]
    )


def scores_of(ranker, store, split: Split) -> dict[str, list[float]]:
    ranker.store = store
    ranker.fit(split.pairs)
    return {pair.id: list(ranker.score(pair)) for pair in split}


def permuted(split: Split, seed: int, only: set[str] | None = None) -> Split:
    """``split`` with each pair's votes shuffled across its sentences (pairs in ``only``, or all);
    every shuffled pair's votes really change."""
    rng = np.random.default_rng(seed)
    pairs = []
    for pair in split:
        votes = pair.votes
        if only is None or pair.id in only:
            for _ in range(100):
                order = rng.permutation(pair.n_sentences)
                if [votes[i] for i in order] != list(votes):
                    break
            votes = tuple(votes[i] for i in order)
        pairs.append(dataclasses.replace(pair, votes=votes))
    return Split(split.name, split.path, split.sha256, tuple(pairs))


def patch_splits(monkeypatch, names: set[str], seed: int) -> None:
    """Make ``data.load_split`` return vote-permuted copies of the splits in ``names``."""
    real = load_split
    monkeypatch.setattr(
        data, "load_split", lambda name: permuted(real(name), seed) if name in names else real(name)
    )


@pytest.mark.slow  # fits on whole splits
def test_cross_corpus_scores_never_see_the_evaluated_corpus(store, monkeypatch):
    xsum = load_split("xsum_pegasus")
    before = scores_of(create_ranker("learned", rankers=BASES), store, xsum)
    # every vote of the evaluated corpus permuted: the pairs scored and their companion split
    patch_splits(monkeypatch, {"xsum_pegasus", "xsum_reference"}, seed=1)
    after = scores_of(create_ranker("learned", rankers=BASES), store, permuted(xsum, seed=1))
    assert after == before  # bit-identical floats
    # control: permuting the training corpus's votes does change them
    monkeypatch.undo()
    patch_splits(monkeypatch, {"cnn_pegasus", "cnn_reference"}, seed=1)
    control = scores_of(create_ranker("learned", rankers=BASES), store, xsum)
    assert control != before


@pytest.mark.slow  # fits on whole splits
def test_kfold_scores_of_a_fold_never_see_its_votes(store):
    split = load_split("xsum_reference")
    ranker_args = {"rankers": BASES, "protocol": "kfold"}
    before = scores_of(create_ranker("learned", **ranker_args), store, split)
    folds = document_folds([p.document_key for p in split], 5, 0)
    held = {p.id for p, f in zip(split, folds, strict=True) if f == 2}
    after = scores_of(create_ranker("learned", **ranker_args), store, permuted(split, seed=7, only=held))
    assert {i: after[i] for i in held} == {i: before[i] for i in held}
    others = [i for i in before if i not in held]
    assert any(after[i] != before[i] for i in others)  # the other folds did train on those votes


def test_folds_group_documents_and_follow_the_seed():
    split = load_split("cnn_pegasus")
    documents = [p.document_key for p in split]
    folds = document_folds(documents, 5, 0)
    for document in set(documents):
        assert len({f for d, f in zip(documents, folds, strict=True) if d == document}) == 1
    per_fold = np.bincount([folds[documents.index(d)] for d in set(documents)], minlength=5)
    assert per_fold.max() - per_fold.min() <= 1  # documents dealt round-robin
    assert (document_folds(documents, 5, 0) == folds).all()
    assert (document_folds(documents, 5, 1) != folds).any()


def test_position_and_length_features():
    assert position_features(3).tolist() == [[0.0, 1.0, 1.0], [0.5, 0.0, 0.5], [1.0, 0.0, 1 / 3]]
    assert position_features(1).tolist() == [[0.0, 1.0, 1.0]]
    lengths = length_features(["a b c", "a", "a b c d e"])
    assert lengths[:, 0].tolist() == pytest.approx(np.log1p([3, 1, 5]).tolist())
    words = np.array([3, 1, 5.0])
    assert lengths[:, 1].tolist() == pytest.approx(((words - words.mean()) / words.std()).tolist())


@pytest.mark.slow  # fits on whole splits
def test_inner_cv_chooses_the_best_grid_value_and_explain_shows_the_weights(store):
    ranker = create_ranker("learned", rankers=BASES)
    ranker.store = store
    [model] = ranker.explain(load_split("cnn_reference").pairs)
    assert model["trained_on"] == ["xsum_pegasus", "xsum_reference"] and model["pairs"] == 238
    assert [(row["C"], row["l1_ratio"]) for row in model["cv"]] == [(c, l1) for c in C_GRID for l1 in L1_GRID]
    best = max(model["cv"], key=lambda row: row["objective"])
    assert best.get("selected") and model["C"] == best["C"]
    assert set(model["weights"]) == {
        "bm25:zscore",
        "rouge1:zscore",
        "position:relative",
        "position:first",
        "position:reciprocal",
        "length:log_words",
        "length:z_words",
        "(intercept)",
    }
    fixed = create_ranker("learned", rankers=BASES, C=1.0, l1_ratio=0.0, features="")
    fixed.store = store
    [model] = fixed.explain(load_split("cnn_reference").pairs)
    assert (
        model["cv"] == []
        and model["C"] == 1.0
        and model["l1_ratio"] == 0.0
        and set(model["weights"]) == {"bm25:zscore", "rouge1:zscore", "(intercept)"}
    )


@pytest.mark.slow  # fits on whole splits
def test_lambdamart_is_deterministic_and_reports_gain_shares(store):
    split = load_split("xsum_pegasus")
    args = {"rankers": BASES, "model": "lambdamart", "trees": 30}
    first = scores_of(create_ranker("learned", **args), store, split)
    from sourcesum.rankers import learned

    learned._FITTED.clear()
    assert scores_of(create_ranker("learned", **args), store, split) == first
    ranker = create_ranker("learned", **args)
    ranker.store = store
    [model] = ranker.explain(split.pairs)
    assert sum(model["weights"].values()) == pytest.approx(1.0)
    assert model["trained_on"] == ["cnn_pegasus", "cnn_reference"]


def test_key_covers_protocol_and_training_data(store):
    cross = create_ranker("learned", rankers=BASES)
    kfold = create_ranker("learned", rankers=BASES, protocol="kfold")
    assert cross.key_version() != kfold.key_version()
    assert cross.label == "learned(model=logistic, protocol=cross-corpus, rankers=bm25+rouge1)"
    assert create_ranker("learned", rankers="rouge1 ,bm25").key_version() == cross.key_version()


@pytest.mark.parametrize(
    "params, message",
    [
        ({"trees": 10}, "model=lambdamart only"),
        ({"model": "lambdamart", "C": 1.0}, "model=logistic only"),
        ({"model": "lambdamart", "l1_ratio": 1.0}, "model=logistic only"),
        ({"l1_ratio": 0.5}, "learned.l1_ratio"),
        ({"features": "position,colour"}, "unknown group 'colour'"),
        ({"rankers": "published:perplexity"}, "published output"),
    ],
)
def test_bad_parameters(params, message):
    with pytest.raises(ParameterError, match=message):
        create_ranker("learned", **{"rankers": BASES, **params})


@pytest.mark.slow  # fits on whole splits
def test_cli_explain(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(tmp_path / "scores"))
    assert main(["explain", "learned", "-p", f"learned.rankers={BASES}", "--split", "xsum_pegasus"]) == 0
    out = capsys.readouterr().out
    assert "fitted on cnn_pegasus + cnn_reference (973 pairs)" in out and "<- chosen" in out
    assert "bm25:zscore" in out and "position:reciprocal" in out
    assert (
        main(["explain", "learned", "-p", f"learned.rankers={BASES}", "--split", "xsum_pegasus", "--json"])
        == 0
    )
    record = json.loads(capsys.readouterr().out)["explanations"][0]
    assert record["split"] == "xsum_pegasus" and record["models"][0]["weights"]["bm25:zscore"] != 0
    assert main(["explain", "bm25"]) == 2
    assert "fits no model" in capsys.readouterr().err


@pytest.mark.slow  # fits on whole splits
def test_board_explains_the_protocol_under_the_results(store, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))  # the statistics memo
    from sourcesum.leaderboard import collect_declared, read_declaration
    from sourcesum.render import render_markdown
    from sourcesum.runner import run_ranker

    declaration = tmp_path / "board.toml"
    declaration.write_text(
        f'[[rows]]\nranker = "lead"\n\n[[rows]]\nranker = "learned"\n'
        f'params = {{ rankers = "{BASES}", C = 1.0, l1_ratio = 0.0 }}\n'
    )
    ranker = create_ranker("learned", rankers=BASES, C=1.0, l1_ratio=0.0)
    for name in data.main_splits():
        run_ranker(ranker, load_split(name), store, progress=False)
    board = collect_declared(read_declaration(declaration), store, resamples=200)
    text = render_markdown(board)
    results = text.split("## Results")[1].split("## Human agreement")[0]
    assert "- `learned`: trained on the votes" in results and "`protocol=cross-corpus`" in results
    assert (
        "learned(C=1.0, l1_ratio=0.0, model=logistic, protocol=cross-corpus, rankers=bm25+rouge1)" in results
    )
