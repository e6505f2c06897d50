"""Extending the benchmark: a user ranker through the registry, runner, cache and leaderboard,
and the one rule a plugin must follow: rankers see pair inputs, never labels.

Runs on the synthetic dataset ``synthnews`` (tests/fixtures/synthetic)."""

from __future__ import annotations

import hashlib
import json
import warnings

import pytest
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.errors import LabelAccessError
from sourcesum.rankers import RANKERS, Ranker, register
from sourcesum.registry import Registry
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore

BOARD = dataset("synthnews").board_splits()


class LongestFirst(Ranker):
    name = "test_longest"
    version = "1"

    def __init__(self, longest_first: bool = True):
        self.longest_first = longest_first

    def score(self, pair):
        sign = 1 if self.longest_first else -1
        return [sign * len(s) for s in pair.sentences]


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


def test_registry_checks_base_class_and_duplicates():
    registry: Registry = Registry("ranker", Ranker)
    registry.register(LongestFirst)
    with pytest.raises(TypeError, match="not a subclass"):
        registry.register(dict)

    class Clash(LongestFirst):
        pass

    with pytest.raises(TypeError, match="taken by"):
        registry.register(Clash)

    class BadName(LongestFirst):
        name = "has space"

    with pytest.raises(TypeError, match="must match"):
        registry.register(BadName)


def test_entry_point_plugins_are_loaded(monkeypatch):
    import sourcesum.registry as module

    class FakeEntryPoint:
        name = "fake"
        value = "fake_pkg:LongestFirst"

        def load(self):
            return LongestFirst

    monkeypatch.setattr(module, "entry_points", lambda group: [FakeEntryPoint()] if group == "g" else [])
    registry: Registry = Registry("ranker", Ranker, "g")
    assert registry.names() == ["test_longest"]


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


def test_a_plugin_cannot_shadow_a_lazy_builtin(monkeypatch):
    import sourcesum.registry as module

    registry: Registry = Registry("ranker", Ranker, "g")
    registry.register_lazy({"test_longest": "sourcesum.rankers.baselines:LeadRanker"})
    with pytest.raises(TypeError, match="taken by sourcesum.rankers.baselines.LeadRanker"):
        registry.register(LongestFirst)

    class FakeEntryPoint:
        name = "clash"
        value = "clash_pkg:LongestFirst"

        def load(self):
            return LongestFirst

    monkeypatch.setattr(module, "entry_points", lambda group: [FakeEntryPoint()])
    assert registry.names() == ["test_longest"]  # the other names keep working, with a warning
    (failure,) = registry.failures
    assert failure.name == "clash" and "taken by" in failure.reason
    with pytest.raises(
        module.SourceSumError, match="ranker 'clash' is unavailable: plugin .* failed to load"
    ):
        registry.get("clash")


def test_every_builtin_loads_under_its_declared_name():
    from sourcesum.rankers import BUILTIN_RANKERS

    for name in BUILTIN_RANKERS:
        assert RANKERS.get(name).name == name


# --- rankers see inputs only -------------------------------------------------------------------


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


def test_reading_a_label_from_a_pair_raises_and_names_the_pair():
    pair = load_split("synth_alpha_sys").pairs[0]
    for field in ("votes", "graded", "binary", "judgment", "relevance"):
        with pytest.raises(
            LabelAccessError, match=f"pair {pair.id}: rankers receive pair inputs without labels"
        ):
            getattr(pair, field)
    with pytest.raises(AttributeError) as info:
        pair.no_such_field  # noqa: B018
    assert not isinstance(info.value, LabelAccessError)
