"""Extending the benchmark: a user ranker through the registry, runner, cache and leaderboard."""

from __future__ import annotations

import json

import pytest
from sourcesum.cli import main
from sourcesum.rankers import RANKERS, Ranker, register
from sourcesum.registry import Registry


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
                    "all",
                    "--json",
                    "--no-progress",
                ]
            )
            == 0
        )
        results = json.loads(capsys.readouterr().out)["results"]
        assert {r["ranker"] for r in results} == {"test_longest(longest_first=False)"}
        assert main(["leaderboard", "--all", "-o", str(tmp_path / "lb.md")]) == 0
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

    with pytest.raises(TypeError, match="identifier"):
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
    from sourcesum.data import load_split
    from sourcesum.runner import run_ranker
    from sourcesum.store import ScoreStore

    class Batched(LongestFirst):
        batch_pairs = 50
        sizes: list[int] = []

        def score_batch(self, pairs):
            self.sizes.append(len(pairs))
            return [self.score(p) for p in pairs]

    run_ranker(Batched(), load_split("xsum_pegasus"), ScoreStore(scores_dir), progress=False)
    assert Batched.sizes == [50, 50, 19]


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
    with pytest.raises(module.SourceSumError, match="plugin 'clash' .* failed to load: .*taken by"):
        registry.names()


def test_every_builtin_loads_under_its_declared_name():
    from sourcesum.rankers import BUILTIN_RANKERS

    for name in BUILTIN_RANKERS:
        assert RANKERS.get(name).name == name
