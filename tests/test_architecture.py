"""The open layers: a dataset plugin registered through an entry point is listed, run, evaluated
and rendered on a board of its own; a measure added by one registration appears, correctly
labelled, in every output; modules import only downward (rankers never reach the harness)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sourcesum.board import collect, view_of
from sourcesum.board.explorer import explorer_data
from sourcesum.cli import main
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import (
    NDCG,
    Family,
    Measure,
    parse_measure,
    register_measure,
    unregister_measure,
)
from sourcesum.evaluation.metrics import Ranking
from sourcesum.outputs.latex import render_latex
from sourcesum.outputs.markdown import render_markdown
from sourcesum.outputs.plot import plot_inputs
from sourcesum.outputs.tables import render_csv, render_json
from sourcesum.paths import PROJECT_ROOT
from sourcesum.store.stores import ScoreStore

SYNTHETIC = Path(__file__).resolve().parent / "fixtures" / "synthetic"


def _plugin_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose only way to know the synthetic datasets is their entry points: a
    distribution's metadata (``entry_points.txt``) on the path, as ``pip install`` leaves it."""
    dist = tmp_path / "site" / "synthetic_datasets-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: synthetic-datasets\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[sourcesum.datasets]\n"
        "synthnews = synthetic_datasets:SyntheticNews\n"
        "synthclaims = synthetic_datasets:SyntheticClaims\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCESUM_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(SYNTHETIC)]),
        SOURCESUM_SCORES_DIR=str(tmp_path / "scores"),
        SOURCESUM_CACHE_DIR=str(tmp_path / "cache"),
        HF_HUB_OFFLINE="1",
    )
    return env


def _sourcesum(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sourcesum", *argv], capture_output=True, text=True, env=env, timeout=600
    )


