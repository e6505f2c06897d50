"""Cost of running an LM ranker on ONE split, how many pairs it computes and how long it takes:
prints the ranker's label, the pairs asked for, the pairs it actually scored (of the split, and
of other splits), the wall time and the process's CPU time.

Runs ``--ranker`` (default ``perplexity_gain``, SmolLM2-135M-Instruct) on the first ``--pairs``
pairs of ``--split`` (default ``xsum_pegasus``) into an empty temporary store, through the
public runner API (``run_ranker``); the pairs scored are counted at ``score_document``. A
ranker that also scores the other split's pairs on the same documents shows more pairs computed
than asked for.

    python scripts/bench_split_cost.py [--ranker perplexity_gain] [--split xsum_pegasus] [--pairs 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sourcesum.data import load_split
from sourcesum.rankers import create_ranker
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ranker", default="perplexity_gain")
    parser.add_argument("--split", default="xsum_pegasus")
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    full = load_split(args.split)
    split = full.subset([p.id for p in full.pairs[: args.pairs]])
    ranker = create_ranker(args.ranker, device="cpu")
    ranker.lm()  # load the model before timing
    computed: list[str] = []
    inner = ranker.score_document

    def counting(pairs):
        computed.extend(p.id for p in pairs)
        return inner(pairs)

    ranker.score_document = counting
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu_start = time.perf_counter(), time.process_time()
        run_ranker(ranker, split, ScoreStore(Path(tmp)), progress=False)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    own = sum(1 for pid in computed if pid in full.by_id)
    print(
        f"{ranker.label} on {args.split}: {len(split)} pairs asked, {len(computed)} pairs computed "
        f"({own} of {args.split}, {len(computed) - own} of other splits), {seconds:.1f} s wall, "
        f"{cpu:.1f} s CPU (all threads; steadier than wall time on a shared machine)"
    )


if __name__ == "__main__":
    main()
