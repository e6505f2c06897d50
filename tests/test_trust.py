"""What an adversarial pass found and how each is closed: outputs that escape what they print,
names that cannot spoof, plugin data checked before use, one conflict rule for every reader,
degenerate server responses, and clear one-line errors (the memo's findings are in
tests/test_memo.py)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from sourcesum import paths
from sourcesum.cli import main
from sourcesum.data import load_split
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore

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
    from sourcesum.util.hashing import sha256_bytes

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


# -- one conflict rule for every reader -----------------------------------------------------
def _conflicting_layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A committed store and a user store holding the same bm25 entry with one score changed."""
    committed = tmp_path / "committed"
    fill(committed, ("lead", "bm25"))
    user = tmp_path / "mine"
    (path,) = sorted((committed / "bm25").glob("synth_alpha_sys.*.json"))
    from sourcesum.store.stores import read_entry

    entry = read_entry(path)
    first = sorted(entry.scores)[0]
    entry.scores[first] = [x + 1.0 for x in entry.scores[first]]
    entry.verified = None
    ScoreStore(user).save(entry)
    monkeypatch.setattr(paths, "COMMITTED_SCORES_DIR", committed)
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(user))
    return path, user / "bm25" / path.name


@pytest.mark.parametrize(
    "argv",
    [
        ("compare", "bm25", "lead", "--split", "synth_alpha_sys"),
        ("export", "--dataset", "synthnews", "-o", "{tmp}/trec"),
        ("show", "alpha__doc0__sys__0", "--ranker", "bm25"),
        ("leaderboard", "--all", "--dataset", "synthnews", "-o", "{tmp}/all.md"),
        ("site", "--all", "--dataset", "synthnews", "-o", "{tmp}/site"),
    ],
    ids=lambda a: a[0],
)
def test_every_reader_refuses_layers_that_disagree_naming_both_files(argv, tmp_path, monkeypatch, capsys):
    committed, user = _conflicting_layers(tmp_path, monkeypatch)
    code, out, err = run_cli(capsys, *(a.replace("{tmp}", str(tmp_path)) for a in argv))
    assert code == 2, (out, err)
    assert err.startswith("error: cannot merge") and str(committed) in err and str(user) in err
    assert err.count("\n") == 1


def test_a_reexport_removes_the_run_files_of_an_earlier_export(tmp_path, capsys, scores_dir):
    fill(scores_dir, ("lead", "bm25"))
    out = tmp_path / "trec"
    assert run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(out))[0] == 0
    assert (out / "bm25.synth_alpha_sys.run").is_file()
    for path in (scores_dir / "bm25").glob("*.json"):
        path.unlink()
    (out / "notes.txt").write_text("mine")  # not the export's: kept
    assert run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(out))[0] == 0
    assert not list(out.glob("bm25.*")) and (out / "lead.synth_alpha_sys.run").is_file()
    assert (out / "notes.txt").read_text() == "mine"


# -- verify and migrate -----------------------------------------------------------------------
def _bm25_entry(store: Path) -> Path:
    run_ranker(create_ranker("bm25"), load_split("synth_alpha_sys"), ScoreStore(store), progress=False)
    (path,) = sorted((store / "bm25").glob("synth_alpha_sys.*.json"))
    return path


def _rewrite(path: Path, change) -> None:
    """Apply ``change`` to the entry at ``path`` and write it back with valid checksums."""
    from sourcesum.store.stores import read_entry

    entry = read_entry(path)
    change(entry)
    entry.verified = None
    path.write_text(entry.to_json())


def test_verify_notes_forged_library_versions_and_strict_fails_them(tmp_path, capsys):
    path = _bm25_entry(tmp_path / "store")
    _rewrite(path, lambda e: e.libraries.update(numpy="0.0.1", **{"rank-bm25": "9.9"}))
    code, out, _ = run_cli(capsys, "verify", str(path))
    assert code == 0 and "reproduced bit for bit" in out
    assert "note: recorded library versions differ" in out and "numpy (recorded 0.0.1, installed 2." in out
    code, out, _ = run_cli(capsys, "verify", "--strict", str(path))
    assert code == 1 and "NOT reproduced: recorded library versions differ" in out and "rank-bm25" in out


def test_verify_and_run_name_the_entry_holding_a_pair_its_split_lacks(tmp_path, capsys, monkeypatch):
    store = tmp_path / "store"
    path = _bm25_entry(store)

    def add_bogus(entry):
        first = sorted(entry.scores)[0]
        entry.scores["bogus_pair"] = entry.scores.pop(first)

    _rewrite(path, add_bogus)
    code, _, err = run_cli(capsys, "verify", str(path))
    assert code == 2 and str(path) in err and "holds pair bogus_pair" in err and "--pairs" not in err
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(store))
    code, _, err = run_cli(capsys, "run", "--ranker", "bm25", "--split", "synth_alpha_sys", "--no-progress")
    assert code == 2 and str(path) in err and "it holds pair bogus_pair, which split synth_alpha_sys" in err


