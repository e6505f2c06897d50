"""Training protocols (sourcesum.runner.protocols), through which alone a ranker receives labels:
``own`` for reference rows only, ``kfold`` never trains on the pairs it scores, ``cross-corpus``
on the other corpus, ``same-corpus`` on no document the scored split holds, ``in-domain`` and
``from-DATASET`` across datasets; the protocols listed and unknown names refused."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np
import pytest
from sourcesum.cli import main
from sourcesum.data import Judgment, dataset, load_split
from sourcesum.data.folds import document_folds
from sourcesum.errors import LabelAccessError, ParameterError, RankerError, UnknownNameError
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.rankers import RANKERS, Ranker, create_ranker, register
from sourcesum.rankers.baselines import OracleRanker
from sourcesum.rankers.context import ProtocolSpec, TrainingData
from sourcesum.rankers.learned import LearnedRanker
from sourcesum.runner.configs import Configuration
from sourcesum.runner.protocols import PROTOCOLS, FromDataset, protocol
from sourcesum.runner.run import run_ranker, run_splits
from sourcesum.store.stores import ScoreStore

BOARD = dataset("synthnews").board_splits()
"""synth_alpha_sys, synth_alpha_ref, synth_beta_sys, synth_beta_ref (3 pairs each)."""


@pytest.fixture
def board_splits():
    """The four board splits: each corpus's two splits share their three documents."""
    return [load_split(name) for name in BOARD]


def test_the_oracle_gets_labels_only_through_its_own_protocol(board_splits, scores_dir, monkeypatch):
    config = Configuration.of("oracle")
    assert config.reference and config.protocol == ProtocolSpec("own")
    alpha = board_splits[:2]
    # the pairs it scores carry no labels, so without training it has nothing to score by
    untrained = create_ranker("oracle")
    with pytest.raises(RankerError, match="no labels for pair alpha__doc0__sys__0; the runner trains it"):
        untrained.score(alpha[0].pairs[0])
    with pytest.raises(LabelAccessError):
        alpha[0].pairs[0].votes  # noqa: B018

    trained: list[TrainingData] = []
    original_train = OracleRanker.train

    def spy(self, data):
        trained.append(data)
        original_train(self, data)

    monkeypatch.setattr(OracleRanker, "train", spy)
    runs = run_splits(create_ranker("oracle"), alpha, ScoreStore(scores_dir), progress=False)
    # one training per split, on exactly that split's pairs and judgments (the own protocol)
    assert [d.trained_on for d in trained] == [(s.name,) for s in alpha]
    for data, split in zip(trained, alpha, strict=True):
        assert data.pairs == split.pairs and data.judgments == split.judgments
        assert data.min_relevant == split.min_relevant == 2 and data.base_scores is None
    for run in runs:
        split = run.split
        assert run.entry.complete
        assert run.entry.scores == {p.id: list(split.graded(p.id)) for p in split}
        evaluation = evaluate_split(split, run.entry.scores, "oracle")
        for measure in (NDCG, AP):  # 1 wherever defined (AP: where a sentence has 2 votes)
            values = evaluation.values(measure)
            assert np.isfinite(values).sum() >= 2 and np.allclose(values[np.isfinite(values)], 1.0)


class _Peeking(Ranker):
    """Not a reference row, yet declares the ``own`` protocol (the labels of its own pairs)."""

    name = "test_peeking"
    reference = False
    trained = 0

    @classmethod
    def training_protocol(cls, params):
        return ProtocolSpec("own")

    def train(self, data):
        type(self).trained += 1
        self._graded = {p.id: j.graded for p, j in zip(data.pairs, data.judgments, strict=True)}

    def score(self, pair):
        return [float(g) for g in self._graded[pair.id]]


@pytest.fixture
def peeking():
    register(_Peeking)
    _Peeking.trained = 0
    try:
        yield _Peeking
    finally:
        RANKERS._classes.pop(_Peeking.name)


