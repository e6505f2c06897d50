"""Score stores for the tests: filled on the synthetic board, one entry of a ranker, and
entries forged behind the checksums' back."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from sourcesum.data import load_split
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker, run_splits
from sourcesum.store.entry import ScoreEntry, scores_sha256
from sourcesum.store.stores import ScoreStore, read_entry
from sourcesum.util.hashing import sha256_hex

from support.data import BOARD_SPLITS


def fill(store: Path, rankers: tuple[str, ...] = ("lead", "bm25")) -> ScoreStore:
    """``rankers`` run on synthnews's board splits into the store at ``store``."""
    scores = ScoreStore(store)
    splits = [load_split(name) for name in BOARD_SPLITS]
    for name in rankers:
        run_splits(create_ranker(name), splits, scores, progress=False)
    return scores


def bm25_entry(store_root: Path, split: str = "synth_alpha_sys") -> Path:
    """bm25 run on ``split`` into the store at ``store_root``: its entry file."""
    run_ranker(create_ranker("bm25"), load_split(split), ScoreStore(store_root), progress=False)
    [path] = sorted((store_root / "bm25").glob(f"{split}.*.json"))
    return path


def lead_entry(store_root: Path, split: str = "synth_alpha_sys") -> tuple[ScoreStore, ScoreEntry, Path]:
    """lead run on ``split`` into the store at ``store_root``: the store, the entry and its file."""
    store = ScoreStore(store_root)
    entry = run_ranker(create_ranker("lead"), load_split(split), store, progress=False)
    return store, entry, store.path_for("lead", split, entry.key)


def forge(path: Path, edit: Callable[[dict], object]) -> None:
    """Edit the raw JSON of an entry file with ``edit(raw)``, then recompute both checksums: a
    forgery a checksum cannot catch."""
    raw = json.loads(path.read_text())
    edit(raw)
    raw["scores_sha256"] = scores_sha256(raw["scores"])
    header = {k: v for k, v in raw.items() if k not in ("scores", "header_sha256")}
    raw["header_sha256"] = sha256_hex(header)
    path.write_text(json.dumps(raw))


def rewrite_entry(path: Path, change: Callable[[ScoreEntry], object]) -> None:
    """Apply ``change`` to the entry at ``path`` and write it back with valid checksums."""
    entry = read_entry(path)
    change(entry)
    entry.verified = None
    path.write_text(entry.to_json())


STACKED_SPLITS = "synthnews,synth_alpha_sys_heldout,synth_claims"
"""The board, held-out and task splits :func:`stacked_board` declares."""


def fill_stacked(committed: Path, mine: Path, yours: str) -> None:
    """A stand-in committed store at ``committed`` holding lead, random and bm25, and your store
    at ``mine`` (``$SOURCESUM_SCORES_DIR``) holding only ranker ``yours``, each on
    :data:`STACKED_SPLITS` (computed by ``sourcesum run``)."""
    from sourcesum.cli import main

    run = ["run", "--split", STACKED_SPLITS, "--no-progress"]
    assert main([*run, "--ranker", "lead,random,bm25", "--scores-dir", str(committed)]) == 0
    assert main([*run, "--ranker", yours]) == 0
    assert {p.name for p in mine.iterdir()} == {yours}


def stacked_board(path: Path, yours: str) -> Path:
    """A declaration at ``path`` of lead, random, bm25 and ``yours`` on synthnews, its held-out
    test (``synth_alpha_sys_heldout``) and the task synthclaims."""
    from support.boards import declaration

    rows = ("lead", "random", "bm25", yours)
    path.write_text(
        declaration(rows=rows, references=())
        + '\n[heldout]\nsplits = ["synth_alpha_sys_heldout"]\n'
        + "".join(f'[[heldout.rows]]\nranker = "{r}"\n\n' for r in rows)
        + '[[tasks]]\ndataset = "synthclaims"\n'
        + "".join(f'[[tasks.rows]]\nranker = "{r}"\n\n' for r in rows)
    )
    return path
