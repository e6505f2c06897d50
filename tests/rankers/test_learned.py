"""Learning to rank (sourcesum.rankers.learned): no leakage under either protocol (permuted votes
leave the scores of the pairs that must not see them bit-identical, and do change the others),
labels reaching the ranker through ``train()`` only, the same-corpus protocol end to end, features
by their formulas, the inner CV, LambdaMART, explain (API and CLI), the board's note and the key.

Unit tests run on the synthetic dataset ``synthnews`` (two corpora, alpha and beta, each with two
board splits on the same three documents; cross-corpus trains on the other corpus), with cheap
bases (bm25, rouge1) computed into temporary stores. The votes are permuted where the harness
reads them: in the judgments of the splits that ``load_split`` returns (its memo). One real-data
version of each leakage test runs on SourceSum's splits over the committed base entries."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sourcesum import paths
from sourcesum.board import collect_declared, is_current, read_declaration, view_of
from sourcesum.cli import main
from sourcesum.data import Judgment, Pair, dataset, load_split
from sourcesum.data.folds import document_folds
from sourcesum.errors import LabelAccessError, ParameterError, RankerError, SourceSumError
from sourcesum.outputs.markdown import render_markdown
from sourcesum.rankers import RANKERS, create_ranker, learned
from sourcesum.rankers.context import BaseScores, TrainingData
from sourcesum.rankers.learned import (
    C_GRID,
    L1_GRID,
    TREES_GRID,
    LearnedRanker,
    length_features,
    position_features,
)
from sourcesum.runner.configs import Configuration
from sourcesum.runner.explain import explain
from sourcesum.runner.protocols import protocol
from sourcesum.runner.provide import training_data
from sourcesum.runner.run import base_scores, run_splits
from sourcesum.store.stores import ScoreStore, StoreStack
from support.pairs import make_pair
from support.votes import ALPHA, BETA, CNN, XSUM, permute_votes

BASES = "bm25,rouge1"  # cheap on the synthetic splits; committed entries on the real ones


FEATURES = [
    "bm25:zscore",
    "rouge1:zscore",
    "position:relative",
    "position:first",
    "position:reciprocal",
    "length:log_words",
    "length:z_words",
]
"""The feature names of learned over BASES with the default position and length groups."""


def learned_scores(
    store: ScoreStore | StoreStack, names: tuple[str, ...], **params: object
) -> dict[str, list[float]]:
    """Scores of a new ``learned`` ranker on the named splits, into ``store`` (a fresh top layer:
    no learned entry is read) with no model fitted before in this process reused."""
    learned._FITTED.clear()
    assert not store.root.exists()
    ranker = create_ranker("learned", **{"rankers": BASES, **params})
    runs = run_splits(ranker, [load_split(n) for n in names], store, progress=False)
    return {pair_id: scores for run in runs for pair_id, scores in run.entry.scores.items()}


def committed_stack(top: Path) -> StoreStack:
    """A fresh store over the committed one (the bases' committed entries are read)."""
    return StoreStack([ScoreStore(top), ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False)])


# -- leakage ------------------------------------------------------------------------------------


@pytest.mark.parametrize("scored, training", [(ALPHA, BETA), (BETA, ALPHA)])
def test_cross_corpus_scores_never_see_the_evaluated_corpus(tmp_path, monkeypatch, scored, training):
    before = learned_scores(ScoreStore(tmp_path / "before"), scored)
    assert set(before) == {p.id for name in scored for p in load_split(name)}
    with monkeypatch.context() as m:  # every vote of the evaluated corpus permuted
        changed = permute_votes(m, scored, seed=1)
        assert changed == set(before)
        after = learned_scores(ScoreStore(tmp_path / "after"), scored)
    assert after == before  # bit-identical floats
    with monkeypatch.context() as m:  # control: the training corpus's votes do change them
        changed = permute_votes(m, training, seed=1)
        assert changed == {p.id for name in training for p in load_split(name)}
        control = learned_scores(ScoreStore(tmp_path / "control"), scored)
    assert all(control[i] != before[i] for i in before)


