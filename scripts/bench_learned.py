"""Time fitting and scoring the declared learned rows on all four splits from cached base scores.

Runs each declared ``learned`` row of leaderboard.toml through the runner, exactly as
``sourcesum run`` does, into an empty temporary store stacked over a copy of the committed
store's base-ranker entries (the committed learned and fusion entries left out, so nothing
learned is reused), in this fresh process (no model fitted before). Prints the seconds per split and in total against the 30 s budget, and
checks the scores equal the committed entries bit for bit.

Usage: ``python scripts/bench_learned.py``
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from sourcesum import paths
from sourcesum.data import load_split, main_splits
from sourcesum.leaderboard import read_declaration
from sourcesum.rankers import create_ranker
from sourcesum.runner import run_ranker
from sourcesum.store import ScoreStore, StoreStack, entry_key

BUDGET_S = 30.0


def main() -> None:
    splits = [load_split(name) for name in main_splits()]  # data loading is not part of the timing
    committed = ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False)
    bases = Path(tempfile.mkdtemp(prefix="bench-learned-bases-"))
    for folder in paths.COMMITTED_SCORES_DIR.iterdir():
        if folder.is_dir() and folder.name not in ("learned", "fusion"):
            shutil.copytree(folder, bases / folder.name)
    print(f"{os.cpu_count()} CPU cores; load average {os.getloadavg()[0]:.1f}")
    for declared in read_declaration(paths.DECLARATION_PATH):
        if declared.published or declared.ranker != "learned":
            continue
        with tempfile.TemporaryDirectory() as tmp:
            ranker = create_ranker(declared.ranker, **declared.params)
            store = StoreStack([ScoreStore(Path(tmp)), ScoreStore(bases, writable=False)])
            total = 0.0
            parts = []
            for split in splits:
                start = time.perf_counter()
                entry = run_ranker(ranker, split, store, progress=False)
                elapsed = time.perf_counter() - start
                total += elapsed
                parts.append(f"{split.name} {elapsed:.1f} s")
                key = entry_key(ranker.name, ranker.key_version(), ranker.get_params(), split.sha256)
                reference = committed.load(ranker.name, split.name, key)
                same = reference is not None and reference.scores == entry.scores
                parts[-1] += "" if same else " (DIFFERS from the committed entry)"
        print(
            f"{ranker.label}\n  {'; '.join(parts)}\n  total {total:.1f} s = {total / BUDGET_S:.2f} x the "
            f"{BUDGET_S:.0f} s budget"
        )
    shutil.rmtree(bases)


if __name__ == "__main__":
    main()
