"""Layers: reporting commands import no model library (torch, transformers,
sentence-transformers) and no plotting library unless they draw; rendering a board never builds
a ranker, so it needs nothing a ranker would read (a model, a prompt file).

The board here is a declared synthnews board: lead, random, bm25 and oracle computed, and
entries of llm_judge, learned and fusion fabricated with the store API under the keys their
configurations compute (computing them would need models; rendering must not care).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sourcesum.data import dataset, load_split
from sourcesum.rankers import create_ranker
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_splits
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.stores import ScoreStore
from support.boards import declaration
from support.data import SYNTHETIC

HEAVY = ("torch", "transformers", "sentence_transformers", "matplotlib")


COMPUTED = ("lead", "random", "bm25", "oracle")


FABRICATED = (
    ("llm_judge", {"dtype": "float32"}),
    ("learned", {"rankers": "bm25,lead", "protocol": "cross-corpus"}),
    ("fusion", {"rankers": "bm25,lead"}),
)


DECLARATION = declaration(
    rows=(
        "lead",
        "random",
        "bm25",
        ("llm_judge", '{ dtype = "float32" }'),
        ("learned", '{ rankers = "bm25,lead", protocol = "cross-corpus" }'),
        ("fusion", '{ rankers = "bm25,lead" }'),
    )
)


def overlap_scores(pair) -> list[float]:
    """A stand-in for a model's scores: summary words in the sentence, earlier ones first."""
    summary = set(pair.summary.lower().split())
    return [len(summary & set(s.lower().split())) - i / 100 for i, s in enumerate(pair.sentences)]


def fabricate(store: ScoreStore, ranker: str, params: dict) -> Configuration:
    """A complete entry of the configuration on every synthnews board split, saved where the
    board looks for it (the key the configuration computes)."""
    config = Configuration.of(ranker, params)
    for name in dataset("synthnews").board_splits():
        split = load_split(name)
        entry = ScoreEntry(
            ranker=config.ranker,
            version=config.key_version(name),
            params=config.params,
            label=config.label,
            split=name,
            data_sha256=split.sha256,
            n_pairs=len(split),
            scores={p.id: overlap_scores(p) for p in split},
        )
        assert entry.key == config.entry_key(name, split.sha256)
        store.save(entry)
    return config


@pytest.fixture(scope="module")
def synthetic_board(tmp_path_factory) -> tuple[Path, Path]:
    """(store folder, declaration): the declared synthnews board of the module docstring."""
    root = tmp_path_factory.mktemp("layers")
    store = ScoreStore(root / "scores")
    splits = [load_split(name) for name in dataset("synthnews").board_splits()]
    for name in COMPUTED:
        run_splits(create_ranker(name), splits, store, progress=False)
    for ranker, params in FABRICATED:
        fabricate(store, ranker, params)
    declaration = root / "leaderboard.toml"
    declaration.write_text(DECLARATION)
    return store.root, declaration


def _imported(argv: list[str], env: dict[str, str] | None = None, synthetic: bool = True) -> list[str]:
    """The heavy modules loaded by ``sourcesum ARGV`` in a fresh interpreter; ``synthetic``:
    with the synthetic datasets registered (as a plugin would be) over an empty committed store."""
    setup = (
        f"sys.path.insert(0, {str(SYNTHETIC)!r}); import synthetic_datasets; "
        "from sourcesum import paths; paths.COMMITTED_SCORES_DIR = paths.DATA_ROOT / 'no-such-store'; "
        if synthetic
        else ""
    )
    script = (
        f"import sys; {setup}import sourcesum.cli as c; code = c.main(sys.argv[1:]); "
        f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules)); sys.exit(code)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=600, env=env
    )
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("HEAVY="))
    return [m for m in line[len("HEAVY=") :].split(",") if m]


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--json"],
        # the other commands: full suite only (each a CLI subprocess)
        pytest.param(
            [
                "leaderboard",
                "--declaration",
                "DECLARATION",
                "--scores-dir",
                "STORE",
                "--format",
                "json",
                "-o",
                "-",
            ],
            marks=pytest.mark.slow,
        ),
        pytest.param(
            [
                "compare",
                "bm25",
                "lead",
                "--split",
                "synth_alpha_sys",
                "--resamples",
                "1000",
                "--scores-dir",
                "STORE",
            ],
            marks=pytest.mark.slow,
        ),
        pytest.param(["show", "PAIR", "--scores-dir", "STORE"], marks=pytest.mark.slow),
    ],
    ids=["list", "leaderboard", "compare", "show"],
)
def test_reporting_commands_import_no_model_library(argv, request):
    names = {}
    if {"STORE", "DECLARATION"} & set(argv):
        store, declaration = request.getfixturevalue("synthetic_board")
        names = {"STORE": str(store), "DECLARATION": str(declaration)}
    names["PAIR"] = load_split("synth_beta_ref").pairs[0].id
    assert _imported([names.get(a, a) for a in argv]) == []