@pytest.mark.parametrize("held_fold", [0, 1, 2])
def test_kfold_scores_of_a_fold_never_see_its_votes(tmp_path, monkeypatch, held_fold):
    name = "synth_alpha_sys"  # three documents: one per fold
    args = {"protocol": "kfold", "folds": 3}
    split = load_split(name)
    before = learned_scores(ScoreStore(tmp_path / "before"), (name,), **args)
    folds = document_folds([p.document_key for p in split], 3, 0)
    held = {p.id for p, f in zip(split, folds, strict=True) if f == held_fold}
    assert held and len(held) < len(split)
    with monkeypatch.context() as m:
        assert permute_votes(m, (name,), seed=7, only=held) == held
        after = learned_scores(ScoreStore(tmp_path / "after"), (name,), **args)
    assert {i: after[i] for i in held} == {i: before[i] for i in held}
    assert all(after[i] != before[i] for i in before if i not in held)  # they trained on those votes


@pytest.mark.real_data
@pytest.mark.slow  # fits on whole splits
def test_cross_corpus_scores_never_see_the_evaluated_corpus_on_sourcesum(tmp_path, monkeypatch):
    config = Configuration.of("learned", {"rankers": BASES})
    split = load_split("xsum_pegasus")
    committed = ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False)
    assert committed.load("learned", split.name, config.entry_key(split.name, split.sha256)) is None
    before = learned_scores(committed_stack(tmp_path / "before"), ("xsum_pegasus",))
    assert len(before) == len(split)
    # every vote of the evaluated corpus permuted: the pairs scored and their companion split
    with monkeypatch.context() as m:
        assert permute_votes(m, XSUM, seed=1)
        after = learned_scores(committed_stack(tmp_path / "after"), ("xsum_pegasus",))
    assert after == before  # bit-identical floats
    with monkeypatch.context() as m:  # control: permuting the training corpus's votes
        assert permute_votes(m, CNN, seed=1)
        control = learned_scores(committed_stack(tmp_path / "control"), ("xsum_pegasus",))
    assert control != before


@pytest.mark.real_data
@pytest.mark.slow  # fits on SourceSum's four main splits, scores a whole task split
@pytest.mark.parametrize("task_split", ["wice_test", "qmsum_test"])
def test_a_model_trained_on_sourcesum_reads_no_vote_of_the_task(tmp_path, monkeypatch, task_split):
    """protocol=from-sourcesum on another dataset: permuting every vote of the task's split
    leaves its scores bit-identical; permuting SourceSum's votes (the training data) changes them."""
    before = learned_scores(committed_stack(tmp_path / "before"), (task_split,), protocol="from-sourcesum")
    assert len(before) == len(load_split(task_split))
    with monkeypatch.context() as m:
        assert permute_votes(m, (task_split,), seed=1)
        after = learned_scores(committed_stack(tmp_path / "after"), (task_split,), protocol="from-sourcesum")
    assert after == before  # bit-identical floats
    with monkeypatch.context() as m:  # control: the training dataset's votes do change them
        assert permute_votes(m, XSUM + CNN, seed=1)
        control = learned_scores(
            committed_stack(tmp_path / "control"), (task_split,), protocol="from-sourcesum"
        )
    assert control != before


@pytest.mark.real_data
@pytest.mark.slow  # fits on whole splits
def test_kfold_scores_of_a_fold_never_see_its_votes_on_sourcesum(tmp_path, monkeypatch):
    split = load_split("xsum_reference")
    before = learned_scores(committed_stack(tmp_path / "before"), (split.name,), protocol="kfold")
    folds = document_folds([p.document_key for p in split], 5, 0)
    held = {p.id for p, f in zip(split, folds, strict=True) if f == 2}
    with monkeypatch.context() as m:
        assert permute_votes(m, (split.name,), seed=7, only=held)
        after = learned_scores(committed_stack(tmp_path / "after"), (split.name,), protocol="kfold")
    assert {i: after[i] for i in held} == {i: before[i] for i in held}
    others = [i for i in before if i not in held]
    assert any(after[i] != before[i] for i in others)  # the other folds did train on those votes