def test_a_non_reference_ranker_declaring_own_labels_is_refused(peeking, scores_dir, capsys):
    message = "protocol 'own' reads the labels of the pairs it scores, which only reference rows"
    with pytest.raises(ParameterError, match=message):
        Configuration.of(peeking.name).protocol  # noqa: B018
    with pytest.raises(ParameterError, match=f"ranker {peeking.name}: {message}"):
        run_splits(peeking(), [load_split("synth_alpha_sys")], ScoreStore(scores_dir), progress=False)
    code = main(["run", "--ranker", peeking.name, "--split", "synthnews", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and message in err[0]
    assert peeking.trained == 0 and not list(scores_dir.glob("**/*.json"))  # never trained, nothing stored


class _KFoldSpy(Ranker):
    """A supervised ranker under ``kfold``: records what each training saw."""

    name = "test_kfold_spy"
    seen: ClassVar[list[tuple[tuple[str, ...], frozenset[str]]]] = []

    def __init__(self, folds: int = 3):
        self.folds = folds

    @classmethod
    def training_protocol(cls, params: Any) -> ProtocolSpec:
        return ProtocolSpec("kfold", {"folds": params["folds"], "seed": 0})

    def train(self, data):
        assert all(isinstance(j, Judgment) for j in data.judgments)
        self._trained = frozenset(p.id for p in data.pairs)
        type(self).seen.append((data.trained_on, self._trained))

    def score(self, pair):
        assert pair.id not in self._trained  # never scored after training on its own labels
        return [0.0] * pair.n_sentences


def test_a_supervised_ranker_never_trains_on_the_pairs_it_scores(scores_dir):
    register(_KFoldSpy)
    _KFoldSpy.seen = []
    try:
        assert Configuration.of(_KFoldSpy.name).protocol.name == "kfold"
        split = load_split("synth_alpha_sys_all")
        entry = run_ranker(_KFoldSpy(), split, ScoreStore(scores_dir), progress=False)
    finally:
        RANKERS._classes.pop(_KFoldSpy.name)
    assert entry.complete
    assert 2 <= len(_KFoldSpy.seen) <= 3
    ids = {p.id for p in split}
    for _, training in _KFoldSpy.seen:
        assert training < ids  # a strict subset: the held-out fold's pairs are missing


def test_same_corpus_trains_on_no_pair_of_a_document_the_scored_split_holds():
    from sourcesum.errors import RankerError
    from sourcesum.runner.configs import Configuration
    from sourcesum.runner.protocols import protocol

    spec = Configuration.of("overlap_prior", {"protocol": "same-corpus"}).protocol
    everything = load_split("synth_alpha_sys_all")  # outside the board: every main document, and more
    with pytest.raises(RankerError, match="no pair is left to train on"):
        protocol("same-corpus").assign(spec, everything, everything.pairs)
    # its last three pairs: one document shared with main pairs, two new
    scored = dataclasses.replace(
        everything,
        pairs=everything.pairs[2:],
        judgments=everything.judgments[2:],
        clusters=everything.clusters[2:],
    )
    (assignment,) = protocol("same-corpus").assign(spec, scored, scored.pairs)
    documents = {p.document_key for p in scored}
    trained = [split.pairs[i] for split, positions in assignment.training for i in positions]
    assert trained and not any(p.document_key in documents for p in trained)
    every = [p for name in ("synth_alpha_sys", "synth_alpha_ref") for p in load_split(name)]
    assert len(trained) == sum(p.document_key not in documents for p in every) < len(every)
    assert protocol("same-corpus").RULE in protocol("same-corpus").key_inputs(spec, scored.name)


BASES = "bm25,rouge1"  # cheap on the synthetic splits; committed entries on the real ones


ALPHA = ("synth_alpha_sys", "synth_alpha_ref")


BETA = ("synth_beta_sys", "synth_beta_ref")


def test_protocols_are_listed_and_unknown_names_refused():
    protocols = PROTOCOLS.values()
    assert [p.name for p in protocols] == [
        "own",
        "cross-corpus",
        "same-corpus",
        "kfold",
        "in-domain",
        "from-sourcesum",
    ]
    assert all(protocol(p.name) is p for p in protocols)
    assert [p.reference_only for p in protocols] == [True, False, False, False, False, False]
    with pytest.raises(UnknownNameError, match="unknown training protocol 'nope'"):
        protocol("nope")


def test_cross_corpus_trains_on_the_board_splits_of_the_other_corpus():
    rule = protocol("cross-corpus")
    spec = Configuration.of("learned", {"rankers": BASES}).protocol
    assert spec == ProtocolSpec("cross-corpus", {"folds": 5, "seed": 0})
    assert rule.training_splits(spec, "synth_alpha_sys") == list(BETA)
    assert rule.training_splits(spec, "synth_beta_ref") == list(ALPHA)
    assert rule.training_splits(spec, "synth_alpha_sys_all") == list(BETA)  # not on the board
    board = dataset("synthnews").board_splits()
    assert rule.key_inputs(spec, "synth_alpha_sys") == [{n: load_split(n).sha256 for n in board}]
    split = load_split("synth_alpha_ref")
    [assignment] = rule.assign(spec, split, split.pairs[:2])
    assert assignment.pairs == split.pairs[:2] and assignment.trained_on == BETA
    assert [(s.name, positions) for s, positions in assignment.training] == [(n, (0, 1, 2)) for n in BETA]
    # a dataset with no other corpus has nothing to train on
    with pytest.raises(RankerError, match="no board split outside corpus"):
        rule.training_splits(spec, "synth_claims")


def test_kfold_scores_each_pair_once_after_training_on_the_other_documents():
    rule = protocol("kfold")
    spec = Configuration.of("learned", {"rankers": BASES, "protocol": "kfold", "folds": 2}).protocol
    assert spec == ProtocolSpec("kfold", {"folds": 2, "seed": 0})
    split = load_split("synth_alpha_sys_all")  # five pairs on five documents
    fold_of = document_folds([p.document_key for p in split], 2, 0)
    assignments = rule.assign(spec, split, split.pairs)
    assert sorted(p.id for a in assignments for p in a.pairs) == sorted(p.id for p in split)
    assert len(assignments) == 2
    for fold, assignment in enumerate(assignments):
        [(source, positions)] = assignment.training
        assert source is split and assignment.trained_on == (f"synth_alpha_sys_all folds != {fold}",)
        assert [fold_of[split.index[p.id]] for p in assignment.pairs] == [fold] * len(assignment.pairs)
        assert positions == tuple(i for i in range(len(split)) if fold_of[i] != fold)
        trained_documents = {split.pairs[i].document_key for i in positions}
        assert trained_documents.isdisjoint(p.document_key for p in assignment.pairs)
    # scoring a subset: folds still come from the whole split; only the folds pending are trained
    last = split.pairs[-1]
    [alone] = rule.assign(spec, split, [last])
    assert alone == dataclasses.replace(assignments[fold_of[split.index[last.id]]], pairs=(last,))


def test_own_labels_are_for_reference_rows_only(monkeypatch):
    assert Configuration.of("oracle").protocol == ProtocolSpec("own")
    split = load_split("synth_alpha_sys")
    [assignment] = protocol("own").assign(ProtocolSpec("own"), split, split.pairs)
    assert assignment.training == ((split, (0, 1, 2)),) and assignment.pairs == split.pairs
    monkeypatch.setattr(
        LearnedRanker, "training_protocol", classmethod(lambda cls, params: ProtocolSpec("own"))
    )
    with pytest.raises(ParameterError, match="only reference rows"):
        Configuration.of("learned", {"rankers": BASES}).protocol  # noqa: B018


def test_from_dataset_trains_on_the_other_datasets_board_and_refuses_its_own():
    rule = FromDataset("synthnews")
    spec = Configuration.of("learned", {"rankers": "bm25,lead"}).protocol
    assert rule.name == "from-synthnews"
    assert rule.training_splits(spec, "synth_claims") == list(dataset("synthnews").board_splits())
    with pytest.raises(RankerError, match="is a split of synthnews itself"):
        rule.training_splits(spec, "synth_alpha_sys")
    board = dataset("synthnews").board_splits()
    assert rule.key_inputs(spec, "synth_claims") == [{n: load_split(n).sha256 for n in board}]
    split = load_split("synth_claims")
    [assignment] = rule.assign(spec, split, split.pairs)
    assert assignment.trained_on == tuple(board) and assignment.pairs == split.pairs
    assert "from-sourcesum" in PROTOCOLS


def test_only_protocols_that_fit_outside_the_scored_corpus_name_an_outside_source():
    """cross-corpus and from-X fit on no pair of the scored corpus: they name the dataset whose
    board pairs they fit on; the others may read pairs of the scored corpus (or its split)."""
    assert protocol("cross-corpus").outside_source("synth_alpha_sys") == "synthnews"
    assert FromDataset("synthnews").outside_source("synth_claims") == "synthnews"
    assert protocol("from-sourcesum").outside_source("synth_claims") == "sourcesum"
    for name in ("own", "same-corpus", "kfold", "in-domain"):
        assert protocol(name).outside_source("synth_alpha_sys") is None, name


def test_in_domain_trains_on_the_split_the_dataset_declares(monkeypatch):
    rule = protocol("in-domain")
    spec = Configuration.of("learned", {"rankers": "bm25,lead", "protocol": "in-domain"}).protocol
    with pytest.raises(RankerError, match="declares no training split for synth_alpha_sys"):
        rule.training_splits(spec, "synth_alpha_sys")
    news = type(dataset("synthnews"))
    monkeypatch.setattr(news, "training_splits", {"synth_alpha_sys": ("synth_alpha_sys_all",)})
    assert rule.training_splits(spec, "synth_alpha_sys") == ["synth_alpha_sys_all"]
    assert rule.key_inputs(spec, "synth_alpha_sys") == [
        {"synth_alpha_sys_all": load_split("synth_alpha_sys_all").sha256}
    ]


@pytest.mark.real_data
def test_the_new_datasets_declare_their_training_splits():
    assert dataset("wice").training_splits == {"wice_test": ("wice_dev",)}
    assert dataset("qmsum").training_splits == {"qmsum_test": ("qmsum_train",)}