def test_two_concurrent_migrations_convert_each_entry_once(tmp_path):
    import json
    import subprocess
    import sys

    store = tmp_path / "store"
    for split in BOARD_SPLITS:
        for name in ("lead", "bm25", "random"):
            run_ranker(create_ranker(name), load_split(split), ScoreStore(store), progress=False)
    files = sorted(store.glob("*/*.json"))
    for path in files:
        raw = json.loads(path.read_text())
        raw["format"] = "sourcesum-scores/2"
        for key in ("provenance", "header_sha256"):
            raw.pop(key)
        path.write_text(json.dumps(raw))
    script = (
        "import sys; sys.path.insert(0, 'tests/fixtures/synthetic'); import synthetic_datasets; "
        "from sourcesum.store.migrate import migrate; print(len(migrate(sys.argv[1])))"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(store)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=paths.PROJECT_ROOT,
        )
        for _ in range(2)
    ]
    results = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 for run in runs), results
    assert sorted(int(out) for out, _ in results) == [0, len(files)]


# -- the board tells the whole truth ----------------------------------------------------------
def test_same_corpus_trains_on_no_pair_of_a_document_the_scored_split_holds():
    from sourcesum.errors import RankerError
    from sourcesum.runner.configs import Configuration
    from sourcesum.runner.protocols import protocol

    spec = Configuration.of("overlap_prior", {"protocol": "same-corpus"}).protocol
    everything = load_split("synth_alpha_sys_all")  # outside the board: every main document, and more
    with pytest.raises(RankerError, match="no pair is left to train on"):
        protocol("same-corpus").assign(spec, everything, everything.pairs)
    # its last three pairs: one document shared with main pairs, two new
    scored = dataclasses.replace(
        everything,
        pairs=everything.pairs[2:],
        judgments=everything.judgments[2:],
        clusters=everything.clusters[2:],
    )
    (assignment,) = protocol("same-corpus").assign(spec, scored, scored.pairs)
    documents = {p.document_key for p in scored}
    trained = [split.pairs[i] for split, positions in assignment.training for i in positions]
    assert trained and not any(p.document_key in documents for p in trained)
    every = [p for name in ("synth_alpha_sys", "synth_alpha_ref") for p in load_split(name)]
    assert len(trained) == sum(p.document_key not in documents for p in every) < len(every)
    assert protocol("same-corpus").RULE in protocol("same-corpus").key_inputs(spec, scored.name)


def test_the_held_out_facts_on_shared_documents_are_counted():
    from types import SimpleNamespace

    from sourcesum.board.heldout import main_documents, shared_documents

    scored = load_split("synth_alpha_sys_all")
    main = {p.document_key for name in ("synth_alpha_sys", "synth_alpha_ref") for p in load_split(name)}
    assert main_documents(scored) == main
    (facts,) = shared_documents(SimpleNamespace(splits=[scored]))
    documents = {p.document_key for p in scored}
    assert (facts.documents, facts.shared_documents) == (len(documents), len(documents & main))
    assert (facts.pairs, facts.shared_pairs) == (len(scored), sum(p.document_key in main for p in scored))


@pytest.mark.real_data
def test_the_qmsum_note_names_pmi_s_most_frequent_first_candidate():
    """The declared note's example is the candidate pmi ranks first most often, with its count."""
    import collections
    import tomllib

    import numpy as np
    from sourcesum.runner.configs import Configuration
    from sourcesum.store.stores import read_entry

    split = load_split("qmsum_test")
    key = Configuration.of("pmi", {"dtype": "float32"}).entry_key(split.name, split.sha256)
    entry = read_entry(paths.COMMITTED_SCORES_DIR / "pmi" / f"qmsum_test.{key}.json")
    first = collections.Counter()
    for pair in split:
        scores = np.array(entry.scores[pair.id])
        for text in {pair.sentences[i] for i in np.flatnonzero(scores == scores.max())}:
            first[text] += 1
    (text, count), (_, runner_up) = first.most_common(2)
    assert count > runner_up
    declared = tomllib.loads(paths.DECLARATION_PATH.read_text())
    note = next(t["note"] for t in declared["tasks"] if t["dataset"] == "qmsum")
    assert f'"{text}", the most frequent, is ranked first in {count} of the {len(split)} pairs' in note