def test_learned_sees_labels_only_through_train(tmp_path, monkeypatch):
    scored, trained = [], []
    real_score, real_train = LearnedRanker.score, LearnedRanker.train

    def spy_score(self, pair):
        scored.append(pair)
        return real_score(self, pair)

    def spy_train(self, data):
        trained.append(data)
        return real_train(self, data)

    monkeypatch.setattr(LearnedRanker, "score", spy_score)
    monkeypatch.setattr(LearnedRanker, "train", spy_train)
    learned_scores(ScoreStore(tmp_path / "scores"), ALPHA)
    alpha = [p for name in ALPHA for p in load_split(name)]
    assert sorted(p.id for p in scored) == sorted(p.id for p in alpha)
    for pair in scored:  # inputs only
        assert type(pair) is Pair
        for label in ("votes", "graded", "binary"):
            with pytest.raises(LabelAccessError, match="without labels"):
                getattr(pair, label)
    assert [data.trained_on for data in trained] == [BETA, BETA]  # one training per scored split
    for data in trained:
        assert isinstance(data, TrainingData) and len(data.judgments) == len(data.pairs) == 6
        assert {p.corpus for p in data.pairs} == {"beta"} and {p.split for p in data.pairs} == set(BETA)
        assert not {p.id for p in data.pairs} & {p.id for p in alpha}
        assert not {p.document_key for p in data.pairs} & {p.document_key for p in alpha}
        for pair, judgment in zip(data.pairs, data.judgments, strict=True):
            assert judgment is load_split(pair.split).judgment(pair.id)  # the labels come beside,
            with pytest.raises(LabelAccessError):  # never on the pair
                pair.votes  # noqa: B018


def test_training_data_of_a_cross_corpus_assignment_holds_no_pair_of_the_scored_corpus(tmp_path):
    split = load_split("synth_alpha_ref")
    config = Configuration.of("learned", {"rankers": BASES})
    [assignment] = protocol("cross-corpus").assign(config.protocol, split, split.pairs)
    assert assignment.trained_on == BETA and assignment.pairs == split.pairs
    bases = base_scores(config, [split.name, *BETA], ScoreStore(tmp_path / "scores"))
    data = training_data(assignment, bases)
    beta = [load_split(name) for name in BETA]
    assert [p.id for p in data.pairs] == [p.id for s in beta for p in s]
    assert not {p.id for p in data.pairs} & {p.id for p in split}
    assert not {p.document_key for p in data.pairs} & {p.document_key for p in split}
    assert {p.corpus for p in data.pairs} == {"beta"} and data.min_relevant == 2
    assert data.judgments == tuple(j for s in beta for j in s.judgments)
    for pair, scores in zip(data.pairs, data.base_scores, strict=True):
        assert scores.shape == (2, pair.n_sentences)
        assert np.array_equal(scores, bases.of(pair.split, pair.id))


def test_reading_a_label_while_scoring_is_an_error_naming_the_ranker(tmp_path, monkeypatch):
    monkeypatch.setattr(LearnedRanker, "score", lambda self, pair: [float(v) for v in pair.votes])
    with pytest.raises(LabelAccessError, match=r"ranker learned\(.*\) read a label"):
        learned_scores(ScoreStore(tmp_path / "scores"), ("synth_alpha_sys",))


# -- protocols ----------------------------------------------------------------------------------


def test_same_corpus_trains_on_the_board_splits_of_the_corpus_and_refuses_board_splits(tmp_path):
    rule = protocol("same-corpus")
    spec = Configuration.of("learned", {"rankers": BASES, "protocol": "same-corpus"}).protocol
    assert rule.training_splits(spec, "synth_alpha_sys_heldout") == list(ALPHA)
    with pytest.raises(RankerError, match="synth_alpha_sys is a board split"):
        rule.training_splits(spec, "synth_alpha_sys")
    board = dataset("synthnews").board_splits()
    assert rule.key_inputs(spec, "synth_alpha_sys_heldout") == [
        {n: load_split(n).sha256 for n in board},
        rule.RULE,
    ]
    # end to end: scores on the held-out split, from a model fitted on Alpha's board splits
    store = ScoreStore(tmp_path / "scores")
    config = Configuration.of("learned", {"rankers": BASES, "protocol": "same-corpus"})
    split = load_split("synth_alpha_sys_heldout")
    [assignment] = rule.assign(config.protocol, split, split.pairs)
    assert [s.name for s, _ in assignment.training] == list(ALPHA)
    data = training_data(assignment, base_scores(config, [split.name, *ALPHA], store))
    assert {p.split for p in data.pairs} == set(ALPHA)
    scores = learned_scores(ScoreStore(tmp_path / "run"), (split.name,), protocol="same-corpus")
    assert set(scores) == {p.id for p in split}
    with pytest.raises(SourceSumError, match="board split"):
        learned_scores(ScoreStore(tmp_path / "other"), ("synth_alpha_ref",), protocol="same-corpus")


