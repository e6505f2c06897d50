"""The memo holds data, never code, and never decides a tracked file: records are sealed with the
user's key (a record anyone else wrote is recomputed), checked for type and shape on recall, a
poisoned or damaged record is recomputed with a note, a full or unwritable cache folder costs
speed only, and the committed board is computed in the process that writes it."""

from __future__ import annotations

import errno
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from sourcesum import paths
from sourcesum.board import collect_declared, read_declaration, view_of
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.outputs.markdown import render_markdown
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore
from sourcesum.util import memo
from support.boards import declaration


@pytest.fixture(autouse=True)
def own_memo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder and a memo key of this test's own."""
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SOURCESUM_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "cache"


def _record() -> memo.Record:
    return memo.Record({"n": 3, "label": "x"}, {"values": np.arange(6, dtype=np.float64).reshape(2, 3)})


def test_a_record_round_trips_with_its_types_and_shapes():
    memo.keep("things", "ab" * 32, _record())
    found = memo.recall("things", "ab" * 32)
    assert found is not None and found.value == {"n": 3, "label": "x"}
    assert found.arrays["values"].dtype == np.float64 and found.arrays["values"].shape == (2, 3)
    assert (found.arrays["values"] == np.arange(6).reshape(2, 3)).all()
    assert oct(memo.key_path().stat().st_mode & 0o777) == "0o600"


def test_a_pickle_placed_in_the_memo_never_runs(own_memo, capsys):
    """The attack that ran ``os.system`` from a pickle: a file where a record would be is parsed
    as data only (and refused), so nothing in it executes."""
    witness = own_memo.parent / "ran"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (witness,))

    key = memo_key_of("entries", ["x"])
    path = memo.root() / "entries" / key[:2] / f"{key}.rec"
    path.parent.mkdir(parents=True)
    for data in (pickle.dumps(Payload()), memo.MAGIC + b"0" * 64 + b"\n" + pickle.dumps(Payload())):
        path.write_bytes(data)
        calls: list[int] = []

        def compute(calls: list[int] = calls) -> int:
            calls.append(1)
            return 7

        value = memo.memoised("entries", ["x"], compute, memo.Record, lambda r: r.value)
        assert value == 7 and calls == [1]  # refused (noted), recomputed and kept
    assert not witness.exists()
    assert "not a memo record" in capsys.readouterr().err


def test_a_record_sealed_without_the_users_key_is_recomputed(capsys):
    key = "ef" * 32
    memo.keep("things", key, _record())
    path = memo.root() / "things" / key[:2] / f"{key}.rec"
    body = memo.encode("things", key, memo.Record({"n": 1_000_000, "label": "forged"}))
    path.write_bytes(memo.MAGIC + memo._seal(b"another key of 32 bytes exactly!", body) + b"\n" + body)
    assert memo.recall("things", key) is None
    assert "not yours" in capsys.readouterr().err


def test_a_record_moved_to_another_key_is_refused(capsys):
    memo.keep("things", "aa" * 32, _record())
    source = memo.root() / "things" / "aa" / f"{'aa' * 32}.rec"
    target = memo.root() / "things" / "bb" / f"{'bb' * 32}.rec"
    target.parent.mkdir(parents=True)
    target.write_bytes(source.read_bytes())
    assert memo.recall("things", "bb" * 32) is None
    assert "another key" in capsys.readouterr().err


def test_only_plain_numeric_arrays_are_stored_or_read():
    with pytest.raises(TypeError, match="memo arrays"):
        memo.encode("things", "k", memo.Record(None, {"x": np.array([object()])}))
    body = b'{"kind":"things","key":"k","value":null,"arrays":[["x","|O",[1]]]}\n' + b"\0" * 8
    with pytest.raises(ValueError, match="dtype"):
        memo.decode("things", "k", body)
    with pytest.raises(ValueError, match="truncated"):
        memo.decode(
            "things",
            "k",
            b'{"kind":"things","key":"k","value":null,"arrays":[["x","<f8",[4]]]}\n' + b"\0" * 8,
        )


def test_a_recalled_value_of_another_shape_is_recomputed(capsys):
    def check(record: memo.Record) -> int:
        if not isinstance(record.value, int):
            raise memo.MemoMismatch("not an int")
        return int(record.value)

    memo.keep("things", memo_key_of("things", ["p"]), memo.Record("a string"))
    assert memo.memoised("things", ["p"], lambda: 5, memo.Record, check) == 5
    assert "not an int" in capsys.readouterr().err
    assert memo.memoised("things", ["p"], lambda: pytest.fail("recomputed"), memo.Record, check) == 5


