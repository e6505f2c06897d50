"""Every script under scripts/ imports against the package and answers ``--help`` with a usage
line and a paragraph saying what it measures and prints; the cheap ones also run for real.

The ``--help`` checks run each script in a fresh interpreter with no data folder configured
(``--help`` must neither need the data nor run anything), so a script added to scripts/ that does
not import fails here (those that import torch are ``slow``: 1-2.5 s each). The real runs read
the real SourceSum files and the committed score store (``real_data``); each takes 3-30 s on 2
CPU cores (``slow``). The LM and LLM scripts (minutes to hours of model time),
``bench_learned.py`` (about a minute), ``select_learned.py`` (about 10 minutes),
``check_readme.py`` (tests/test_readme.py runs it) and ``site_screenshot.py`` (writes docs/*.png;
needs Chromium) are checked through ``--help`` only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sourcesum import stats
from sourcesum.data import dataset, split_spec
from sourcesum.paths import PROJECT_ROOT

SCRIPTS = sorted((PROJECT_ROOT / "scripts").glob("*.py"))
_TORCH = re.compile(r"^(import torch|from torch)\b", re.M)


def help_case(script: Path):
    """A script whose module imports torch takes 1-2.5 s to answer ``--help`` (4.5 s measured at
    load average 4 on 2 cores): ``slow``; the others take well under a second."""
    heavy = bool(_TORCH.search(script.read_text(encoding="utf-8")))
    return pytest.param(script, id=script.name, marks=[pytest.mark.slow] if heavy else [])


def run_script(name: str, *args: str, env: dict[str, str] | None = None, timeout: float = 120):
    """``python scripts/NAME ARGS`` in the checkout, its output captured."""
    return subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "scripts" / name), *args],
        cwd=PROJECT_ROOT,
        env=env if env is not None else dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def without_data() -> dict[str, str]:
    """The environment with no data or published-output folder named (and no downloads)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SOURCESUM_DATA_DIR", "SOURCESUM_PUBLISHED_DIR")}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def test_the_scripts_are_collected():
    names = {p.name for p in SCRIPTS}
    assert {"bench_metrics.py", "bench_leaderboard.py", "select_learned.py", "check_readme.py"} <= names


@pytest.mark.parametrize("script", [help_case(s) for s in SCRIPTS])
def test_script_imports_and_answers_help(script: Path):
    source = script.read_text(encoding="utf-8")
    assert 'if __name__ == "__main__":' in source, f"{script.name} runs on import (tests import scripts)"
    done = run_script(script.name, "--help", env=without_data(), timeout=60)
    assert done.returncode == 0, f"{script.name} --help failed:\n{done.stderr}"
    blocks = done.stdout.split("\n\n")
    assert blocks[0].startswith(f"usage: {script.name}"), done.stdout
    description = blocks[1] if len(blocks) > 1 else ""
    assert not description.startswith(("options:", "positional arguments:")), (
        f"{script.name} --help has no description:\n{done.stdout}"
    )
    assert len(description.split()) >= 15 and "print" in description.lower(), (
        f"{script.name}: the description should say what it measures and prints:\n{description}"
    )


def board_pairs() -> int:
    return sum(split_spec(name).pairs for name in dataset("sourcesum").board_splits())


@pytest.mark.real_data
@pytest.mark.slow  # ~4 s: the scikit-learn loop over 1,211 pairs runs twice
def test_bench_metrics_gives_the_same_numbers_faster():
    done = run_script("bench_metrics.py", "--repeat", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"^pairs: (\d+)$", out, re.M).group(1) == str(board_pairs())
    slow = float(re.search(r"scikit-learn per-pair loop:\s+([\d.]+) ms", out).group(1))
    fast = float(re.search(r"vectorized \(benchmark\):\s+([\d.]+) ms", out).group(1))
    speedup, diff = re.search(r"speed-up: (\d+)x\s+max \|difference\|: (\S+)", out).groups()
    assert float(diff) < 1e-12  # the same nDCG and AP per pair, to rounding
    # the ratio of the unrounded timings: within rounding of the two printed ones
    assert slow > 0 and fast > 0 and abs(int(speedup) - slow / fast) <= 1 + 0.01 * slow / fast
    assert int(speedup) >= 10  # measured 446x on 2 shared cores