def test_cross_corpus_without_another_corpus_is_an_error(tmp_path):
    with pytest.raises(RankerError, match="synthclaims has no board split outside corpus"):
        learned_scores(ScoreStore(tmp_path / "scores"), ("synth_claims",))


def test_position_and_length_features():
    assert position_features(3).tolist() == [[0.0, 1.0, 1.0], [0.5, 0.0, 0.5], [1.0, 0.0, 1 / 3]]
    assert position_features(1).tolist() == [[0.0, 1.0, 1.0]]
    lengths = length_features(["a b c", "a", "a b c d e"])
    assert lengths[:, 0].tolist() == pytest.approx(np.log1p([3, 1, 5]).tolist())
    words = np.array([3, 1, 5.0])
    assert lengths[:, 1].tolist() == pytest.approx(((words - words.mean()) / words.std()).tolist())


def test_pair_features_are_the_normalised_bases_then_the_groups():
    pair = load_split("synth_alpha_sys").pairs[1]  # four sentences
    raw = np.array([[4.0, 0.0, 1.0, 1.0], [0.2, 0.9, 0.1, 0.5]])
    ranker = create_ranker("learned", rankers=BASES)
    assert ranker.feature_names == FEATURES
    z = (raw - raw.mean(axis=1, keepdims=True)) / raw.std(axis=1, keepdims=True)
    expected = np.hstack([z.T, position_features(4), length_features(pair.sentences)])
    assert ranker.pair_features(pair, raw) == pytest.approx(expected)
    ranker.use_bases(BaseScores({pair.split: {pair.id: raw}}, ("bm25", "rouge1")))
    assert ranker.pair_features(pair) == pytest.approx(expected)  # the bases handed in
    lengths_only = create_ranker("learned", rankers=BASES, normalization="rank", features="length")
    assert lengths_only.feature_names == ["bm25:rank", "rouge1:rank", "length:log_words", "length:z_words"]
    ranks = np.array([[1.0, 0.25, 0.625, 0.625], [0.5, 1.0, 0.25, 0.75]])  # 1 - (r - 1) / 4
    assert lengths_only.pair_features(pair, raw) == pytest.approx(
        np.hstack([ranks.T, length_features(pair.sentences)])
    )


# -- models -------------------------------------------------------------------------------------


