"""The view-model (sourcesum.board.view.build): a row whose splits disagree on library versions
says so."""

from __future__ import annotations

from sourcesum.board import build_view, collect
from sourcesum.data import load_split
from sourcesum.outputs.markdown import render_markdown
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore
from support.store import forge


def test_a_row_whose_splits_disagree_on_versions_says_so(tmp_path):
    root = tmp_path / "store"
    for name in ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"):
        run_ranker(create_ranker("lead"), load_split(name), ScoreStore(root), progress=False)
    [path] = (root / "lead").glob("synth_beta_ref.*.json")
    forge(path, lambda raw: raw["libraries"].update({"numpy": "0.0.1"}))
    view = build_view(collect(ScoreStore(root), published=False, dataset_name="synthnews"))
    assert any(name == "lead" and "numpy (0.0.1, " in note for name, note in view.environment_notes)
    assert "**Versions differ across splits**: `lead`" in render_markdown(view)
