"""``sourcesum run``: a plugin whose ``fit`` raises is named, and a measure undefined on
constant scores is said so."""

from __future__ import annotations

from sourcesum.rankers import RANKERS, Ranker, register
from support.cli import run_cli

_FAILING_FIT = """
from sourcesum.rankers import Ranker, register

@register
class FailingFit(Ranker):
    name = "failing_fit_test"

    def fit(self, pairs):
        raise KeyError("idf table")

    def score(self, pair):
        return [0.0] * pair.n_sentences
"""


def test_a_plugin_whose_fit_raises_is_named(capsys, scores_dir, tmp_path, monkeypatch):
    (tmp_path / "failing_plugin.py").write_text(_FAILING_FIT)
    monkeypatch.syspath_prepend(str(tmp_path))
    import failing_plugin  # noqa: F401  (registers the ranker)

    try:
        code, _, err = run_cli(capsys, "run", "--ranker", "failing_fit_test", "--split", "synth_alpha_sys")
        assert (
            code == 2 and "ranker failing_fit_test failed in fit() on split synth_alpha_sys: KeyError" in err
        )
        assert len(err.strip().splitlines()) == 1 and not list(scores_dir.glob("**/*.json"))
    finally:
        RANKERS._classes.pop("failing_fit_test")


SPLIT = "synth_alpha_sys"


def test_spearman_on_constant_scores_is_undefined_and_said_so(scores_dir, capsys):
    class Flat(Ranker):
        name = "flat"

        def score(self, pair):
            return [0.5] * pair.n_sentences

    register(Flat)
    try:
        code, out, _ = run_cli(
            capsys, "run", "--ranker", "flat", "--split", SPLIT, "--measures", "Spearman", "--no-progress"
        )
        assert code == 0
        assert (
            "Spearman is undefined (constant scores on 3 pairs)" in out and "no relevant sentence" not in out
        )
    finally:
        RANKERS.unregister("flat")