def test_inner_cv_chooses_the_best_grid_value_and_explain_shows_the_weights(tmp_path, monkeypatch):
    fits: list[learned.TrainingSet] = []
    real_fit = learned._fit_estimator

    def spy_fit(kind, hyper, train, seed):
        fits.append(train)
        return real_fit(kind, hyper, train, seed)

    monkeypatch.setattr(learned, "_fit_estimator", spy_fit)
    learned._FITTED.clear()
    store = ScoreStore(tmp_path / "scores")
    split = load_split("synth_alpha_ref")
    [model] = explain(create_ranker("learned", rankers=BASES), split, store)
    assert model["trained_on"] == list(BETA) and model["pairs"] == 6
    assert [(row["C"], row["l1_ratio"]) for row in model["cv"]] == [(c, l1) for c in C_GRID for l1 in L1_GRID]
    for row in model["cv"]:
        assert row["objective"] == (row["ndcg"] + row["ap"]) / 2 and 0 <= row["objective"] <= 1
    best = max(model["cv"], key=lambda row: row["objective"])  # the first of the best (grid order)
    assert [row for row in model["cv"] if row.get("selected")] == [best]
    assert (model["C"], model["l1_ratio"]) == (best["C"], best["l1_ratio"])
    assert set(model["weights"]) == {*FEATURES, "(intercept)"}
    # the inner CV: 5 grouped folds per grid value (those with a document: 3 here), then the refit on every training pair; all
    # on the training corpus only, a document never on both sides of an inner split
    beta = {p.id: p.document_key for name in BETA for p in load_split(name)}
    assert (
        len(fits) == len(C_GRID) * len(L1_GRID) * min(5, len(set(beta.values()))) + 1
    )  # empty folds skipped
    for train in fits:
        assert set(train.pair_ids) <= set(beta)
        held_documents = {beta[i] for i in set(beta) - set(train.pair_ids)}
        assert held_documents.isdisjoint(train.documents)
    assert sorted(fits[-1].pair_ids) == sorted(beta)
    # the chosen model is the refit with the chosen values fixed
    fits.clear()
    chosen = create_ranker("learned", rankers=BASES, C=best["C"], l1_ratio=best["l1_ratio"])
    [refit] = explain(chosen, split, store)
    assert len(fits) == 1 and refit["cv"] == [] and refit["weights"] == model["weights"]
    fixed = create_ranker("learned", rankers=BASES, C=1.0, l1_ratio=0.0, features="")
    [model] = explain(fixed, split, store)
    assert (
        model["cv"] == []
        and model["C"] == 1.0
        and model["l1_ratio"] == 0.0
        and set(model["weights"]) == {"bm25:zscore", "rouge1:zscore", "(intercept)"}
    )


def test_explain_describes_one_model_per_kfold_fold(tmp_path):
    split = load_split("synth_alpha_sys")
    ranker = create_ranker("learned", rankers=BASES, protocol="kfold", folds=3, C=1.0, l1_ratio=1.0)
    models = explain(ranker, split, ScoreStore(tmp_path / "scores"))
    assert [m["trained_on"] for m in models] == [[f"synth_alpha_sys folds != {f}"] for f in range(3)]
    assert [m["pairs"] for m in models] == [2, 2, 2]
    assert len({json.dumps(m["weights"], sort_keys=True) for m in models}) == 3
    with pytest.raises(SourceSumError, match="fits no model"):
        explain(create_ranker("bm25"), split, ScoreStore(tmp_path / "scores"))


def toy_training(n_pairs: int = 40, seed: int = 0) -> TrainingData:
    """Labelled pairs whose first base score is the graded relevance plus noise and the second
    pure noise (six sentences each, three annotators)."""
    rng = np.random.default_rng(seed)
    pairs, judgments, scores = [], [], []
    for i in range(n_pairs):
        sentences = [f"p{i}s{j} " + " ".join(["w"] * int(rng.integers(2, 12))) for j in range(6)]
        pairs.append(make_pair(sentences, "a summary", pair_id=f"toy__{i}", split="toy"))
        votes = rng.integers(0, 2, size=(6, 3))
        judgments.append(Judgment.from_votes(votes.tolist()))
        scores.append(np.vstack([votes.sum(axis=1) + rng.normal(0, 0.5, 6), rng.normal(0, 1, 6)]))
    return TrainingData(tuple(pairs), tuple(judgments), ("toy",), 2, tuple(scores))


def toy_scores(ranker, data: TrainingData) -> list[list[float]]:
    ranker.use_bases(
        BaseScores({"toy": {p.id: s for p, s in zip(data.pairs, data.base_scores, strict=True)}})
    )
    return [list(ranker.score(p)) for p in data.pairs]


