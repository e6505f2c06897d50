"""Score stores (sourcesum.store.stores): entries round-trip exactly, one pair per line, and are
written only inside the store; layers are read as one and written at the top, and never disagree
silently (every reader refuses a conflict, naming both files); a run writes only to the user
store; concurrent writers never lose finished pairs; an unchanged entry is read from the memo.

Unit tests run on the synthetic dataset ``synthnews`` (tests/fixtures/synthetic); the tests
marked ``real_data`` check the committed store itself."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sourcesum import paths
from sourcesum.data import load_split
from sourcesum.errors import ScoreFileError
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker, run_splits
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.stores import ScoreStore, StoreStack, read_entry
from support.boards import declaration
from support.cli import one_error_line, run_cli
from support.data import SYNTHETIC
from support.store import bm25_entry, fill

# -- entries on disk -------------------------------------------------------------------------------


SPLIT = "synth_alpha_sys"


@pytest.fixture
def split():
    """5 pairs on 5 documents: batches of 2 pairs are [0, 1], [2, 3], [4]."""
    return load_split("synth_alpha_sys_all")


def test_store_round_trip_is_exact_and_one_pair_per_line(split, scores_dir):
    store = ScoreStore(scores_dir)
    entry = run_ranker(create_ranker("random", seed=7), split, store, progress=False)
    path = store.path_for("random", split.name, entry.key)
    text = path.read_text()
    assert (
        text.count("\n") == len(split) + 17
    )  # 14 header lines (provenance and header_sha256 since format 3), braces
    loaded = ScoreEntry.from_json(text, path)
    assert loaded.scores == entry.scores and loaded.to_json() == text
    assert not list(scores_dir.glob("**/*.tmp"))


def test_the_store_writes_only_inside_itself(tmp_path):
    from sourcesum.errors import ScoreFileError

    store = ScoreStore(tmp_path / "store")
    for ranker, split, key in (("lead", "../x", "a" * 12), ("..", "s", "a" * 12), ("lead", "s", "../../k")):
        with pytest.raises(ScoreFileError, match="is not"):
            store.path_for(ranker, split, key)


def test_a_typo_in_the_store_variable_is_an_error_for_readers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(tmp_path / "typo"))
    assert "SOURCESUM_SCORES_DIR=" in one_error_line(capsys, "compare", "lead", "random", "--split", SPLIT)
    code, _, err = run_cli(capsys, "run", "--ranker", "lead", "--split", SPLIT, "--no-progress")
    assert code == 0 and "created the score store" in err


# -- the user store above the committed one --------------------------------------------------------


def test_run_writes_only_to_the_user_store(capsys, tmp_path, monkeypatch):
    """With a committed store below, a run of a committed configuration computes nothing and a
    new configuration lands in the user store only."""
    committed = tmp_path / "committed"
    split = load_split("synth_alpha_sys")
    run_ranker(create_ranker("lead"), split, ScoreStore(committed), progress=False)
    monkeypatch.setattr(paths, "COMMITTED_SCORES_DIR", committed)
    user = tmp_path / "mine"
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(user))
    before = {p: p.read_bytes() for p in committed.glob("*/*.json")}
    assert run_cli(capsys, "run", "--ranker", "lead", "--split", "synth_alpha_sys", "--no-progress")[0] == 0
    assert not user.exists()
    argv = ["run", "--ranker", "random", "-p", "random.seed=3", "--split", "synth_alpha_sys", "--no-progress"]
    assert run_cli(capsys, *argv)[0] == 0
    assert len(list(user.glob("random/synth_alpha_sys.*.json"))) == 1
    assert {p: p.read_bytes() for p in committed.glob("*/*.json")} == before


@pytest.mark.real_data
def test_run_of_a_committed_configuration_reads_the_committed_store(capsys, tmp_path, monkeypatch):
    """The same on the real committed store: lead on xsum_pegasus is read, not recomputed."""
    user = tmp_path / "mine"
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(user))
    before = sorted(p.name for p in paths.COMMITTED_SCORES_DIR.glob("*/*.json"))
    assert run_cli(capsys, "run", "--ranker", "lead", "--split", "xsum_pegasus", "--no-progress")[0] == 0
    assert not user.exists()
    assert sorted(p.name for p in paths.COMMITTED_SCORES_DIR.glob("*/*.json")) == before


# -- store layers: read as one, written at the top, never disagreeing silently ---------------------


def _subset(entry: ScoreEntry, ids, **changes) -> ScoreEntry:
    return ScoreEntry(**{**entry.__dict__, "scores": {i: list(entry.scores[i]) for i in ids}, **changes})


@pytest.fixture
def layered(tmp_path):
    """random(seed=5) on synth_alpha_sys_all computed whole, and two empty layers: a committed
    (read-only below) and a user store (top)."""
    split = load_split("synth_alpha_sys_all")
    full = run_ranker(
        create_ranker("random", seed=5), split, ScoreStore(tmp_path / "scratch"), progress=False
    )
    committed, user = ScoreStore(tmp_path / "committed"), ScoreStore(tmp_path / "user")
    stack = StoreStack([user, ScoreStore(committed.root, writable=False)])
    return split, full, committed, user, stack


def test_stack_reads_layers_and_writes_the_top(layered):
    split, full, committed, _, stack = layered
    ids = [p.id for p in split]
    committed.save(_subset(full, ids[:2]))
    below = committed.path_for("random", split.name, full.key)
    entry = run_ranker(create_ranker("random", seed=5), split, stack, progress=False)
    assert entry.complete and entry.scores == full.scores
    assert len(read_entry(below).scores) == 2  # the read-only layer is untouched
    assert read_entry(stack.path_for("random", split.name, full.key)).complete
    with pytest.raises(ScoreFileError, match="read-only"):
        stack.stores[1].save(full)


def test_equal_overlapping_pairs_of_layers_merge(layered):
    split, full, committed, user, stack = layered
    ids = [p.id for p in split]
    committed.save(_subset(full, ids[:3]))
    user.save(_subset(full, ids[2:]))  # pair 2 in both layers, with the same scores
    top = user.path_for("random", split.name, full.key)
    files = {p: p.read_bytes() for p in (top, committed.path_for("random", split.name, full.key))}
    loaded = stack.load("random", split.name, full.key)
    assert loaded.complete and loaded.scores == full.scores
    ((path, listed),) = list(stack.entries())  # one entry per key, shown at the top path
    assert path == top and isinstance(listed, ScoreEntry) and listed.scores == full.scores
    counting = create_ranker("random", seed=5)
    assert run_ranker(counting, split, stack, progress=False).scores == full.scores
    assert {p: p.read_bytes() for p in files} == files  # nothing recomputed or rewritten


@pytest.mark.parametrize("conflict", ["scores", "libraries"])
def test_layers_that_disagree_are_an_error_naming_both_files(layered, conflict):
    split, full, committed, user, stack = layered
    ids = [p.id for p in split]
    committed.save(_subset(full, ids[:3]))
    if conflict == "scores":
        changed = _subset(full, ids[2:])
        changed.scores[ids[2]] = [x + 1e-9 for x in changed.scores[ids[2]]]
        expected = f"pair {ids[2]} has different scores in"
    else:
        changed = _subset(full, ids[3:], libraries={**full.libraries, "numpy": "0.0.1"})
        expected = "libraries differs"
    user.save(changed)
    top = user.path_for("random", split.name, full.key)
    below = committed.path_for("random", split.name, full.key)
    with pytest.raises(ScoreFileError) as info:
        stack.load("random", split.name, full.key)
    assert expected in str(info.value) and str(top) in str(info.value) and str(below) in str(info.value)
    ((path, listed),) = list(stack.entries())
    assert path == top and isinstance(listed, ScoreFileError)
    assert expected in str(listed) and str(top) in str(listed) and str(below) in str(listed)
    with pytest.raises(ScoreFileError, match=expected):  # a run never silently picks one layer
        run_ranker(create_ranker("random", seed=5), split, stack, progress=False)


def test_an_invalid_top_layer_file_never_hides_the_valid_lower_entry(tmp_path, capsys):
    lower = bm25_entry(tmp_path / "lower")
    top = tmp_path / "top" / lower.relative_to(tmp_path / "lower")
    top.parent.mkdir(parents=True)
    top.write_text("garbage")
    stack = StoreStack([ScoreStore(tmp_path / "top"), ScoreStore(tmp_path / "lower", writable=False)])
    items = list(stack.entries())
    assert any(isinstance(item, ScoreFileError) for _, item in items)
    assert any(isinstance(item, ScoreEntry) and item.ranker == "bm25" for _, item in items)


def test_entries_of_named_splits_read_only_those_files(tmp_path, monkeypatch):
    alpha = bm25_entry(tmp_path / "store", "synth_alpha_sys")
    beta = bm25_entry(tmp_path / "store", "synth_beta_sys")
    (beta.parent / "synth_beta_ref.0123456789ab.json").write_text("garbage")
    stack = StoreStack([ScoreStore(tmp_path / "store")])
    read: list[Path] = []
    monkeypatch.setattr(
        "sourcesum.store.stores.read_entry_memoised", lambda p: read.append(p) or read_entry(p)
    )
    listed = list(stack.entries({"synth_alpha_sys"}))
    assert [path for path, _ in listed] == read == [alpha]  # the other files are not even opened
    assert [item.split for _, item in listed] == ["synth_alpha_sys"]
    beta_ref = [item for _, item in stack.entries({"synth_beta_ref"})]
    assert len(beta_ref) == 1 and isinstance(beta_ref[0], ScoreFileError)  # invalid files still listed
    assert len(list(stack.entries())) == 3


def test_a_layer_conflict_from_the_cli_is_one_error_line(capsys, scores_dir, tmp_path):
    split = load_split("synth_alpha_sys")
    full = run_ranker(
        create_ranker("random", seed=5), split, ScoreStore(tmp_path / "scratch"), progress=False
    )
    ids = [p.id for p in split]
    committed = ScoreStore(paths.COMMITTED_SCORES_DIR)  # the fixture's stand-in for data/scores
    committed.save(_subset(full, ids[:2]))
    changed = _subset(full, ids[1:])
    changed.scores[ids[1]] = [0.5] * len(changed.scores[ids[1]])
    ScoreStore(scores_dir).save(changed)
    top, below = (s.path_for("random", split.name, full.key) for s in (ScoreStore(scores_dir), committed))
    code, _, err = run_cli(
        capsys, "run", "--ranker", "random", "-p", "random.seed=5", "--split", split.name, "--no-progress"
    )
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ")
    assert (
        f"pair {ids[1]} has different scores" in lines[0] and str(top) in lines[0] and str(below) in lines[0]
    )
    assert run_cli(capsys, "run", "--ranker", "lead", "--split", "synthnews", "--no-progress")[0] == 0
    out = tmp_path / "all.md"
    code, _, err = run_cli(capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(out))
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(top) in err and str(below) in err
    assert not out.exists()  # every reader refuses the conflict, as `run` does


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
        ("leaderboard", "--declaration", "{decl}", "-o", "{tmp}/declared.md"),
        ("site", "--declaration", "{decl}", "-o", "{tmp}/declared-site"),
        ("cite", "--declaration", "{decl}"),
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_every_reader_refuses_layers_that_disagree_naming_both_files(argv, tmp_path, monkeypatch, capsys):
    committed, user = _conflicting_layers(tmp_path, monkeypatch)
    decl = tmp_path / "board.toml"
    decl.write_text(declaration(rows=("lead", "bm25"), references=()), encoding="utf-8")
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{decl}", str(decl)) for a in argv]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, (out, err)
    assert err.startswith("error: cannot merge") and str(committed) in err and str(user) in err
    assert err.count("\n") == 1


# -- concurrent writers ----------------------------------------------------------------------------


_SLOW_PLUGIN = """
import time
from sourcesum.rankers import Ranker, register

