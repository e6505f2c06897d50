"""Numbers that cannot be silently wrong: typed parameters, the declared leaderboard, a score store
that verifies itself, concurrent writers, reversible exports, and one-line errors for bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Literal

import pytest
from sourcesum import paths
from sourcesum.cli import main
from sourcesum.data import load_split
from sourcesum.errors import ParameterError, ScoreFileError
from sourcesum.export import export_name, label_of
from sourcesum.rankers import RANKERS, Ranker, create_ranker
from sourcesum.runner import run_ranker
from sourcesum.store import ScoreEntry, ScoreStore, StoreStack, migrate, read_entry


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- typed parameters ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,value",
    [
        ("False", False),
        ("no", False),
        ("OFF", False),
        ("0", False),
        ("true", True),
        ("Yes", True),
        ("on", True),
        ("1", True),
    ],
)
def test_boolean_spellings_parse_by_type(text, value):
    ranker = create_ranker("rouge1", use_stemmer=text)
    assert ranker.use_stemmer is value
    assert ranker.label == ("rouge1" if value else "rouge1(use_stemmer=False)")


@pytest.mark.parametrize(
    "name,param,value,fragment",
    [
        ("rouge1", "use_stemmer", "maybe", "rouge1.use_stemmer=maybe: expected a boolean"),
        ("bm25", "variant", "foo", "bm25.variant=foo: expected one of okapi, plus, l"),
        ("bm25", "k1", "abc", "bm25.k1=abc: expected a number >= 0"),
        ("bm25", "b", "1.5", "bm25.b=1.5: expected a number >= 0 and <= 1"),
        ("tfidf", "idf", "foo", "tfidf.idf=foo: expected one of split, document"),
        ("rouge1", "measure", "foo", "rouge1.measure=foo: expected one of fmeasure"),
        ("random", "seed", "1.5", "random.seed=1.5: expected an integer"),
        ("random", "sede", "1", "ranker 'random' has no parameter 'sede'; it accepts seed"),
    ],
)
def test_bad_parameter_values_name_the_parameter(name, param, value, fragment):
    with pytest.raises(ParameterError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        create_ranker(name, **{param: value})


def test_equal_values_are_one_configuration():
    a, b = create_ranker("bm25", k1="1"), create_ranker("bm25", k1=1.0)
    assert a.get_params() == b.get_params() and a.get_params()["k1"] == 1.0
    assert isinstance(create_ranker("bm25", k1=1).k1, float)
    assert create_ranker("lexrank", threshold="none").threshold is None


class _SimplePlugin(Ranker):
    """A plugin written the simple way: types come from annotations and defaults."""

    name = "simple_plugin_test"

    def __init__(
        self,
        flag: bool = True,
        count: int = 2,
        mode: Literal["a", "b"] = "a",
        anything=None,
        ratio: float | None = None,
    ):
        self.flag, self.count, self.mode, self.anything, self.ratio = flag, count, mode, anything, ratio

    def score(self, pair):
        return [0.0] * pair.n_sentences


def test_plugin_parameter_types_come_from_annotations_and_defaults():
    values = _SimplePlugin.canonical_params(
        {"flag": "off", "count": "3", "mode": "b", "anything": "[1, 2]", "ratio": "none"}
    )
    assert values == {"flag": False, "count": 3, "mode": "b", "anything": [1, 2], "ratio": None}
    assert _SimplePlugin.canonical_params({"anything": "plain text"}) == {"anything": "plain text"}
    with pytest.raises(ParameterError, match="simple_plugin_test.mode=c: expected one of a, b"):
        _SimplePlugin.canonical_params({"mode": "c"})
    with pytest.raises(ParameterError, match="simple_plugin_test.count=x: expected an integer"):
        _SimplePlugin.canonical_params({"count": "x"})


def test_list_shows_every_parameter(capsys):
    code, out, _ = run_cli(capsys, "list", "--json")
    rankers = {r["name"]: r for r in json.loads(out)["rankers"]}
    bm25 = {p["name"]: p for p in rankers["bm25"]["parameters"]}
    assert bm25["variant"]["choices"] == ["okapi", "plus", "l"] and bm25["k1"]["default"] == 1.5
    assert {p["name"] for p in rankers["embedding"]["parameters"] if p["runtime"]} == {"device", "batch_size"}


# --- the declared leaderboard ----------------------------------------------------------------


def _declare(path: Path, rows: list[str], references: list[str] = ()) -> Path:
    text = "".join(f'[[rows]]\nranker = "{r}"\n\n' for r in rows)
    text += "".join(f'[[references]]\nranker = "{r}"\n\n' for r in references)
    path.write_text(text)
    return path


def test_declared_board_renders_exactly_the_declared_rows(capsys, scores_dir, tmp_path):
    run_cli(capsys, "run", "--ranker", "lead,random,oracle", "--split", "all", "--no-progress")
    declaration = _declare(tmp_path / "board.toml", ["lead"], ["oracle"])
    out = tmp_path / "board.md"
    code, _, err = run_cli(
        capsys,
        "leaderboard",
        "--declaration",
        str(declaration),
        "--scores-dir",
        str(scores_dir),
        "-o",
        str(out),
    )
    assert code == 0, err
    text = out.read_text()
    assert "| lead |" in text and "| oracle |" in text and "| random |" not in text


def test_incomplete_declared_board_writes_nothing_and_says_how_to_fix(capsys, scores_dir, tmp_path):
    run_cli(capsys, "run", "--ranker", "lead", "--split", "xsum_pegasus", "--no-progress")
    declaration = _declare(tmp_path / "board.toml", ["lead", "bm25"])
    out = tmp_path / "board.md"
    code, _, err = run_cli(
        capsys,
        "leaderboard",
        "--declaration",
        str(declaration),
        "--scores-dir",
        str(scores_dir),
        "-o",
        str(out),
    )
    assert code == 2 and not out.exists() and not out.with_name("leaderboard.png").exists()
    assert err.startswith("error: 7 declared entries are not complete and valid; nothing was written")
    assert (
        "lead on cnn_pegasus: missing" in err
        and "compute: sourcesum run --ranker lead --split cnn_pegasus" in err
    )
    assert "bm25 on xsum_pegasus: missing" in err and "lead on xsum_pegasus" not in err


def test_committed_board_is_complete_and_leaderboard_md_is_current(tmp_path, capsys):
    """The official board renders from the committed store alone, byte-identical to the
    committed leaderboard.md (so nothing a user computes can change it)."""
    out = tmp_path / "leaderboard.md"
    code, _, err = run_cli(capsys, "leaderboard", "-o", str(out))
    assert code == 0, err
    assert out.read_text() == paths.LEADERBOARD_PATH.read_text()


def test_leaderboard_refuses_a_missing_store_and_all_needs_an_output(capsys, tmp_path):
    code, _, err = run_cli(capsys, "leaderboard", "--scores-dir", str(tmp_path / "typo"))
    assert code == 2 and "no such folder" in err
    code, _, err = run_cli(capsys, "leaderboard", "--all")
    assert code == 2 and "give -o FILE" in err


def test_run_writes_only_to_the_user_store(capsys, tmp_path, monkeypatch):
    """With the real committed store below, a run of a committed configuration computes nothing
    and a new configuration lands in the user store only."""
    user = tmp_path / "mine"
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(user))
    before = sorted(p.name for p in paths.COMMITTED_SCORES_DIR.glob("*/*.json"))
    assert run_cli(capsys, "run", "--ranker", "lead", "--split", "xsum_pegasus", "--no-progress")[0] == 0
    assert not user.exists()
    assert (
        run_cli(
            capsys,
            "run",
            "--ranker",
            "random",
            "-p",
            "random.seed=3",
            "--split",
            "xsum_pegasus",
            "--no-progress",
        )[0]
        == 0
    )
    assert len(list(user.glob("random/xsum_pegasus.*.json"))) == 1
    assert sorted(p.name for p in paths.COMMITTED_SCORES_DIR.glob("*/*.json")) == before


# --- a store that verifies itself --------------------------------------------------------------


@pytest.fixture
def one_entry(scores_dir) -> tuple[ScoreStore, ScoreEntry, Path]:
    store = ScoreStore(scores_dir)
    entry = run_ranker(create_ranker("lead"), load_split("xsum_pegasus"), store, progress=False)
    return store, entry, store.path_for("lead", "xsum_pegasus", entry.key)


def test_entry_records_key_checksum_and_library_versions(one_entry):
    _, entry, path = one_entry
    header = json.loads(path.read_text())
    assert header["format"] == "sourcesum-scores/2" and header["key"] == entry.key
    assert {"python", "numpy", "sourcesum-bench"} <= set(header["libraries"])
    assert read_entry(path).scores == entry.scores


def test_entry_under_another_name_is_rejected(one_entry):
    store, _, path = one_entry
    wrong = store.root / "bm25" / path.name
    wrong.parent.mkdir()
    shutil.copy(path, wrong)
    with pytest.raises(ScoreFileError, match=r"holds lead on xsum_pegasus .* belongs at lead/"):
        read_entry(wrong)


def test_edited_scores_and_headers_are_rejected(one_entry):
    _, _, path = one_entry
    text = path.read_text()
    first_value = text.split('": [', 2)[2].split(",")[0]  # first score of the first pair
    path.write_text(text.replace(f'": [{first_value},', '": [99.0,', 1))
    with pytest.raises(ScoreFileError, match="do not match their scores_sha256"):
        read_entry(path)
    path.write_text(text.replace('"version": "1"', '"version": "2"'))
    with pytest.raises(ScoreFileError, match="header key .* does not match"):
        read_entry(path)


def test_garbage_is_an_error_naming_the_file_and_all_mode_skips_it(one_entry, capsys, tmp_path):
    store, _, path = one_entry
    garbage = store.root / "lead" / "cnn_pegasus.000000000000.json"
    garbage.write_bytes(os.urandom(256) + b"\xff")
    with pytest.raises(ScoreFileError, match="cnn_pegasus.000000000000.json: not UTF-8"):
        read_entry(garbage)
    out = tmp_path / "all.md"
    code, _, err = run_cli(capsys, "leaderboard", "--all", "-o", str(out))
    assert code == 0 and "cnn_pegasus.000000000000.json: invalid" in err


def test_format_1_entries_migrate_without_touching_scores(one_entry):
    store, entry, path = one_entry
    legacy = json.loads(path.read_text())
    for key in ("key", "libraries", "scores_sha256"):
        legacy.pop(key)
    legacy["format"] = "sourcesum-scores/1"
    path.write_text(json.dumps(legacy))
    with pytest.raises(ScoreFileError, match="sourcesum migrate"):
        read_entry(path)
    assert migrate(store.root) == [path]
    assert read_entry(path).scores == entry.scores


def test_non_canonical_parameters_are_stale_not_merged(scores_dir, capsys, tmp_path):
    split = load_split("xsum_pegasus")
    good = run_ranker(create_ranker("random", seed=1), split, ScoreStore(scores_dir), progress=False)
    odd = ScoreEntry(**{**good.__dict__, "params": {"seed": "1"}, "scores": dict(good.scores)})
    ScoreStore(scores_dir).save(odd)
    out = tmp_path / "all.md"
    code, _, err = run_cli(capsys, "leaderboard", "--all", "-o", str(out))
    assert code == 0 and "not in canonical form" in err


def test_stack_reads_layers_and_writes_the_top(tmp_path):
    split = load_split("xsum_pegasus")
    below, top = ScoreStore(tmp_path / "below"), ScoreStore(tmp_path / "top")
    ranker = create_ranker("random", seed=5)
    half = run_ranker(ranker, split, below, progress=False)
    path = below.path_for("random", split.name, half.key)
    text = json.loads(path.read_text())
    kept = dict(sorted(text["scores"].items())[:50])
    partial = ScoreEntry(**{**half.__dict__, "scores": kept})
    path.unlink()
    below.save(partial)
    stack = StoreStack([top, ScoreStore(below.root, writable=False)])
    entry = run_ranker(ranker, split, stack, progress=False)
    assert entry.complete and entry.scores == half.scores
    assert len(read_entry(path).scores) == 50  # the read-only layer is untouched
    assert read_entry(top.path_for("random", split.name, half.key)).complete


_SLOW_PLUGIN = """
import time
from sourcesum.rankers import Ranker, register

