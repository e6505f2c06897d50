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
from support.data import SYNTHETIC, synthetic_plugin_env


def _sourcesum(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sourcesum", *argv], capture_output=True, text=True, env=env, timeout=600
    )


@pytest.mark.slow  # CLI subprocesses
def test_a_dataset_plugin_from_an_entry_point_lists_runs_evaluates_and_renders(tmp_path):
    env = synthetic_plugin_env(tmp_path)
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
    header = render_csv(view).splitlines()[0].split(",")
    assert {"top1", "top1_ci_low", "top1_p_vs_best", "avg_top1"} <= set(header)
    assert ["Top", "Top-1"] in plot_inputs(view)["measures"]
    explorer = explorer_data(board, "synth_beta_sys")
    assert {"key": "top1", "name": "Top-1"} in explorer["measures"]
    assert all(len(p["values"]["top1"]) == len(explorer["rankers"]) for p in explorer["pairs"])
    assert main(["list", "--json"]) == 0
    assert "Top" in [m["family"] for m in json.loads(capsys.readouterr().out)["measures"]]


# -- layering ------------------------------------------------------------------------------


ALLOWED = {
    # a module of this folder (or top-level module) may import these sourcesum units, besides its
    # own folder: one rule per folder, data -> qrels/run -> measures -> statistics -> view -> outputs
    "sourcesum": set(),  # the package's __init__
    "errors": set(),
    "paths": set(),
    "registry": {"errors"},
    "params": {"errors"},
    "util": {"errors", "paths"},
    "data": {"errors", "paths", "registry", "params", "util"},
    "evaluation": {"errors", "paths", "registry", "params", "util", "data"},
    "stats": {"errors", "util"},
    "store": {"errors", "paths", "registry", "util", "data", "evaluation.qrels"},
    "rankers": {"errors", "paths", "registry", "params", "util", "data", "evaluation"},
    "runner": {"errors", "paths", "registry", "params", "util", "data", "evaluation", "store", "rankers"},
    "board": {
        "sourcesum",
        "errors",
        "paths",
        "registry",
        "params",
        "util",
        "data",
        "evaluation",
        "stats",
        "store",
        "runner.configs",
        "rankers.base",
        "board.view",  # the package and its pipeline read the view last
    },
    "board.view": {
        "errors",
        "util",
        "data",
        "evaluation",
        "stats",
        "store.entry",
        "store.published",
        "board",
    },
    "outputs": {"sourcesum", "errors", "paths", "util", "data", "evaluation", "stats", "board"},
    # the notebook API: the board's lookups and tests as calls, never an output
    "api": {"sourcesum", "errors", "paths", "util", "data", "evaluation", "stats", "store", "board"},
    "cli": {
        "sourcesum",
        "errors",
        "paths",
        "registry",
        "params",
        "util",
        "data",
        "evaluation",
        "stats",
        "store",
        "rankers",
        "runner",
        "board",
        "api",
        "outputs",
    },
    "__main__": {"cli"},
}
"""What each unit may import. ``board.view`` imports no ranker and runs nothing; ``rankers`` never
reach the runner, the store, the board or the outputs."""


def _module_name(path: Path) -> str:
    rel = path.relative_to(PROJECT_ROOT)
    parts = ["sourcesum", *rel.parts[1:]] if rel.parts[0] == "benchmark" else ["sourcesum", *rel.parts]
    parts[-1] = parts[-1].removesuffix(".py")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    files = [*(PROJECT_ROOT / "benchmark").rglob("*.py"), *(PROJECT_ROOT / "rankers").rglob("*.py")]
    return {_module_name(p): p for p in files}


def _imported(path: Path, modules: dict[str, Path]) -> tuple[set[str], set[str]]:
    """The sourcesum modules ``path`` imports anywhere in it (function-local imports included),
    each resolved to the module named (``from a import b``: ``a.b`` when it is a module), and the
    names it imports."""
    out, names = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            targets = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                for a in node.names
            ]
            names |= {alias.name for alias in node.names}
        for target in targets:
            if target == "sourcesum" or target.startswith("sourcesum."):
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                out.add(target)
    return out, names


def _unit(module: str) -> str:
    """The folder (or top-level module) a module belongs to: ``board.view`` apart from ``board``."""
    parts = module.split(".")[1:]
    if not parts:
        return "sourcesum"
    if parts[0] == "board" and len(parts) > 1 and parts[1] == "view":
        return "board.view"
    return parts[0]


def _allowed(unit: str, target: str) -> bool:
    rel = target.removeprefix("sourcesum.") if target != "sourcesum" else "sourcesum"
    return _unit(target) == unit or any(rel == a or rel.startswith(a + ".") for a in ALLOWED[unit])


def test_every_module_imports_only_what_its_folder_may():
    modules = _modules()
    assert {_unit(m) for m in modules} <= set(ALLOWED), "a folder without a rule"
    offences = []
    for module, path in sorted(modules.items()):
        imported, names = _imported(path, modules)
        unit = _unit(module)
        offences += [f"{module} imports {t}" for t in sorted(imported) if not _allowed(unit, t)]
        if unit == "rankers" and "load_split" in names:
            offences.append(f"{module} imports a split loader")
    assert offences == []


def test_no_import_cycle_between_modules():
    """Tarjan's strongly connected components over every import, local ones included."""
    modules = _modules()
    edges = {m: _imported(p, modules)[0] - {m} for m, p in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    assert cycles == []


def test_the_layering_test_sees_local_imports(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from sourcesum.board.view import build_view\n")
    assert _imported(source, _modules())[0] == {"sourcesum.board.view"}


def test_run_loads_no_board_and_no_output_but_its_table():
    """``sourcesum run`` imports nothing of the board (a subprocess, to see its imports alone)."""
    code = (
        "import sys; from sourcesum.cli import main; "
        "main(['run', '--ranker', 'lead', '--split', 'synth_alpha_sys', '--no-progress']); "
        "print(sorted(m for m in sys.modules if m.startswith(('sourcesum.board', 'sourcesum.outputs'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(SYNTHETIC)}
    done = subprocess.run(
        [sys.executable, "-c", "import synthetic_datasets; " + code],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.strip().splitlines()[-1]
        == "['sourcesum.outputs', 'sourcesum.outputs.escape', 'sourcesum.outputs.text']"
    )