@register
class SlowLength(Ranker):
    name = "slow_length_test"
    runtime_params = ("delay",)
    batch_pairs = 1

    def __init__(self, delay: float = 0.0):
        self.delay = delay

    def score(self, pair):
        time.sleep(self.delay)
        return [float(len(s)) for s in pair.sentences]
"""


@pytest.mark.slow  # two CLI subprocesses on one entry (about 10 s)
def test_concurrent_writers_never_lose_finished_pairs(tmp_path):
    """A slow and a fast process fill one entry; the file only ever grows and ends complete,
    and the slow writer's saves after the fast one finished keep the fast one's pairs."""
    (tmp_path / "slow_plugin.py").write_text(_SLOW_PLUGIN)
    store = tmp_path / "store"
    script = textwrap.dedent(f"""
        import sys
        import slow_plugin
        import synthetic_datasets
        from sourcesum.data import load_split
        from sourcesum.rankers import create_ranker
        from sourcesum.runner.run import run_ranker
        from sourcesum.store.stores import ScoreStore
        run_ranker(create_ranker("slow_length_test", delay=float(sys.argv[1])),
                   load_split("synth_alpha_sys_all"), ScoreStore({str(store)!r}), progress=False)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(SYNTHETIC)])}
    n_pairs = len(load_split("synth_alpha_sys_all"))
    counts: list[int] = []

    def observe() -> None:
        for path in store.glob("slow_length_test/*.json"):
            try:
                counts.append(len(read_entry(path).scores))
            except ScoreFileError:
                pass

    slow = subprocess.Popen([sys.executable, "-c", script, "1.5"], env=env)
    deadline = time.monotonic() + 60
    while not counts and slow.poll() is None and time.monotonic() < deadline:  # its first pair saved
        observe()
        time.sleep(0.05)
    fast = subprocess.Popen([sys.executable, "-c", script, "0"], env=env)
    slow_ran_past_fast = False
    while slow.poll() is None or fast.poll() is None:
        observe()
        if fast.poll() is not None and slow.poll() is None:
            slow_ran_past_fast = True
        time.sleep(0.05)
    assert slow.returncode == 0 and fast.returncode == 0
    (path,) = store.glob("slow_length_test/*.json")
    assert len(read_entry(path).scores) == n_pairs
    assert slow_ran_past_fast and counts[0] < n_pairs
    assert counts == sorted(counts) and n_pairs in counts[:-1]  # never shrank, complete before the end


