"""The ranker API (sourcesum.rankers.base) as a plugin meets it: a user ranker through the
runner, cache and leaderboard; the batch and workspace hooks; the one rule a plugin must follow
(rankers see pair inputs, never labels); and batching, which changes no built-in ranker's scores
beyond its declared ``reproduction_tolerance`` (the bound ``sourcesum verify``, sharded and
resumed runs rely on).

Runs on the synthetic dataset ``synthnews`` (tests/fixtures/synthetic)."""

from __future__ import annotations

import hashlib
import json
import warnings

import pytest
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.rankers import RANKERS, Ranker, create_ranker, register
from sourcesum.rankers.context import BaseScores
from sourcesum.runner.configs import Configuration
from sourcesum.runner.protocols import protocol
from sourcesum.runner.provide import training_data
from sourcesum.runner.run import base_scores, run_ranker
from sourcesum.store.stores import ScoreStore
from support.rankers import LongestFirst

BOARD = dataset("synthnews").board_splits()


def test_user_ranker_runs_through_cli_and_leaderboard(capsys, scores_dir, tmp_path):
    register(LongestFirst)
    try:
        assert (
            main(
                [
                    "run",
                    "--ranker",
                    "test_longest",
                    "-p",
                    "test_longest.longest_first=false",
                    "--split",
                    "synthnews",
                    "--json",
                    "--no-progress",
                ]
            )
            == 0
        )
        results = json.loads(capsys.readouterr().out)["results"]
        assert {r["ranker"] for r in results} == {"test_longest(longest_first=False)"}
        assert [r["split"] for r in results] == BOARD
        assert main(["leaderboard", "--all", "--dataset", "synthnews", "-o", str(tmp_path / "lb.md")]) == 0
        assert "| test_longest(longest_first=False) |" in (tmp_path / "lb.md").read_text()
    finally:
        RANKERS._classes.pop("test_longest")


def test_every_builtin_loads_under_its_declared_name():
    from sourcesum.rankers import BUILTIN_RANKERS

    for name in BUILTIN_RANKERS:
        assert RANKERS.get(name).name == name


# -- the hooks: batches and the workspace ----------------------------------------------------------


def test_batch_hook_is_used(scores_dir):
    class Batched(LongestFirst):
        batch_pairs = 2
        sizes: list[int] = []

        def score_batch(self, pairs):
            self.sizes.append(len(pairs))
            return [self.score(p) for p in pairs]

    # 5 pairs on 5 documents; an unregistered class runs as well as a registered one
    entry = run_ranker(Batched(), load_split("synth_alpha_sys_all"), ScoreStore(scores_dir), progress=False)
    assert Batched.sizes == [2, 2, 1] and entry.complete and entry.label == "test_longest"


@pytest.fixture(scope="module")
def split():
    """Five pairs of 5, 4, 6, 2 and 1 sentences (one without a sentence of 2 votes)."""
    return load_split("synth_alpha_sys_all")


class _BatchOnly(Ranker):
    name = "batch_only_test"

    def score_batch(self, pairs):
        return [[float(len(s)) for s in p.sentences] for p in pairs]


class _Neither(Ranker):
    name = "neither_test"


def test_score_defaults_to_a_one_pair_batch_and_a_ranker_needs_one_of_them(split):
    pair = split.pairs[0]
    assert _BatchOnly().score(pair) == [float(len(s)) for s in pair.sentences]
    with pytest.raises(TypeError, match="neither score nor score_batch"):
        _Neither()


def test_use_workspace_is_the_one_workspace_hook(split, tmp_path):
    """The runner hands a ranker the store's folder once per run (``use_store`` and the
    ranker's ``store`` attribute are gone: rankers never read the store)."""
    from sourcesum.runner.run import run_splits

    seen = []

    class Recording(_BatchOnly):
        name = "recording_test"

        def use_workspace(self, folder):
            super().use_workspace(folder)
            seen.append(folder)

    store = ScoreStore(tmp_path)
    ranker = Recording()
    RANKERS.register(Recording)  # the runner finds a configuration's class by name
    try:
        runs = run_splits(ranker, [split], store, progress=False)
    finally:
        RANKERS._classes.pop("recording_test")
    assert seen == [store.root] and not hasattr(ranker, "store") and not hasattr(ranker, "use_store")
    assert runs[0].entry.scores == {p.id: [float(len(s)) for s in p.sentences] for p in split}


# -- rankers see inputs only -----------------------------------------------------------------------


class InputsOnly(Ranker):
    """Reads every input a plugin may read (the fields the migration notes list): runs unchanged."""

    name = "test_inputs_only"

    def score(self, pair):
        context = f"{pair.id}|{pair.corpus}|{pair.document_key}|{pair.reference_summary}|{pair.summary}"
        assert pair.document and pair.n_sentences == len(pair.sentences)
        return [_expected(context, s) for s in pair.sentences]


def _expected(context: str, sentence: str) -> float:
    return int.from_bytes(hashlib.sha256(f"{context}|{sentence}".encode()).digest()[:4], "big") / 2**32