@register
class SlowLength(Ranker):
    name = "slow_length_test"
    runtime_params = ("delay",)
    batch_pairs = 4

    def __init__(self, delay: float = 0.0):
        self.delay = delay

    def score(self, pair):
        time.sleep(self.delay)
        return [float(len(s)) for s in pair.sentences]
"""


@pytest.mark.slow  # two CLI subprocesses on one entry
def test_concurrent_writers_never_lose_finished_pairs(tmp_path):
    """A slow and a fast process fill one entry; the file only ever grows and ends complete."""
    (tmp_path / "slow_plugin.py").write_text(_SLOW_PLUGIN)
    store = tmp_path / "store"
    script = textwrap.dedent(f"""
        import sys
        import slow_plugin
        from sourcesum.data import load_split
        from sourcesum.rankers import create_ranker
        from sourcesum.runner import run_ranker
        from sourcesum.store import ScoreStore
        run_ranker(create_ranker("slow_length_test", delay=float(sys.argv[1])),
                   load_split("xsum_pegasus"), ScoreStore({str(store)!r}), progress=False)
    """)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    slow = subprocess.Popen([sys.executable, "-c", script, "0.03"], env=env)
    time.sleep(1.0)
    fast = subprocess.Popen([sys.executable, "-c", script, "0"], env=env)
    counts = []
    while slow.poll() is None or fast.poll() is None:
        for path in store.glob("slow_length_test/*.json"):
            try:
                counts.append(len(read_entry(path).scores))
            except ScoreFileError:
                pass
        time.sleep(0.05)
    assert slow.returncode == 0 and fast.returncode == 0
    (path,) = store.glob("slow_length_test/*.json")
    assert len(read_entry(path).scores) == 119
    assert counts == sorted(counts) and 119 in counts[:-1]  # never shrank, complete before the end


# --- exports ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label", ["random(seed=1)", "random(seed=-1)", "m(model=org/name x)", "a%2F", "x [abc123]"]
)
def test_export_names_are_reversible(label):
    assert label_of(export_name(label)) == label and "/" not in export_name(label)


def test_export_names_never_collide_and_every_file_is_listed(capsys, scores_dir, tmp_path):
    for seed in ("1", "-1"):
        run_cli(
            capsys,
            "run",
            "--ranker",
            "random",
            "-p",
            f"random.seed={seed}",
            "--split",
            "xsum_pegasus",
            "--no-progress",
        )
    folder = tmp_path / "trec"
    code, out, _ = run_cli(capsys, "export", "-o", str(folder))
    assert code == 0
    listed = [Path(line.strip()) for line in out.splitlines()[1:]]
    assert sorted(listed) == sorted(folder.iterdir())
    runs = sorted(p.name for p in folder.glob("*.run"))
    assert runs == ["random(seed=-1).xsum_pegasus.run", "random(seed=1).xsum_pegasus.run"]
    assert run_cli(capsys, "export", "-o", str(folder))[0] == 0  # our own files may be rewritten


def test_export_never_overwrites_foreign_files(capsys, scores_dir, tmp_path):
    run_cli(capsys, "run", "--ranker", "lead", "--split", "xsum_pegasus", "--no-progress")
    folder = tmp_path / "trec"
    folder.mkdir()
    (folder / "xsum_pegasus.graded.qrels").write_text("my own qrels\n")
    code, _, err = run_cli(capsys, "export", "-o", str(folder))
    assert code == 2 and "would overwrite 1 file(s) that no export wrote" in err
    assert (folder / "xsum_pegasus.graded.qrels").read_text() == "my own qrels\n"


# --- bad input: one error line naming the input, exit 2 --------------------------------------


@pytest.fixture
def bad_files(tmp_path: Path, data_dir: Path) -> Path:
    rows = json.loads((data_dir / "xsum_pegasus.json").read_text())
    for row in rows:
        for ann in row["annotations"]:
            ann["s"] = 0.5
    rows[0]["annotations"][0]["s"] = 10**400
    (tmp_path / "bigint.json").write_text(json.dumps(rows))
    (tmp_path / "string_ann.json").write_text(json.dumps([{"id": "p", "annotations": "abc"}]))
    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    (tmp_path / "binary.run").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "afile").write_text("x")
    return tmp_path


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (
            ["run", "--ranker", "bm25", "-p", "bm25.variant=foo", "--split", "xsum_pegasus"],
            "bm25.variant=foo",
        ),
        (["run", "--ranker", "bm25", "-p", "bm25.k1=abc", "--split", "xsum_pegasus"], "bm25.k1=abc"),
        (["run", "--ranker", "tfidf", "-p", "tfidf.idf=foo", "--split", "xsum_pegasus"], "tfidf.idf=foo"),
        (
            ["run", "--ranker", "rouge1", "-p", "rouge1.measure=foo", "--split", "xsum_pegasus"],
            "rouge1.measure=foo",
        ),
        (["run", "--ranker", "", "--split", "xsum_pegasus"], "--ranker '': name at least one ranker"),
        (
            ["run", "--ranker", "lead", "--split", "xsum_pegasus", "--scores-dir", "{tmp}/afile"],
            "is a file, not a folder",
        ),
        (["evaluate", "{tmp}", "--field", "x"], "is a folder, not a score file"),
        (["evaluate", "{tmp}/string_ann.json", "--field", "x"], "'annotations' is not a list"),
        (["evaluate", "{tmp}/bigint.json", "--field", "s"], "too large for a float"),
        (["evaluate", "{tmp}/deep.json", "--field", "x"], "nested too deeply"),
        (["evaluate", "{tmp}/binary.run", "--format", "trec"], "binary.run: not UTF-8 text"),
        (["compare", "lead", "random", "--resamples", "0"], "--resamples: 0 is not >= 1"),
        (["compare", "lead", "random", "--resamples", "-5"], "--resamples: -5 is not >= 1"),
        (["compare", "lead", "random", "--split", "xsum_pegasus_all"], "compare works on the main splits"),
        (["export", "-o", "{tmp}/afile"], "is a file, not a folder"),
        (["export", "-o", "/proc/no/such/place"], "error: /proc/no"),
    ],
)
def test_bad_input_is_one_error_line_with_exit_2(capsys, scores_dir, bad_files, argv, fragment):
    argv = [a.replace("{tmp}", str(bad_files)) for a in argv]
    code, _, err = run_cli(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], err


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
        code, _, err = run_cli(capsys, "run", "--ranker", "failing_fit_test", "--split", "xsum_pegasus")
        assert code == 2 and "ranker failing_fit_test failed in fit() on split xsum_pegasus: KeyError" in err
    finally:
        RANKERS._classes.pop("failing_fit_test")
