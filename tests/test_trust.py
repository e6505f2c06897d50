"""What an adversarial pass found and how each is closed: outputs that escape what they print,
names that cannot spoof, plugin data checked before use, one conflict rule for every reader,
degenerate server responses, and clear one-line errors (the memo's findings are in
tests/test_memo.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sourcesum import paths
from sourcesum.cli import main
from sourcesum.data import load_split
from sourcesum.rankers import create_ranker
from sourcesum.runner import run_ranker
from sourcesum.store import ScoreStore

BOARD_SPLITS = ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def fill(store: Path, rankers: tuple[str, ...] = ("lead", "bm25")) -> ScoreStore:
    """``rankers`` on synthnews's board splits in the store at ``store``."""
    scores = ScoreStore(store)
    for split in BOARD_SPLITS:
        for name in rankers:
            run_ranker(create_ranker(name), load_split(split), scores, progress=False)
    return scores


# -- outputs escape what they print ---------------------------------------------------------
def test_a_file_name_with_escape_sequences_reaches_the_board_as_visible_text(tmp_path, capsys, scores_dir):
    fill(scores_dir)
    (scores_dir / "lead" / "synth_alpha_sys.\x1b]0;pwned\x07\x1b[2J.json").write_text("{}")
    code, _, err = run_cli(
        capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(tmp_path / "b.md")
    )
    assert code == 0, err
    board = (tmp_path / "b.md").read_text()
    assert "## Skipped score files" in board and "\\x1b]0;pwned\\x07" in board
    assert not any(ord(c) < 32 and c not in "\n" for c in board)
    assert "\x1b" not in err


def test_boards_name_stores_relative_to_the_checkout_or_home_never_absolute(tmp_path, capsys, scores_dir):
    fill(scores_dir)
    (scores_dir / "lead" / "synth_alpha_sys.bad.json").write_text("{}")
    out = tmp_path / "b.md"
    args = ("leaderboard", "--all", "--dataset", "synthnews", "--scores-dir", str(scores_dir), "-o", str(out))
    assert run_cli(capsys, *args)[0] == 0
    board = out.read_text()
    assert re.search(r"(?<![.\w])" + re.escape(str(tmp_path)), board) is None  # ../../tmp/... only
    assert paths.shown(scores_dir) in board and paths.shown(scores_dir).startswith(("~", ".."))
    assert paths.shown(paths.PROJECT_ROOT / "data" / "scores") == "data/scores"
    assert paths.shown(Path.home() / "x" / "y") == "~/x/y"


def test_raw_html_in_a_declared_name_is_text_on_the_markdown_board(tmp_path, capsys, scores_dir):
    fill(scores_dir)
    decl = tmp_path / "board.toml"
    decl.write_text(
        'dataset = "synthnews"\n[[rows]]\nranker = "lead"\nname = "<script>alert(1)</script> & co"\n'
        '[[rows]]\nranker = "bm25"\n'
    )
    out = tmp_path / "b.md"
    args = ("leaderboard", "--declaration", str(decl), "--scores-dir", str(scores_dir), "-o", str(out))
    code, _, err = run_cli(capsys, *args)
    assert code == 0, err
    board = out.read_text()
    assert "<script>" not in board.replace("`<script>alert(1)</script> & co`", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in board


# -- names that cannot spoof ----------------------------------------------------------------
@pytest.mark.parametrize(
    "split_name", ["../escape", "wice", "all", "synthnews", "naïve", "a/b"], ids=lambda s: repr(s)
)
def test_a_split_name_that_is_not_a_plain_new_name_is_refused(split_name):
    from sourcesum.data import DATASETS, Dataset, SplitSpec

    class Sneaky(Dataset):
        name = "sneaky_test"
        title = "Sneaky"
        splits = (SplitSpec(split_name, "Sneaky", 1, "", ("x.json",), board=True),)

    with pytest.raises(TypeError, match="split name"):
        DATASETS.register(Sneaky)
    assert "sneaky_test" not in DATASETS


def test_the_store_writes_only_inside_itself(tmp_path):
    from sourcesum.errors import ScoreFileError

    store = ScoreStore(tmp_path / "store")
    for ranker, split, key in (("lead", "../x", "a" * 12), ("..", "s", "a" * 12), ("lead", "s", "../../k")):
        with pytest.raises(ScoreFileError, match="is not"):
            store.path_for(ranker, split, key)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [("bm25", "a ranker's name"), ("bm25(k1=2.0)", "another row's label"), ("lead", "a ranker's name")],
)
def test_a_display_name_cannot_pass_for_another_row(name, fragment, tmp_path, capsys, scores_dir):
    decl = tmp_path / "board.toml"
    decl.write_text(
        f'dataset = "synthnews"\n[[rows]]\nranker = "random"\nname = "{name}"\n'
        '[[rows]]\nranker = "bm25"\nparams = { k1 = 2.0 }\n'
    )
    code, _, err = run_cli(capsys, "leaderboard", "--declaration", str(decl), "-o", str(tmp_path / "b.md"))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "the row random is named" in err and fragment in err and str(decl) in err