def memo_key_of(kind: str, parts: list[object]) -> str:
    from sourcesum.util.hashing import sha256_hex

    return sha256_hex([kind, *parts])


def test_a_key_others_can_read_turns_the_memo_off(capsys):
    key_file = memo.key_path()
    key_file.parent.mkdir(parents=True)
    key_file.write_text("ab" * 32)
    os.chmod(key_file, 0o644)
    memo.keep("things", "ab" * 32, _record())
    assert memo.recall("things", "ab" * 32) is None and not memo.root().exists()
    assert "not private" in capsys.readouterr().err


def test_a_key_under_the_cache_folder_turns_the_memo_off(monkeypatch, own_memo, capsys):
    monkeypatch.setenv("SOURCESUM_CONFIG_DIR", str(own_memo / "config"))
    memo.keep("things", "ab" * 32, _record())
    assert memo.recall("things", "ab" * 32) is None
    assert "under the cache folder" in capsys.readouterr().err


def _synthetic_store(root: Path) -> ScoreStore:
    store = ScoreStore(root)
    for name in dataset("synthnews").board_splits():
        for ranker in ("lead", "bm25"):
            run_ranker(create_ranker(ranker), load_split(name), store, progress=False)
    return store


@pytest.fixture
def committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in checkout: a committed store, declaration and leaderboard.md of the synthnews board."""
    _synthetic_store(tmp_path / "committed")
    declaration = tmp_path / "leaderboard.toml"
    declaration.write_text('dataset = "synthnews"\n[[rows]]\nranker = "lead"\n[[rows]]\nranker = "bm25"\n')
    monkeypatch.setattr(paths, "COMMITTED_SCORES_DIR", tmp_path / "committed")
    monkeypatch.setattr(paths, "DECLARATION_PATH", declaration)
    monkeypatch.setattr(paths, "LEADERBOARD_PATH", tmp_path / "leaderboard.md")
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(tmp_path / "mine"))
    return tmp_path


def _forge_every_evaluation(value: float) -> int:
    """Set every per-pair value of every memoised evaluation to ``value``, sealed with the
    user's own key (as the strongest forger would): how many records were changed."""
    changed = 0
    for path in memo.root().glob("evaluations/*/*.rec"):
        found = memo.recall("evaluations", path.stem)
        assert found is not None
        memo.keep(
            "evaluations",
            path.stem,
            memo.Record(found.value, {"values": np.full_like(found.arrays["values"], value)}),
        )
        changed += 1
    return changed


def test_no_memo_reaches_the_tracked_board(committed, capsys):
    assert main(["leaderboard"]) == 0
    tracked = (committed / "leaderboard.md").read_text()
    assert main(["leaderboard", "-o", str(committed / "other.md")]) == 0  # warms the memo
    assert "0.4321" not in tracked
    assert _forge_every_evaluation(0.4321) > 0
    assert main(["leaderboard"]) == 0
    assert (committed / "leaderboard.md").read_text() == tracked
    # the tracked board kept what it computed; an output that is not tracked reads the memo, where
    # a record sealed with the user's own key is the user's
    assert _forge_every_evaluation(0.4321) > 0
    assert main(["leaderboard", "-o", str(committed / "other.md")]) == 0
    assert "0.4321" in (committed / "other.md").read_text()
    assert main(["leaderboard", "--no-memo", "-o", str(committed / "other.md")]) == 0
    assert "0.4321" not in (committed / "other.md").read_text()


def test_no_memo_neither_reads_nor_writes(committed):
    assert main(["--no-memo", "leaderboard", "-o", str(committed / "a.md")]) == 0
    assert main(["leaderboard", "-o", str(committed / "b.md"), "--no-memo"]) == 0
    assert not memo.root().exists()


def test_a_full_cache_folder_costs_speed_only(committed, monkeypatch, capsys):
    from sourcesum.util import files

    real = files.write_bytes_atomic

    def full(path: Path, data: bytes) -> None:
        if memo.root() in path.parents:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(files, "write_bytes_atomic", full)
    monkeypatch.setattr(memo, "write_bytes_atomic", full)
    assert main(["leaderboard", "-o", str(committed / "board.md")]) == 0
    err = capsys.readouterr().err
    assert err.count("the memo cannot be written") == 1 and "No space left" in err
    assert "Ranker" in (committed / "board.md").read_text()


def test_a_cache_folder_that_is_a_file_costs_speed_only(committed, own_memo, capsys):
    own_memo.write_text("not a folder")
    assert main(["leaderboard", "-o", str(committed / "board.md")]) == 0
    assert capsys.readouterr().err.count("the memo cannot be written") == 1


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
