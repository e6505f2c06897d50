"""Nothing silently wrong, nothing overwritten: each test reproduces an attack found by an
adversarial review and asserts the right outcome (on the synthetic datasets).

Root causes: provenance with gaps (1), layers that disagree (2), the committed board writable
from anything (3), memos trusted (4), injection (5), ranker output read loosely (6), hangs and
unclear errors (8). The LLM judge's (7) are in tests/test_rankers_llm.py and the LM weights' in
tests/test_rankers_lm.py.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import declaration
from sourcesum import paths
from sourcesum.board import build_view, collect, collect_declared, read_declaration, view_of
from sourcesum.cli import main
from sourcesum.data import load_split
from sourcesum.errors import ParameterError, RankerError, ScoreFileError
from sourcesum.outputs.escape import latex, md_cell, md_code, terminal
from sourcesum.outputs.markdown import render_markdown
from sourcesum.rankers import RANKERS, Ranker, create_ranker, register
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_ranker, run_splits
from sourcesum.runner.verify import sample_ids, verify_entry
from sourcesum.store.entry import FORMAT, ScoreEntry, scores_sha256
from sourcesum.store.merge import merge_stores
from sourcesum.store.migrate import migrate
from sourcesum.store.stores import ScoreStore, StoreStack, read_entry
from sourcesum.util.hashing import sha256_hex

SPLIT = "synth_alpha_sys"


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(capsys, *argv: str) -> str:
    code, _, err = cli(capsys, *argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def bm25_entry(store_root: Path) -> Path:
    run_ranker(create_ranker("bm25"), load_split(SPLIT), ScoreStore(store_root), progress=False)
    [path] = sorted((store_root / "bm25").glob(f"{SPLIT}.*.json"))
    return path


def rewrite(path: Path, edit) -> None:
    """Edit the header of an entry file with ``edit(raw)``, then recompute both checksums: a
    forgery a checksum cannot catch."""
    raw = json.loads(path.read_text())
    edit(raw)
    raw["scores_sha256"] = scores_sha256(raw["scores"])
    header = {k: v for k, v in raw.items() if k not in ("scores", "header_sha256")}
    raw["header_sha256"] = sha256_hex(header)
    path.write_text(json.dumps(raw))


# -- 1. provenance ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "field,value",
    [
        ("label", "bm25 | 1.0000 | 1.0000"),
        ("n_pairs", 1),
        ("libraries", {"numpy": "0.0"}),
        ("provenance", {"weights": "x"}),
    ],
)
def test_every_header_field_is_under_the_checksum(tmp_path, field, value):
    path = bm25_entry(tmp_path / "store")
    raw = json.loads(path.read_text())
    raw[field] = value
    path.write_text(json.dumps(raw))
    with pytest.raises(ScoreFileError, match="header_sha256|more than its n_pairs"):
        read_entry(path)


def test_a_forged_label_never_reaches_a_board_and_verify_catches_forged_scores(tmp_path, capsys):
    root = tmp_path / "store"
    path = bm25_entry(root)
    for name in ("synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"):
        run_ranker(create_ranker("bm25"), load_split(name), ScoreStore(root), progress=False)
    rewrite(path, lambda raw: raw.update(label="oracle | 1.0000"))
    board = collect(ScoreStore(root), published=False, dataset_name="synthnews")
    assert [r.label for r in board.rows] == ["bm25"]  # derived, never read from the file
    assert verify_entry(path, [ScoreStore(root)]).ok  # the scores themselves are genuine
    rewrite(path, lambda raw: raw["scores"].update({k: [1.0] * len(v) for k, v in raw["scores"].items()}))
    result = verify_entry(path, [ScoreStore(root)])
    assert not result.ok and result.identical == 0 and "NOT reproduced" in result.summary()
    code, out, _ = cli(capsys, "verify", str(path), "--scores-dir", str(root))
    assert code == 1 and "NOT reproduced" in out
    # --sample N recomputes N pairs (the same N for the same entry), and catches a forgery there
    total = len(load_split(SPLIT))
    assert 2 < total
    sampled = verify_entry(path, [ScoreStore(root)], sample=2)
    assert (sampled.checked, sampled.total) == (2, total) and not sampled.ok
    assert sample_ids(read_entry(path), 2) == sample_ids(read_entry(path), 2)
    code, out, _ = cli(capsys, "verify", str(path), "--scores-dir", str(root), "--sample", "2")
    assert code == 1 and f"2 of {total} pairs: " in out and "NOT reproduced" in out


def test_resuming_under_other_library_versions_stops_naming_both(tmp_path, monkeypatch):
    split = load_split(SPLIT)
    store = ScoreStore(tmp_path / "store")
    ranker = create_ranker("bm25")
    run_splits(
        ranker,
        [split],
        store,
        __import__("sourcesum.runner.run", fromlist=["Selection"]).Selection(limit=1),
        progress=False,
    )
    real = type(ranker).library_versions
    monkeypatch.setattr(
        type(ranker), "library_versions", classmethod(lambda cls: {**real(), "numpy": "9.9.9"})
    )
    with pytest.raises(ScoreFileError, match=r"numpy: .* in the entry, 9\.9\.9 here"):
        run_ranker(create_ranker("bm25"), split, store, progress=False)
    # the harness's own version is not part of the agreement
    monkeypatch.setattr(
        type(ranker), "library_versions", classmethod(lambda cls: {**real(), "sourcesum-bench": "9"})
    )
    entry = run_ranker(create_ranker("bm25"), split, store, progress=False)
    assert entry.complete


def test_merge_refuses_other_libraries_but_not_another_harness_version(tmp_path):
    bm25_entry(tmp_path / "a")
    b = bm25_entry(tmp_path / "b")
    rewrite(b, lambda raw: raw["libraries"].update({"sourcesum-bench": "0.0.1"}))
    assert merge_stores([tmp_path / "a", tmp_path / "b"], tmp_path / "out").entries[0].complete
    rewrite(b, lambda raw: raw["libraries"].update({"numpy": "0.0.1"}))
    with pytest.raises(ScoreFileError, match="libraries differs"):
        merge_stores([tmp_path / "a", tmp_path / "b"], tmp_path / "out2")
    assert not (tmp_path / "out2").exists() or not any((tmp_path / "out2").rglob("*.json"))  # nothing written


def test_a_row_whose_splits_disagree_on_versions_says_so(tmp_path):
    root = tmp_path / "store"
    for name in ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"):
        run_ranker(create_ranker("lead"), load_split(name), ScoreStore(root), progress=False)
    [path] = (root / "lead").glob("synth_beta_ref.*.json")
    rewrite(path, lambda raw: raw["libraries"].update({"numpy": "0.0.1"}))
    view = build_view(collect(ScoreStore(root), published=False, dataset_name="synthnews"))
    assert any(name == "lead" and "numpy (0.0.1, " in note for name, note in view.environment_notes)
    assert "**Versions differ across splits**: `lead`" in render_markdown(view)


def test_entries_of_rankers_not_installed_are_rows_only_under_all_and_marked(tmp_path, capsys):
    root = tmp_path / "store"
    path = bm25_entry(root)
    entry = read_entry(path)
    forged = ScoreEntry(**{**entry.__dict__, "ranker": "gone", "label": "bm25"})
    alien = root / "gone" / f"{SPLIT}.{forged.key}.json"
    alien.parent.mkdir()
    alien.write_text(forged.to_json())
    board = collect(ScoreStore(root), published=False, dataset_name="synthnews")
    assert "gone" not in [r.ranker for r in board.rows] and any("not installed" in s for s in board.stale)
    everything = collect(ScoreStore(root), published=False, dataset_name="synthnews", include_unknown=True)
    [row] = [r for r in everything.rows if r.ranker == "gone"]
    assert row.label.startswith("gone{") and row.label.endswith("(not installed: not re-validated)")
    # the command: `leaderboard --all` shows it, marked, and says nothing about skipping it
    from sourcesum.cli import main

    out = tmp_path / "all.md"
    argv = ["leaderboard", "--all", "--dataset", "synthnews", "--scores-dir", str(root), "-o", str(out)]
    assert main(argv) == 0
    assert "not re-validated" in out.read_text(encoding="utf-8")
    assert "gone" not in capsys.readouterr().err
    # a folder named like no ranker can be is not an entry at all
    weird = root / "bм25" / f"{SPLIT}.{forged.key}.json"
    weird.parent.mkdir()
    weird.write_text(ScoreEntry(**{**entry.__dict__, "ranker": "bм25"}).to_json())
    with pytest.raises(ScoreFileError, match="is not a name"):
        read_entry(weird)


def test_migrate_rewrites_format_2_with_scores_and_keys_unchanged(tmp_path):
    path = bm25_entry(tmp_path / "store")
    raw = json.loads(path.read_text())
    raw["format"] = "sourcesum-scores/2"
    for key in ("provenance", "header_sha256"):
        raw.pop(key)
    path.write_text(json.dumps(raw))
    with pytest.raises(ScoreFileError, match="sourcesum migrate"):
        read_entry(path)
    assert migrate(tmp_path / "store") == [path]
    again = json.loads(path.read_text())
    assert again["format"] == FORMAT and again["key"] == raw["key"] and again["scores"] == raw["scores"]
    assert read_entry(path).libraries == raw["libraries"] and migrate(tmp_path / "store") == []


# -- 2. layers that disagree -------------------------------------------------------------
def test_an_invalid_top_layer_file_never_hides_the_valid_lower_entry(tmp_path, capsys):
    lower = bm25_entry(tmp_path / "lower")
    top = tmp_path / "top" / lower.relative_to(tmp_path / "lower")
    top.parent.mkdir(parents=True)
    top.write_text("garbage")
    stack = StoreStack([ScoreStore(tmp_path / "top"), ScoreStore(tmp_path / "lower", writable=False)])
    items = list(stack.entries())
    assert any(isinstance(item, ScoreFileError) for _, item in items)
    assert any(isinstance(item, ScoreEntry) and item.ranker == "bm25" for _, item in items)


# -- 3. the committed board ---------------------------------------------------------------
@pytest.mark.parametrize(
    "argv",
    [
        ["leaderboard", "--scores-dir", "STORE"],
        ["leaderboard", "--declaration", "DECL"],
        ["leaderboard", "--measures", "nDCG,RR"],
        ["leaderboard", "-o", "COMMITTED", "--scores-dir", "STORE"],
    ],
)
def test_the_committed_board_is_written_only_from_the_committed_inputs(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(paths, "LEADERBOARD_PATH", tmp_path / "leaderboard.md")
    (tmp_path / "store").mkdir()
    (tmp_path / "decl.toml").write_text(declaration())
    names = {
        "STORE": str(tmp_path / "store"),
        "DECL": str(tmp_path / "decl.toml"),
        "COMMITTED": str(tmp_path / "leaderboard.md"),
    }
    line = one_error_line(capsys, *[names.get(a, a) for a in argv])
    assert "written only from leaderboard.toml" in line
    assert not (tmp_path / "leaderboard.md").exists() and not (tmp_path / "leaderboard.png").exists()


def test_a_personal_board_gets_its_own_plot_and_no_writer_overwrites_foreign_files(
    tmp_path, scores_dir, capsys
):
    for split in ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"):
        run_ranker(create_ranker("lead"), load_split(split), ScoreStore(scores_dir), progress=False)
    code, _, err = cli(
        capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(tmp_path / "mine.md")
    )
    assert code == 0, err
    assert (tmp_path / "mine.png").is_file() and "[`mine.png`](mine.png)" in (
        tmp_path / "mine.md"
    ).read_text()
    foreign = tmp_path / "notes.md"
    foreign.write_text("my notes")
    assert "not written by sourcesum" in one_error_line(
        capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(foreign)
    )
    assert foreign.read_text() == "my notes"
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("my page")
    line = one_error_line(capsys, "site", "--all", "--dataset", "synthnews", "-o", str(site))
    assert "did not write" in line and (site / "index.html").read_text() == "my page"


# -- 4. memos ---------------------------------------------------------------------------
def test_a_poisoned_or_damaged_memo_is_recomputed_with_a_note(tmp_path, monkeypatch, capsys):
    root = tmp_path / "store"
    for split in ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"):
        for name in ("lead", "bm25"):
            run_ranker(create_ranker(name), load_split(split), ScoreStore(root), progress=False)
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "decl.toml").write_text(declaration(rows=("lead", "bm25"), references=()))

    def board() -> str:
        return render_markdown(
            view_of(collect_declared(read_declaration(tmp_path / "decl.toml"), ScoreStore(root)))
        )

    clean = board()
    from sourcesum.util import memo

    (record,) = (tmp_path / "cache").rglob("stats/*/*.rec")
    key = record.stem
    found = memo.recall("stats", key)
    assert found is not None and found.value
    # shift every CI and p-value, sealed with a key other than the user's (anyone can make one)
    shifted = {k: [0.111, 0.222] if isinstance(v, list) else 1.0 for k, v in found.value.items()}
    body = memo.encode("stats", key, memo.Record(shifted))
    record.write_bytes(memo.MAGIC + memo._seal(b"k" * 32, body) + b"\n" + body)
    capsys.readouterr()
    assert board() == clean
    assert "not yours" in capsys.readouterr().err
    memo.keep("stats", key, memo.Record({k: "not a value" for k in found.value}))  # the user's seal
    assert board() == clean
    assert "invalid value" in capsys.readouterr().err
    for damage in (b"null", b'{"a": 1', b""):
        record.write_bytes(damage)
        assert board() == clean
    for png in (tmp_path / "cache").rglob("plots/*/*.rec"):
        png.write_bytes(b"")
    from sourcesum.outputs.plot import draw_png, is_our_plot, render_png

    view = view_of(collect_declared(read_declaration(tmp_path / "decl.toml"), ScoreStore(root)))
    assert render_png(view) == draw_png(view) and is_our_plot(render_png(view))


# -- 5. injection -------------------------------------------------------------------------
def test_string_parameters_reject_control_characters_and_names_are_ascii():
    with pytest.raises(ParameterError, match="control character"):
        Configuration.of("llm_judge", {"template": "x\n| fake | 1.0000 |", "dtype": "float32"})
    with pytest.raises(ParameterError, match="control character"):
        Configuration.of(
            "learned", {"rankers": [{"ranker": "bm25", "params": {}}], "protocol": "kfold\x1b[2J"}
        )
    assert Configuration.of("perplexity_gain", {"template": "Doc: {document}\n\nSum:{summary}"}).params[
        "template"
    ]

    class Homoglyph(Ranker):
        name = "bм25"

        def score(self, pair):
            return [0.0] * pair.n_sentences

    with pytest.raises(TypeError, match="must match"):
        register(Homoglyph)


def test_outputs_escape_what_they_print():
    assert md_cell("a | b\nc") == "a \\| b c" and md_code("a`b") == "``a`b``"
    assert latex("50% of $x_1$ & {y} #2 ~ ^ \\ < > |") == (
        r"50\% of \$x\_1\$ \& \{y\} \#2 \textasciitilde{} \textasciicircum{} \textbackslash{} "
        r"\textless{} \textgreater{} \textbar{}"
    )
    assert terminal("evil\x1b[2Jname\x07\n") == "evil\\x1b[2Jname\\x07\n"


def test_a_pipe_in_a_label_cannot_add_a_table_column(tmp_path):
    root = tmp_path / "store"
    # a label with a pipe (a str parameter may hold one): every table row keeps its columns
    for split in ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"):
        run_ranker(_Piped(tag="x | 1.0000 | 1.0000"), load_split(split), ScoreStore(root), progress=False)
    text = render_markdown(build_view(collect(ScoreStore(root), published=False, dataset_name="synthnews")))
    for table in text.split("\n\n"):  # every Markdown table of the board
        lines = table.splitlines()
        if lines and lines[0].startswith("| Ranker |"):
            piped = [line for line in lines if line.startswith("| piped")]
            assert piped and all(line.replace("\\|", "").count("|") == lines[0].count("|") for line in piped)


@register
class _Piped(Ranker):
    """A plugin whose label holds a pipe (a test ranker)."""

    name = "piped"

    def __init__(self, tag: str = ""):
        self.tag = tag

    def score(self, pair):
        return [float(-i) for i in range(pair.n_sentences)]


# -- 6. ranker output ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "returned,message",
    [
        (lambda n: {i: 1.0 for i in range(n)}, "type dict"),
        (lambda n: "1" * n, "type str"),
        (lambda n: [True] * n, "type bool"),
        (lambda n: [10**400] * n, "too large for a float"),
        (lambda n: np.zeros((n, 1)), "shape"),
    ],
)
def test_ranker_outputs_must_be_sequences_of_real_numbers(returned, message, scores_dir, capsys):
    class Loose(Ranker):
        name = "loose"

        def score(self, pair):
            return returned(pair.n_sentences)

    register(Loose)
    try:
        line = one_error_line(capsys, "run", "--ranker", "loose", "--split", SPLIT, "--no-progress")
        assert "ranker loose: pair" in line and message in line
        assert not list(Path(scores_dir).rglob("*.json"))
    finally:
        RANKERS.unregister("loose")


def test_spearman_on_constant_scores_is_undefined_and_said_so(scores_dir, capsys):
    class Flat(Ranker):
        name = "flat"

        def score(self, pair):
            return [0.5] * pair.n_sentences

    register(Flat)
    try:
        code, out, _ = cli(
            capsys, "run", "--ranker", "flat", "--split", SPLIT, "--measures", "Spearman", "--no-progress"
        )
        assert code == 0
        assert (
            "Spearman is undefined (constant scores on 3 pairs)" in out and "no relevant sentence" not in out
        )
    finally:
        RANKERS.unregister("flat")


# -- 8. hangs and unclear errors ------------------------------------------------------------
@pytest.mark.parametrize(
    "argv,fragment",
    [
        (
            ["run", "--ranker", "learned", "-p", "learned.C=1e300", "--split", SPLIT],
            "learned.C=1e+300: expected a number >= 1e-06 and <= 10000",
        ),
        (
            ["run", "--ranker", "learned", "-p", "learned.seed=-1", "--split", SPLIT],
            "learned.seed=-1: expected an integer >= 0",
        ),
        (["run", "--ranker", "learned", "-p", "learned.folds=500", "--split", SPLIT], "learned.folds=500"),
        (["compare", "lead", "bm25", "--split", SPLIT, "--seed", "-5"], "-5 is not >= 0"),
        (["compare", "lead", "bm25", "--split", SPLIT, "--resamples", "1e8"], "'1e8' is not an integer"),
        (
            ["compare", "lead", "bm25", "--split", SPLIT, "--resamples", "100000000"],
            "is not between 1,000 and 100,000",
        ),
        (
            ["compare", "lead", "bm25", "--split", SPLIT, "--resamples", "1"],
            "is not between 1,000 and 100,000",
        ),
        (
            [
                "run",
                "--ranker",
                "learned",
                "-p",
                "learned.protocol=kfold",
                "-p",
                "learned.folds=50",
                "-p",
                "learned.rankers=lead",
                "--split",
                SPLIT,
            ],
            "50 folds need at least 50 documents",
        ),
    ],
)
def test_nonsense_is_one_clear_error(argv, fragment, scores_dir, capsys):
    assert fragment in one_error_line(capsys, *argv)


def test_minus_zero_and_zero_are_one_configuration():
    assert Configuration.of("bm25", {"k1": "-0.0"}).entry_key(SPLIT, "x") == Configuration.of(
        "bm25", {"k1": 0}
    ).entry_key(SPLIT, "x")


def test_a_plugin_calling_sys_exit_is_an_error_not_a_silent_exit(scores_dir, capsys):
    class Quitter(Ranker):
        name = "quitter"

        def score(self, pair):
            raise SystemExit(0)

    register(Quitter)
    try:
        assert "SystemExit" in one_error_line(
            capsys, "run", "--ranker", "quitter", "--split", SPLIT, "--no-progress"
        )
    finally:
        RANKERS.unregister("quitter")


def test_a_full_disk_names_the_file(tmp_path, monkeypatch, capsys, scores_dir):
    import os

    real = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    line = one_error_line(capsys, "run", "--ranker", "lead", "--split", SPLIT, "--no-progress")
    monkeypatch.setattr(os, "fsync", real)
    assert "No space left on device" in line and str(scores_dir) in line


def test_a_typo_in_the_store_variable_is_an_error_for_readers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(tmp_path / "typo"))
    assert "SOURCESUM_SCORES_DIR=" in one_error_line(capsys, "compare", "lead", "random", "--split", SPLIT)
    code, _, err = cli(capsys, "run", "--ranker", "lead", "--split", SPLIT, "--no-progress")
    assert code == 0 and "created the score store" in err


def test_a_row_declared_twice_is_an_error(tmp_path, capsys):
    (tmp_path / "decl.toml").write_text(
        declaration(rows=("lead", ("bm25", "{ k1 = 1.5 }"), "bm25"), references=())
    )
    (tmp_path / "store").mkdir()
    line = one_error_line(
        capsys,
        "leaderboard",
        "--declaration",
        str(tmp_path / "decl.toml"),
        "--scores-dir",
        str(tmp_path / "store"),
        "-o",
        str(tmp_path / "b.md"),
    )
    assert "rows #2 and #3 declare the same configuration" in line


def test_export_names_stay_within_file_system_limits(tmp_path, scores_dir, capsys):
    long_tag = "t" * 300
    run_ranker(_Piped(tag=long_tag), load_split(SPLIT), ScoreStore(scores_dir), progress=False)
    code, _, err = cli(capsys, "export", "--dataset", "synthnews", "-o", str(tmp_path / "trec"))
    assert code == 0, err
    index = json.loads((tmp_path / "trec" / "sourcesum-export.json").read_text())["files"]
    [name] = [n for n, info in index.items() if info.get("ranker", "").startswith("piped")]
    assert (
        len(name.encode()) < 255
        and (tmp_path / "trec" / name).is_file()
        and long_tag in index[name]["ranker"]
    )


def test_merge_writes_nothing_when_any_entry_conflicts(tmp_path):
    bm25_entry(tmp_path / "a")
    b = bm25_entry(tmp_path / "b")
    run_ranker(create_ranker("lead"), load_split(SPLIT), ScoreStore(tmp_path / "a"), progress=False)
    rewrite(
        b,
        lambda raw: raw["scores"].update(
            {next(iter(raw["scores"])): [9.0] * len(next(iter(raw["scores"].values())))}
        ),
    )
    with pytest.raises(ScoreFileError, match="different scores"):
        merge_stores([tmp_path / "a", tmp_path / "b"], tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.json"))


def test_trained_rankers_with_bad_protocol_arguments_fail_before_training():
    with pytest.raises((RankerError, ParameterError)):
        Configuration.of("learned", {"folds": 1})