# -- entries read through the memo (sourcesum.util.memo) -------------------------------------------


@pytest.fixture
def cache_dir(monkeypatch, tmp_path):
    """A cache folder (and so a memo) of the test's own."""
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))


def _only_entry(root):
    (path,) = sorted((root / "lead").glob("synth_alpha_sys.*.json"))
    return path


def test_an_unchanged_entry_is_read_from_the_memo_and_a_changed_one_is_verified(
    cache_dir, tmp_path, monkeypatch
):
    from sourcesum import store as store_module
    from sourcesum.errors import ScoreFileError

    store = ScoreStore(tmp_path / "scores")
    split = load_split("synth_alpha_sys")
    run_splits(create_ranker("lead"), [split], store, progress=False)
    path = _only_entry(store.root)
    first = store_module.read_entry_memoised(path)
    parsed = []
    monkeypatch.setattr(store_module, "read_entry", lambda p: parsed.append(p) or None)
    again = store_module.read_entry_memoised(path)
    assert parsed == [] and again.scores == first.scores
    assert again.scores_checksum() == first.scores_checksum() and again.verified is not None
    monkeypatch.undo()
    # edit one score and put the modification time back: the change time still moves
    stat = path.stat()
    text = path.read_text(encoding="utf-8")
    pair = next(iter(first.scores))
    old = ", ".join(map(repr, first.scores[pair]))
    assert old in text
    path.write_text(text.replace(old, ", ".join(["9.0"] * len(first.scores[pair])), 1), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(ScoreFileError, match="scores_sha256"):
        store_module.read_entry_memoised(path)