@pytest.mark.real_data
@pytest.mark.slow  # ~40 s: six `sourcesum leaderboard` processes, three of them with cold statistics
def test_bench_leaderboard_times_cold_and_warm_boards_without_heavy_imports():
    done = run_script("bench_leaderboard.py", "--repeats", "1", timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["cpu_count"] == os.cpu_count()
    runs = report["runs"]
    assert set(runs) == {"markdown (draws the plot)", "json (no plot)", "--all, markdown"}
    for result in runs.values():
        assert result["cold_s"] > 0 and result["warm_s"] > 0
        assert result["cold_cpu_s"] > 0 and result["warm_cpu_s"] > 0
        # rendering a board never loads a model
        assert not {"torch", "transformers", "sentence_transformers"} & set(result["heavy_modules_imported"])
    assert runs["json (no plot)"]["heavy_modules_imported"] == []


@pytest.mark.real_data
@pytest.mark.slow  # ~10 s with an empty statistics memo, plus one `sourcesum compare`
def test_learned_vs_published_cells_are_what_sourcesum_compare_prints(tmp_path: Path):
    env = {**os.environ, "SOURCESUM_CACHE_DIR": str(tmp_path / "cache")}
    done = run_script("learned_vs_published.py", "--markdown", env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    label = done.stdout.splitlines()[0]
    assert label.startswith("learned(") and "protocol=cross-corpus" in label
    rows = [line.strip("| ").split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")]
    header, cells = rows[0], rows[1:]  # the header, then one row per cell (|---| starts with "|-")
    assert header[0] == "split" and len(cells) == 8
    board_splits = dataset("sourcesum").board_splits()
    assert [(c[0], c[1]) for c in cells] == [(s, m) for s in board_splits for m in ("nDCG", "AP")]
    # p ± MC error, sign patterns drawn, Holm p [interval], decision: the rule's decision is
    # the one its Holm interval gives, and "significant" only with the interval below 0.05
    for cell in cells:
        p, error = (float(x) for x in cell[6].split(" ± "))
        assert 0 < p <= 1 and 0 <= error <= 0.01
        holm, low, high = (float(x) for x in re.findall(r"[\d.]+", cell[8]))
        assert low <= holm <= high and p <= holm + 1e-4
        expected = "significant" if high < 0.05 else "not significant" if low >= 0.05 else "undecided"
        assert cell[9] == expected, cell
    raw = [float(c[6].split(" ± ")[0]) for c in cells]
    holm = [float(c[8].split(" [")[0]) for c in cells]
    assert holm == pytest.approx(stats.holm(raw), abs=2e-4)  # printed to 4 decimals

    # The first cell's raw p-value and means are exactly what `sourcesum compare` prints.
    split, measure, mean_a, best, mean_b = cells[0][:5]
    exe = shutil.which("sourcesum")
    assert exe, "the sourcesum command is not on PATH (activate .venv)"
    empty = tmp_path / "scores"
    empty.mkdir()
    compared = subprocess.run(
        [exe, "compare", label, best, "--split", split, "--measures", measure, "--json"]
        + ["--scores-dir", str(empty)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compared.returncode == 0, compared.stderr
    [comparison] = json.loads(compared.stdout)["comparisons"]
    assert (comparison["a"], comparison["b"], comparison["measure"]) == (label, best, measure)
    # the same seed and memoised batches: with as many sign patterns drawn, the same p-value
    if comparison["flips"] == int(cells[0][7].replace(",", "")):
        assert f"{comparison['p_randomization']:.4f}" == cells[0][6].split(" ± ")[0]
    else:
        assert (
            abs(comparison["p_randomization"] - float(cells[0][6].split(" ± ")[0]))
            <= 4 * comparison["p_mc_se"]
        )
    assert f"{comparison['mean_a']:.4f}" == mean_a.split(" [")[0]
    assert f"{comparison['mean_b']:.4f}" == mean_b.split(" [")[0]
