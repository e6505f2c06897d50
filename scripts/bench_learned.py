"""Time fitting and scoring the declared learned rows on the four board splits from cached base
scores: prints the CPU count and load average, then for each declared ``learned`` row of
leaderboard.toml its label, the seconds per split and in total against the 30 s budget, and
whether each split's scores equal the committed entry bit for bit (``DIFFERS``, with the largest
score difference, where not).

Each row runs through the runner, exactly as ``sourcesum run`` does (``run_ranker``: the runner
reads the bases' entries, applies the row's training protocol and scores), into an empty
temporary store stacked over a copy of the committed store's base-ranker entries (the committed
learned and fusion entries left out, so nothing learned is reused), in this fresh process (no
model fitted before). Loading the splits is not part of the timing.

Usage: ``python scripts/bench_learned.py``
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from sourcesum import paths
from sourcesum.board import read_declaration
from sourcesum.data import dataset, load_split
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_ranker
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.stores import ScoreStore, StoreStack

BUDGET_S = 30.0
COMPOSITES = ("learned", "fusion")
"""Committed folders left out of the base store: rankers built from other rankers' scores."""


def agreement(reference: ScoreEntry | None, entry: ScoreEntry) -> str:
    """``""`` when ``entry`` has the committed scores bit for bit, else a note saying how not."""
    if reference is None:
        return " (no committed entry)"
    if reference.scores == entry.scores:
        return ""
    if set(reference.scores) != set(entry.scores):
        return " (DIFFERS from the committed entry: other pairs)"
    gap = max(
        float(np.max(np.abs(np.subtract(entry.scores[pid], values))))
        for pid, values in reference.scores.items()
    )
    return f" (DIFFERS from the committed entry: max |difference| {gap:.1e})"


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.parse_args()
    declaration = read_declaration(paths.DECLARATION_PATH)
    # data loading is not part of the timing
    splits = [load_split(name) for name in dataset(declaration.dataset).board_splits()]
    committed = ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False)
    bases = Path(tempfile.mkdtemp(prefix="bench-learned-bases-"))
    try:
        for folder in paths.COMMITTED_SCORES_DIR.iterdir():
            if folder.is_dir() and folder.name not in COMPOSITES:
                shutil.copytree(folder, bases / folder.name)
        print(f"{os.cpu_count()} CPU cores; load average {os.getloadavg()[0]:.1f}")
        for declared in declaration.rows:
            if declared.published or declared.ranker != "learned":
                continue
            config = Configuration.of(declared.ranker, declared.params)
            with tempfile.TemporaryDirectory() as tmp:
                ranker = config.create()
                store = StoreStack([ScoreStore(Path(tmp)), ScoreStore(bases, writable=False)])
                total = 0.0
                parts = []
                for split in splits:
                    start = time.perf_counter()
                    entry = run_ranker(ranker, split, store, progress=False)
                    elapsed = time.perf_counter() - start
                    total += elapsed
                    parts.append(f"{split.name} {elapsed:.1f} s")
                    key = config.entry_key(split.name, split.sha256)
                    parts[-1] += agreement(committed.load(config.ranker, split.name, key), entry)
            print(
                f"{config.label}\n  {'; '.join(parts)}\n  total {total:.1f} s = {total / BUDGET_S:.2f} x "
                f"the {BUDGET_S:.0f} s budget"
            )
    finally:
        shutil.rmtree(bases)


if __name__ == "__main__":
    main()