def test_lambdamart_is_deterministic_and_reports_gain_shares():
    pytest.importorskip("lightgbm")
    data = toy_training()
    args = {"rankers": BASES, "model": "lambdamart", "trees": 30}
    learned._FITTED.clear()
    ranker = create_ranker("learned", **args)
    ranker.train(data)
    first = toy_scores(ranker, data)
    model = ranker.describe_model()
    assert model["model"] == "lambdamart" and model["trees"] == 30 and model["cv"] == []
    assert model["trained_on"] == ["toy"] and model["pairs"] == 40
    assert sum(model["weights"].values()) == pytest.approx(1.0)
    assert min(model["weights"].values()) >= 0
    assert max(model["weights"], key=model["weights"].get) == "bm25:zscore"  # the informative one
    learned._FITTED.clear()
    again = create_ranker("learned", **args)
    again.train(data)
    assert toy_scores(again, data) == first and again.describe_model() == model
    # trees chosen by the inner CV over TREES_GRID
    free = create_ranker("learned", rankers=BASES, model="lambdamart", features="position")
    free.train(data)
    model = free.describe_model()
    assert [row["trees"] for row in model["cv"]] == list(TREES_GRID)
    best = max(model["cv"], key=lambda row: row["objective"])
    assert best.get("selected") and model["trees"] == best["trees"]


def test_lambdamart_through_the_runner_is_deterministic(tmp_path):
    pytest.importorskip("lightgbm")
    args = {"model": "lambdamart", "trees": 5}
    first = learned_scores(ScoreStore(tmp_path / "first"), ALPHA, **args)
    assert learned_scores(ScoreStore(tmp_path / "second"), ALPHA, **args) == first
    [model] = explain(
        create_ranker("learned", rankers=BASES, **args), load_split(ALPHA[0]), ScoreStore(tmp_path / "first")
    )
    assert model["trained_on"] == list(BETA) and model["model"] == "lambdamart"


# -- configuration: key, label, parameters ------------------------------------------------------


def test_key_covers_protocol_bases_and_training_data(tmp_path, monkeypatch):
    name = "synth_alpha_sys"
    cross = Configuration.of("learned", {"rankers": BASES})
    kfold = Configuration.of("learned", {"rankers": BASES, "protocol": "kfold"})
    assert cross.key_version(name) != kfold.key_version(name)
    assert cross.label == "learned(model=logistic, protocol=cross-corpus, rankers=bm25+rouge1)"
    assert Configuration.of("learned", {"rankers": "rouge1 ,bm25"}).key_version(name) == cross.key_version(
        name
    )
    assert create_ranker("learned", rankers="rouge1 ,bm25").get_params() == cross.params
    versions = {"cross": cross.key_version(name), "kfold": kfold.key_version(name)}
    assert all(v.startswith("1+") for v in versions.values())
    # the runner keys its entry so, and the entry is current
    split = load_split(name)
    store = ScoreStore(tmp_path / "scores")
    [run] = run_splits(
        create_ranker("learned", rankers=BASES, C=1.0, l1_ratio=0.0), [split], store, progress=False
    )
    fixed = Configuration.of("learned", {"rankers": BASES, "C": 1.0, "l1_ratio": 0.0})
    assert run.entry.key == fixed.entry_key(name, split.sha256) and is_current(run.entry, split) is None
    # a base's version
    with monkeypatch.context() as m:
        m.setattr(RANKERS.get("bm25"), "version", "bumped")
        assert cross.key_version(name) != versions["cross"]
        assert kfold.key_version(name) != versions["kfold"]
        assert "version" in is_current(run.entry, split)
    # the training data: cross-corpus trains on the board splits, whose sha256 it follows
    ds = dataset("synthnews")
    real = type(ds).data_sha256
    with monkeypatch.context() as m:
        m.setattr(
            type(ds), "data_sha256", lambda self, spec: "0" * 64 if spec.name == BETA[0] else real(self, spec)
        )
        assert cross.key_version(name) != versions["cross"]
        assert "version" in is_current(run.entry, split)
        # kfold trains on the scored split alone, whose sha256 is in every entry key already
        assert kfold.key_version(name) == versions["kfold"]
    assert (cross.key_version(name), kfold.key_version(name)) == (versions["cross"], versions["kfold"])
    assert kfold.entry_key(name, split.sha256) != kfold.entry_key(name, "0" * 64)
    # and its parameters
    assert Configuration.of("learned", {"rankers": BASES, "seed": 1}).key_version(name) == versions["cross"]
    assert Configuration.of("learned", {"rankers": BASES, "seed": 1}).entry_key(name, split.sha256) != (
        cross.entry_key(name, split.sha256)
    )