@pytest.mark.slow  # CLI subprocesses
def test_a_dataset_plugin_from_an_entry_point_lists_runs_evaluates_and_renders(tmp_path):
    env = _plugin_env(tmp_path)
    listed = _sourcesum(env, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    datasets = {d["name"]: d for d in json.loads(listed.stdout)["datasets"]}
    assert datasets["synthnews"]["board_splits"] == [
        "synth_alpha_sys",
        "synth_alpha_ref",
        "synth_beta_sys",
        "synth_beta_ref",
    ]
    assert "synthclaims" in datasets

    ran = _sourcesum(
        env,
        "run",
        "--ranker",
        "lead,random,bm25,oracle",
        "--split",
        "synthnews,synth_claims",
        "--json",
        "--no-progress",
    )
    assert ran.returncode == 0, ran.stderr
    results = json.loads(ran.stdout)["results"]
    assert {(r["ranker"], r["split"]) for r in results} >= {
        ("bm25", "synth_alpha_sys"),
        ("oracle", "synth_claims"),
    }
    oracle = [r for r in results if r["ranker"] == "oracle"]
    assert all(r["ndcg"] == pytest.approx(1.0) and r["map"] == pytest.approx(1.0) for r in oracle)
    claims = next(r for r in results if r["ranker"] == "bm25" and r["split"] == "synth_claims")
    assert claims["undefined"] == {"ndcg": 1, "map": 1}  # the claim with no supporting sentence

    exported = _sourcesum(env, "export", "--dataset", "synthnews", "-o", str(tmp_path / "trec"))
    assert exported.returncode == 0, exported.stderr
    evaluated = _sourcesum(
        env, "evaluate", str(tmp_path / "trec" / "bm25.synth_beta_ref.run"), "--format", "trec", "--json"
    )
    assert evaluated.returncode == 0, evaluated.stderr
    record = json.loads(evaluated.stdout)["results"][0]
    bm25 = next(r for r in results if r["ranker"] == "bm25" and r["split"] == "synth_beta_ref")
    assert record["split"] == "synth_beta_ref" and record["ndcg"] == pytest.approx(bm25["ndcg"], abs=1e-12)

    declaration = tmp_path / "board.toml"
    declaration.write_text(
        'dataset = "synthnews"\n[[rows]]\nranker = "lead"\n[[rows]]\nranker = "random"\n'
        '[[rows]]\nranker = "bm25"\n[[references]]\nranker = "oracle"\n'
    )
    board = tmp_path / "out" / "board.md"
    rendered = _sourcesum(
        env,
        "leaderboard",
        "--declaration",
        str(declaration),
        "--scores-dir",
        str(tmp_path / "scores"),
        "-o",
        str(board),
    )
    assert rendered.returncode == 0, rendered.stderr
    text = board.read_text()
    assert text.startswith("# SynthNews leaderboard\n")
    assert "| Ranker | Alpha-Sys NDCG | Alpha-Sys MAP | Alpha-Ref NDCG |" in text
    assert "Avg is the mean of the four split means" in text
    assert "## Human agreement" in text and "## Published systems" not in text
    assert (tmp_path / "out" / "board.png").stat().st_size > 0  # the plot is named after its board


def _top_kernel(measure: Measure, ranking: Ranking, relevance: np.ndarray) -> np.ndarray:
    """Expected relevance of the first-ranked sentence over tie orderings (a test measure)."""
    weights = np.zeros(relevance.shape[1])
    weights[:1] = 1.0
    first: np.ndarray = (ranking.sort(relevance) * ranking.mean_weight(weights)).sum(axis=1)
    return first


@pytest.fixture
def top_measure():
    family = register_measure(
        Family(
            "Top",
            _top_kernel,
            "binary",
            "relevance of the first sentence (expected over ties)",
            display=lambda m: "Top-1",
            json_key=lambda m: "top1",
        )
    )
    yield Measure.of(family.name)
    unregister_measure("Top")


def test_a_new_measure_is_one_registration_and_every_output_names_it(
    top_measure, scores_dir, capsys, tmp_path
):
    assert parse_measure("top") == top_measure
    assert (
        main(
            [
                "run",
                "--ranker",
                "lead,bm25",
                "--split",
                "synthnews",
                "--measures",
                "nDCG,Top",
                "--no-progress",
                "--json",
            ]
        )
        == 0
    )
    results = json.loads(capsys.readouterr().out)["results"]
    assert all("top1" in r for r in results)
    board = collect(ScoreStore(scores_dir), measures=(NDCG, top_measure), dataset_name="synthnews")
    # the table dispatches to the registered kernel: here exactly P@1
    evaluation = board.row("bm25").evaluations["synth_alpha_sys"]
    split = board.split("synth_alpha_sys")
    p_at_1 = evaluate_split(
        split, board.row("bm25").entries[split.name].scores, "bm25", [parse_measure("P@1")]
    )
    assert evaluation.values(top_measure).tolist() == p_at_1.values(parse_measure("P@1")).tolist()
    view = view_of(board)
    markdown = render_markdown(view)
    assert "| Alpha-Sys Top-1 |" in markdown.replace("Alpha-Sys NDCG | ", "")
    assert "| Avg Top-1 |" in markdown and "Top-1 expected (default)" in markdown
    assert "Top-1 (`Top`, binary relevance)" in markdown  # the measures note of a non-default board
    assert "Top-1" in render_latex(view)
    records = json.loads(render_json(view))["results"]
    assert all("top1" in r and "top1_ci" in r for r in records)
    header = render_csv(view).splitlines()[0]
    assert "Alpha-Sys Top-1" in header and "Alpha-Sys top1_p_vs_best" in header
    assert ["Top", "Top-1"] in plot_inputs(view)["measures"]
    explorer = explorer_data(board, "synth_beta_sys")
    assert {"key": "top1", "name": "Top-1"} in explorer["measures"]
    assert all(len(p["values"]["top1"]) == len(explorer["rankers"]) for p in explorer["pairs"])
    assert main(["list", "--json"]) == 0
    assert "Top" in [m["family"] for m in json.loads(capsys.readouterr().out)["measures"]]


# -- layering ------------------------------------------------------------------------------

FORBIDDEN = {
    # package folder -> sourcesum modules its files must not import
    "rankers": (
        "sourcesum.runner.run",
        "sourcesum.store.stores",
        "sourcesum.board",
        "sourcesum.outputs",
        "sourcesum.cli",
        "sourcesum.runner.protocols",
        "sourcesum.runner.configs",
        "sourcesum.store.merge",
        "sourcesum.store.published",
    ),
    "benchmark/data": (
        "sourcesum.evaluation.qrels",
        "sourcesum.evaluation.measures",
        "sourcesum.evaluation.evaluate",
        "sourcesum.stats.bootstrap",
        "sourcesum.store.stores",
        "sourcesum.runner.run",
        "sourcesum.board",
        "sourcesum.outputs",
        "sourcesum.cli",
        "sourcesum.rankers",
    ),
    "benchmark/board": ("sourcesum.outputs", "sourcesum.cli", "sourcesum.runner.run"),
    "benchmark/outputs": (
        "sourcesum.cli",
        "sourcesum.runner.run",
        "sourcesum.store.stores",
        "sourcesum.runner.configs",
        "sourcesum.runner.protocols",
        "sourcesum.data.sources",
    ),
}
LOADERS = ("load_split",)


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """Modules imported by ``path`` and the names it imports from them."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules, names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
            names |= {alias.name for alias in node.names}
    return modules, names


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_layers_import_only_downward(folder):
    offences = []
    for path in sorted((PROJECT_ROOT / folder).rglob("*.py")):
        modules, names = _imports(path)
        for module in modules:
            if any(module == bad or module.startswith(bad + ".") for bad in FORBIDDEN[folder]):
                offences.append(f"{path.relative_to(PROJECT_ROOT)} imports {module}")
        if folder == "rankers" and set(LOADERS) & names:
            offences.append(f"{path.relative_to(PROJECT_ROOT)} imports a split loader")
    assert offences == []