@pytest.mark.real_data
@pytest.mark.slow  # a CLI subprocess reading the whole committed store
def test_the_committed_board_imports_no_model_library():
    """Every ranker of the official declaration, from the committed store."""
    assert _imported(["leaderboard", "--format", "json", "-o", "-"], synthetic=False) == []


@pytest.mark.slow  # two CLI subprocesses
def test_drawing_the_plot_imports_matplotlib_only(tmp_path, synthetic_board):
    store, declaration = synthetic_board
    env = {**os.environ, "SOURCESUM_CACHE_DIR": str(tmp_path / "cache")}
    argv = ["leaderboard", "--declaration", str(declaration), "--scores-dir", str(store)]
    argv += ["-o", str(tmp_path / "board.md")]
    assert _imported(argv, env) == ["matplotlib"]
    drawn = (tmp_path / "board.png").read_bytes()
    assert _imported(argv, env) == []  # an unchanged board reuses the memoised plot
    assert (tmp_path / "board.png").read_bytes() == drawn


def render_everything(store: Path, declaration: Path, out: Path) -> str:
    """Every output of the declared board and of `--all`: Markdown, JSON, CSV, LaTeX, the plot,
    the site with its explorers; returns the Markdown."""
    from sourcesum.board import collect, collect_declared, read_declaration, view_of
    from sourcesum.board.explorer import explorer_data
    from sourcesum.outputs.latex import render_latex
    from sourcesum.outputs.markdown import render_markdown
    from sourcesum.outputs.plot import render_png
    from sourcesum.outputs.site import build_site
    from sourcesum.outputs.tables import render_csv, render_json

    readonly = ScoreStore(store, writable=False)
    board = collect_declared(read_declaration(declaration), readonly)
    view = view_of(board, resamples=200)
    text = render_markdown(view)
    for render in (render_json, render_csv, lambda v: render_latex(v, ci=True)):
        assert render(view)
    assert render_png(view).startswith(b"\x89PNG")
    build_site(view, {s.name: explorer_data(board, s.name) for s in board.splits}, out)
    everything = collect(readonly, dataset_name="synthnews")
    assert not everything.stale and {r.label for r in everything.rows} == {r.label for r in board.rows}
    assert render_markdown(view_of(everything, resamples=200))
    return text


def test_rendering_a_board_never_instantiates_a_ranker(synthetic_board, tmp_path, monkeypatch):
    from sourcesum.rankers.base import Ranker

    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))

    def refuse(cls, *args, **kwargs):
        raise AssertionError(f"ranker {cls.__name__} instantiated while rendering")

    monkeypatch.setattr(Ranker, "__new__", refuse)
    with pytest.raises(AssertionError, match="instantiated"):
        create_ranker("lead")  # the patch holds for every ranker class
    store, declaration = synthetic_board
    text = render_everything(store, declaration, tmp_path / "site")
    from sourcesum.board.names import default_name

    for ranker, params in FABRICATED:
        config = Configuration.of(ranker, params)
        assert f"| {default_name(config)} |" in text and f"`{config.label}`" in text  # name; full label
    assert "## Reference rows" in text and "| oracle | 1.0000" in text
    # the CLI's paths too (declared and --all)
    from sourcesum.cli import main

    declared = ["leaderboard", "--declaration", str(declaration), "--scores-dir", str(store)]
    assert main([*declared, "-o", str(tmp_path / "declared.md")]) == 0
    assert (
        main(["leaderboard", "--all", "--dataset", "synthnews", "--scores-dir", str(store), "-o", "-"]) == 0
    )
    assert main(["site", *declared[1:], "-o", str(tmp_path / "cli-site")]) == 0


def test_a_board_with_the_llm_judge_renders_without_the_prompt_files(synthetic_board, tmp_path, monkeypatch):
    """The LLM judge's default template is the paper's prompt v2, a published file; the board
    keys and labels the row from its parameters, so the files need not be there."""
    from sourcesum.errors import DataError
    from sourcesum.store.published import read_prompt

    empty = tmp_path / "no-published-files"
    empty.mkdir()
    monkeypatch.setenv("SOURCESUM_PUBLISHED_DIR", str(empty))
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(DataError, match="has no gpt_prompt_v2.txt"):
        read_prompt("v2")
    judge = Configuration.of("llm_judge", {"dtype": "float32"})
    assert judge.params["template"] == "auto"
    with pytest.raises(DataError, match="has no gpt_prompt_v2.txt"):
        judge.create()  # the ranker itself cannot be built here
    store, declaration = synthetic_board
    text = render_everything(store, declaration, tmp_path / "site")
    from sourcesum.board.names import default_name

    line = next(x for x in text.splitlines() if x.startswith(f"| {default_name(judge)} |"))
    split = load_split("synth_alpha_sys")
    from sourcesum.evaluation.evaluate import evaluate_split
    from sourcesum.evaluation.measures import NDCG

    expected = evaluate_split(split, {p.id: overlap_scores(p) for p in split}, judge.label).mean(NDCG)
    assert line.split(" | ")[1].strip("*").startswith(f"{expected:.4f}")