def test_a_row_may_keep_its_own_label_as_its_name(tmp_path, capsys, scores_dir):
    fill(scores_dir, ("lead", "bm25"))
    decl = tmp_path / "board.toml"
    decl.write_text(
        'dataset = "synthnews"\n[[rows]]\nranker = "lead"\nname = "lead"\n[[rows]]\nranker = "bm25"\n'
    )
    args = (
        "leaderboard",
        "--declaration",
        str(decl),
        "--scores-dir",
        str(scores_dir),
        "-o",
        str(tmp_path / "b.md"),
    )
    assert run_cli(capsys, *args)[0] == 0


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


# -- plugin data is checked before use ------------------------------------------------------
def _label_dataset(graded: list[float], parse_error: Exception | None = None):
    import json

    from sourcesum.data import DATASETS, Dataset, Judgment, Pair, ParsedSplit, Source, SplitSpec
    from sourcesum.hashing import sha256_bytes

    payload = json.dumps({"graded": graded}).encode()

    class Labels(Dataset):
        name = "labels_test"
        title = "Labels"
        binary_threshold = 1
        max_graded = 4
        splits = (SplitSpec("labels_split", "Labels", 1, "", ("labels.json",), board=True),)

        def sources(self):
            return {
                "labels": Source(
                    name="labels",
                    repository="test",
                    commit="c",
                    url_template="https://example.invalid/{commit}/{path}",
                    license="none",
                    files={"labels.json": {"path": "labels.json", "sha256": sha256_bytes(payload)}},
                    env_var="SOURCESUM_LABELS_TEST_DIR",
                    download_dir="labels_test_downloads",
                    citation="",
                )
            }

        def parse(self, spec, files):
            if parse_error is not None:
                raise parse_error
            sentences = tuple(f"s{i}" for i in range(len(graded)))
            pair = Pair(
                id="p0", split=spec.name, sentences=sentences, summary="x", document=" ".join(sentences)
            )
            return ParsedSplit((pair,), (Judgment.of(graded, [min(1.0, abs(g)) for g in graded]),))

    DATASETS.register(Labels)
    return Labels, payload


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), -1.0, 1e9])
def test_labels_outside_the_relevance_policy_are_one_error_naming_dataset_file_and_pair(
    bad, tmp_path, monkeypatch, capsys, scores_dir
):
    from sourcesum.data import DATASETS
    from sourcesum.data import datasets as module

    cls, payload = _label_dataset([0.0, bad, 1.0])
    (tmp_path / "labels.json").write_bytes(payload)
    monkeypatch.setenv("SOURCESUM_LABELS_TEST_DIR", str(tmp_path))
    try:
        code, _, err = run_cli(capsys, "run", "--ranker", "lead", "--split", "labels_split", "--no-progress")
    finally:
        DATASETS.unregister(cls.name)
        module.dataset.cache_clear()
        module._LOADED.pop("labels_split", None)
    assert code == 2 and err.count("\n") == 1, err
    assert "labels.json" in err and "dataset labels_test, pair p0" in err and "relevance" in err
    assert not list(scores_dir.rglob("*.json"))


def test_a_dataset_parser_that_fails_is_one_error_naming_dataset_split_and_file(
    tmp_path, monkeypatch, capsys, scores_dir
):
    from sourcesum.data import DATASETS
    from sourcesum.data import datasets as module

    cls, payload = _label_dataset([0.0, 1.0], parse_error=KeyError("annotations"))
    (tmp_path / "labels.json").write_bytes(payload)
    monkeypatch.setenv("SOURCESUM_LABELS_TEST_DIR", str(tmp_path))
    try:
        code, _, err = run_cli(capsys, "run", "--ranker", "lead", "--split", "labels_split", "--no-progress")
    finally:
        DATASETS.unregister(cls.name)
        module.dataset.cache_clear()
    assert code == 2 and err.count("\n") == 1, err
    assert "dataset labels_test, split labels_split" in err and "labels.json" in err and "KeyError" in err