class LabelPeeker(Ranker):
    """A ranker written against 0.1's Pair, reading a label in score() or fit()."""

    name = "test_label_peeker"

    def __init__(self, field: str = "votes", where: str = "score"):
        self.field, self.where = field, where

    def fit(self, pairs):
        if self.where == "fit":
            getattr(pairs[0], self.field)

    def score(self, pair):
        if self.where == "score":
            getattr(pair, self.field)
        return [0.0] * pair.n_sentences


@pytest.fixture
def plugins():
    for cls in (InputsOnly, LabelPeeker):
        register(cls)
    try:
        yield
    finally:
        for cls in (InputsOnly, LabelPeeker):
            RANKERS._classes.pop(cls.name)


def test_a_plugin_that_reads_only_inputs_works_unchanged(plugins, capsys, scores_dir, tmp_path):
    assert (
        main(["run", "--ranker", "test_inputs_only", "--split", "synthnews", "--json", "--no-progress"]) == 0
    )
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r["split"] for r in results] == BOARD and all(r["ranker"] == "test_inputs_only" for r in results)
    entries = [entry for _, entry in ScoreStore(scores_dir).entries()]
    assert len(entries) == len(BOARD) and all(e.complete for e in entries)
    for entry in entries:
        for pair in load_split(entry.split):
            context = f"{pair.id}|{pair.corpus}|{pair.document_key}|{pair.reference_summary}|{pair.summary}"
            assert entry.scores[pair.id] == [_expected(context, s) for s in pair.sentences]
    assert main(["leaderboard", "--all", "--dataset", "synthnews", "-o", str(tmp_path / "lb.md")]) == 0
    assert "| test_inputs_only |" in (tmp_path / "lb.md").read_text()


@pytest.mark.parametrize(
    "field,where",
    [("votes", "score"), ("graded", "score"), ("binary", "score"), ("votes", "fit"), ("graded", "fit")],
)
def test_a_plugin_that_reads_a_label_fails_the_run_naming_it(plugins, capsys, scores_dir, field, where):
    argv = ["run", "--ranker", "test_label_peeker", "--split", "synthnews", "--no-progress"]
    argv += ["-p", f"test_label_peeker.field={field}", "-p", f"test_label_peeker.where={where}"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    label = LabelPeeker.label_for(LabelPeeker.full_params({"field": field, "where": where}))
    assert label.startswith("test_label_peeker") and (field == "votes") == ("field=" not in label)
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"error: ranker {label} read a label")
    assert f"(read .{field})" in lines[0] and "training protocol" in lines[0]
    assert ("in fit()" in lines[0]) == (where == "fit")
    assert not [w for w in caught if "one at a time" in str(w.message)]  # not retried pair by pair
    assert not list(scores_dir.glob("**/*.json"))  # nothing stored
    assert "ndcg" not in out


# -- batching changes no scores beyond the declared tolerance --------------------------------------


SPLITS = ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref", "synth_alpha_sys_all")


CHEAP = ["lead", "random", "bm25", "rouge1", "rouge2", "rougeL", "tfidf", "lexrank"]


MODELS = [pytest.param(name, marks=pytest.mark.slow) for name in ("embedding", "bertscore")]


def scored(ranker, pairs, together: bool) -> list[list[float]]:
    if together:
        return [list(s) for s in ranker.score_batch(pairs)]
    return [list(ranker.score_batch([pair])[0]) for pair in pairs]


def largest_difference(a: list[list[float]], b: list[list[float]]) -> float:
    return max(abs(x - y) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True))


@pytest.mark.parametrize("name", CHEAP + MODELS)
def test_scores_do_not_depend_on_batching_beyond_the_declared_tolerance(name):
    for split_name in SPLITS:
        split = load_split(split_name)
        rankers = [create_ranker(name) for _ in range(2)]
        for ranker in rankers:
            ranker.fit(split.pairs)
        difference = largest_difference(
            scored(rankers[0], split.pairs, True), scored(rankers[1], split.pairs, False)
        )
        tolerance = RANKERS.get(name).reproduction_tolerance
        assert difference <= tolerance, (split_name, difference)
        if tolerance == 0:
            assert difference == 0.0


@pytest.mark.parametrize("name", ["fusion", "learned"])
def test_composites_score_each_pair_from_its_own_bases(name, tmp_path):
    config = Configuration.of(name, {"rankers": "bm25,lead"})
    store = ScoreStore(tmp_path / "store")
    split = load_split("synth_alpha_sys")
    names = [split.name] + (
        protocol("cross-corpus").training_splits(config.protocol, split.name) if config.protocol else []
    )
    bases: BaseScores = base_scores(config, names, store)
    results = []
    for together in (True, False):
        ranker = config.create()
        ranker.use_bases(bases)
        if config.protocol:
            [assignment] = protocol(config.protocol.name).assign(config.protocol, split, split.pairs)
            ranker.train(training_data(assignment, bases))
        results.append(scored(ranker, split.pairs, together))
    assert results[0] == results[1]
