"""The example plugin (examples/overlap_ranker) installed as a package: through the runner on a
synthetic split, and driven through the CLI on the real data as README's "Add a ranker" does (run
it, compare it with BM25, put it on a personal board).

`scripts/test.sh` installs the plugin (`pip install -e examples/overlap_ranker`); each command runs
in a fresh `sourcesum` process, so the ranker is found through its entry point only."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from sourcesum.data import load_split
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.paths import COMMITTED_SCORES_DIR, shown
from sourcesum.rankers import create_ranker
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_splits
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.stores import ScoreStore


def sourcesum(*args: str) -> str:
    exe = shutil.which("sourcesum")
    assert exe, "the sourcesum command is not on PATH (activate .venv)"
    done = subprocess.run([exe, *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"sourcesum {' '.join(args)} failed:\n{done.stderr}"
    return done.stdout


def stored(root: Path, ranker, split) -> ScoreEntry:
    key = Configuration.of_ranker(ranker).entry_key(split.name, split.sha256)
    entry = ScoreStore(root, writable=False).load(ranker.name, split.name, key)
    assert entry is not None and entry.complete, f"no complete {ranker.label} entry in {root}"
    return entry


@pytest.fixture(scope="module")
def installed() -> None:
    points = {p.name: p.value for p in entry_points(group="sourcesum.rankers")}
    assert points.get("overlap") == "sourcesum_overlap:OverlapRanker", (
        "the example plugin is not installed: pip install -e examples/overlap_ranker (scripts/test.sh does)"
    )


def test_plugin_runs_through_the_runner_on_synthetic_data(installed, tmp_path: Path):
    """Found through its entry point, the plugin is labelled and keyed from its class and
    parameters alone, scores the pairs' inputs through the runner, and its entry holds its scores."""
    split = load_split("synth_alpha_sys")
    config = Configuration.of("overlap", {"lead_weight": "0.3"})
    assert (config.label, config.params) == (
        "overlap(lead_weight=0.3)",
        {"measure": "recall", "lead_weight": 0.3},
    )
    ranker = config.create()
    [run] = run_splits(ranker, [split], ScoreStore(tmp_path), progress=False)
    entry = stored(tmp_path, ranker, split)
    assert (entry.label, entry.n_pairs, entry.data_sha256) == (config.label, len(split), split.sha256)
    expected = {p.id: ranker.score(p) for p in split.pairs}
    assert run.scores() == entry.scores and set(entry.scores) == set(expected)
    assert all(entry.scores[i] == pytest.approx(expected[i]) for i in expected)
    assert evaluate_split(split, entry.scores, config.label).summary()["pairs"] == len(split)


@pytest.mark.real_data  # the real xsum_pegasus split and the committed bm25 entries
@pytest.mark.slow  # 6-16 s: three CLI processes, the last computing a whole board's statistics (cold memo)
def test_plugin_runs_compares_and_joins_a_personal_board(installed, tmp_path: Path):
    store = tmp_path / "scores"
    split = load_split("xsum_pegasus")

    run = json.loads(
        sourcesum(
            "run",
            "--ranker",
            "overlap",
            "-p",
            "overlap.lead_weight=0.3",
            "--split",
            "xsum_pegasus",
            "--scores-dir",
            str(store),
            "--json",
            "--no-progress",
        )
    )["results"]
    assert [(r["ranker"], r["split"], r["pairs"]) for r in run] == [
        ("overlap(lead_weight=0.3)", "xsum_pegasus", 119)
    ]
    # The entry went to the named store (nothing under data/scores), and it is the plugin's scores.
    ranker = create_ranker("overlap", lead_weight=0.3)
    entry = stored(store, ranker, split)
    expected = {p.id: ranker.score(p) for p in split.pairs}
    assert all(entry.scores[i] == pytest.approx(expected[i]) for i in expected)
    assert run[0]["ndcg"] == pytest.approx(evaluate_split(split, expected, "x").summary()["ndcg"])

    compared = json.loads(
        sourcesum(
            "compare",
            "overlap",
            "bm25",
            "--split",
            "xsum_pegasus",
            "--resamples",
            "1000",
            "--scores-dir",
            str(store),
            "--json",
        )
    )
    rows = {(c["a"], c["b"], c["measure"]): c for c in compared["comparisons"]}
    ndcg = rows[("overlap(lead_weight=0.3)", "bm25", "nDCG")]
    assert ndcg["mean_a"] == pytest.approx(run[0]["ndcg"])
    bm25 = stored(COMMITTED_SCORES_DIR, create_ranker("bm25"), split)
    assert ndcg["mean_b"] == pytest.approx(evaluate_split(split, bm25.scores, "bm25").summary()["ndcg"])
    assert 0 < ndcg["p_randomization"] <= 1

    board = tmp_path / "board.md"
    sourcesum("leaderboard", "--all", "-o", str(board), "--scores-dir", str(store))
    lines = [
        line for line in board.read_text().splitlines() if line.startswith("| overlap(lead_weight=0.3) |")
    ]
    assert lines and lines[0].split(" | ")[1].strip("*").startswith(f"{run[0]['ndcg']:.4f}")  # Results table
    assert any(line.startswith("| bm25 |") for line in board.read_text().splitlines())
    assert (
        f"Scores are every usable entry of `{shown(store)}` and of the committed `data/scores/`"
        in board.read_text()
    )
