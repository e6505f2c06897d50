"""Registries (sourcesum.registry): base class and duplicate checks, plugins from entry points,
lazy built-ins a plugin cannot shadow, and a plugin that fails to load named while the rest keeps
working."""

from __future__ import annotations

from pathlib import Path

import pytest
from sourcesum.rankers import Ranker
from sourcesum.registry import Registry
from support.rankers import LongestFirst


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
    class FakeEntryPoint:
        name = "fake"
        value = "fake_pkg:LongestFirst"

        def load(self):
            return LongestFirst

    # the registry imports entry_points when plugins load: patched where it comes from
    monkeypatch.setattr(
        "importlib.metadata.entry_points", lambda group: [FakeEntryPoint()] if group == "g" else []
    )
    registry: Registry = Registry("ranker", Ranker, "g")
    assert registry.names() == ["test_longest"]


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

    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [FakeEntryPoint()])
    assert registry.names() == ["test_longest"]  # the other names keep working, with a warning
    (failure,) = registry.failures
    assert failure.name == "clash" and "taken by" in failure.reason
    with pytest.raises(
        module.SourceSumError, match="ranker 'clash' is unavailable: plugin .* failed to load"
    ):
        registry.get("clash")


def _plugin_site(tmp_path: Path, group: str, entries: dict[str, str], module: str, source: str) -> Path:
    """A distribution ``brokenplug`` on a folder of its own: ``module`` holding ``source`` and
    entry points ``entries`` in ``group``."""
    site = tmp_path / "site"
    dist = site / "brokenplug-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items())
    )
    (site / f"{module}.py").write_text(source)
    return site


def test_a_plugin_that_fails_to_load_is_named_and_the_rest_keeps_working(tmp_path):
    import os
    import subprocess
    import sys

    site = _plugin_site(
        tmp_path,
        "sourcesum.rankers",
        {"homoglyph": "brokenplug:Homoglyph"},
        "brokenplug",
        "from sourcesum.rankers import Ranker\n"
        "class Homoglyph(Ranker):\n    name = 'bm2\u0455'\n    def score(self, pair):\n        return [0.0] * pair.n_sentences\n",
    )
    env = {**os.environ, "PYTHONPATH": str(site), "SOURCESUM_SCORES_DIR": str(tmp_path / "scores")}
    listed = subprocess.run(
        [sys.executable, "-m", "sourcesum", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert listed.returncode == 0, listed.stderr
    assert "warning: plugin brokenplug 0.1: entry point homoglyph = brokenplug:Homoglyph" in listed.stderr
    assert "must match" in listed.stderr and '"bm25"' in listed.stdout
    asked = subprocess.run(
        [sys.executable, "-m", "sourcesum", "run", "--ranker", "homoglyph", "--split", "xsum_pegasus"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert (
        asked.returncode == 2
        and "error: ranker 'homoglyph' is unavailable: plugin brokenplug" in asked.stderr
    )