@pytest.mark.parametrize(
    "params, message",
    [
        ({"trees": 10}, "model=lambdamart only"),
        ({"model": "lambdamart", "C": 1.0}, "model=logistic only"),
        ({"model": "lambdamart", "l1_ratio": 1.0}, "model=logistic only"),
        ({"l1_ratio": 0.5}, "learned.l1_ratio"),
        ({"features": "position,colour"}, "unknown group 'colour'"),
        ({"rankers": "published:perplexity"}, "published output"),
        ({"rankers": "oracle"}, "reference ranker"),
        ({"protocol": "own"}, "learned.protocol"),
    ],
)
def test_bad_parameters(params, message):
    with pytest.raises(ParameterError, match=message):
        create_ranker("learned", **{"rankers": BASES, **params})
    with pytest.raises(ParameterError, match=message):  # without an instance too (the board's path)
        Configuration.of("learned", {"rankers": BASES, **params})


# -- explain from the CLI, and the board's note -------------------------------------------------


def test_cli_explain(capsys, scores_dir):
    assert main(["explain", "learned", "-p", f"learned.rankers={BASES}", "--split", "synth_alpha_sys"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "learned(model=logistic, protocol=cross-corpus, rankers=bm25+rouge1) on synth_alpha_sys:"
    )
    assert "fitted on synth_beta_sys + synth_beta_ref (6 pairs)" in out and "<- chosen" in out
    assert "bm25:zscore" in out and "position:reciprocal" in out
    argv = ["explain", "learned", "-p", f"learned.rankers={BASES}", "--split", "synthnews", "--json"]
    assert main(argv) == 0
    records = json.loads(capsys.readouterr().out)["explanations"]
    assert [r["split"] for r in records] == list(ALPHA + BETA)
    assert [r["models"][0]["trained_on"] for r in records] == [list(BETA)] * 2 + [list(ALPHA)] * 2
    assert records[0]["models"][0]["weights"]["bm25:zscore"] != 0
    assert records[0]["models"] == records[1]["models"]  # the two splits of a corpus share one model
    argv = ["explain", "learned", "-p", f"learned.rankers={BASES}", "-p", "learned.protocol=kfold"]
    assert main([*argv, "-p", "learned.folds=3", "--split", "synth_beta_ref"]) == 0
    out = capsys.readouterr().out
    assert all(f"fitted on synth_beta_ref folds != {f} (2 pairs)" in out for f in range(3))
    assert main(["explain", "bm25", "--split", "synth_alpha_sys"]) == 2
    assert "fits no model" in capsys.readouterr().err


def test_board_explains_the_protocol_under_the_results(scores_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))  # the statistics memo
    declaration = tmp_path / "board.toml"
    declaration.write_text(
        f'dataset = "synthnews"\n\n[[rows]]\nranker = "lead"\n\n[[rows]]\nranker = "learned"\n'
        f'params = {{ rankers = "{BASES}", C = 1.0, l1_ratio = 0.0 }}\n'
    )
    store = ScoreStore(scores_dir)
    splits = [load_split(name) for name in dataset("synthnews").board_splits()]
    for ranker in (create_ranker("lead"), create_ranker("learned", rankers=BASES, C=1.0, l1_ratio=0.0)):
        run_splits(ranker, splits, store, progress=False)
    board = collect_declared(read_declaration(declaration), store)
    text = render_markdown(view_of(board, resamples=200))
    results = text.split("## Results")[1].split("## Human agreement")[0]
    assert "- `learned`: trained on the votes" in results and "`protocol=cross-corpus`" in results
    assert "### Supervised (trained on the votes)" in results  # in a table of its own
    supervised = results.split("### Supervised")[1].split("\n\n- ")[0]
    assert "| learned(rankers=bm25+rouge1, C=1.0, …) |" in supervised and "| lead |" not in supervised
    assert "- `lead`:" not in results  # only rankers with a note get one
    rows = text.split("## Rows")[1]  # the full label in the details table
    assert (
        "`learned(C=1.0, l1_ratio=0.0, model=logistic, protocol=cross-corpus, rankers=bm25+rouge1)`" in rows
    )
