"""CPU time per pair of the LM rankers on chosen pairs of any split: each ranker (float32) is
created, loaded and warmed up on one XSum-PEGASUS pair, then its ``score_batch`` on the chosen
pairs is timed (wall and process CPU time). Prints one line per ranker and, with ``--json``, a
JSON report. This is how the cost of the rankers not run on a task board is measured.

    python scripts/bench_lm_pair_cost.py --split wice_test --pairs test02359,test00185,test04331 \\
        [--rankers perplexity_gain,pmi,attention,attribution,llm_judge] [-p perplexity_gain.shortlist=3] [--json]

Run it with ``OMP_NUM_THREADS=1`` for one thread, as the figures on the performance page were.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

LM_RANKERS = "perplexity_gain,pmi,attention,attribution,llm_judge"


def main() -> int:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", required=True, help="the split holding the pairs")
    parser.add_argument("--pairs", required=True, help="comma-separated pair ids")
    parser.add_argument("--rankers", default=LM_RANKERS, help=f"comma-separated (default {LM_RANKERS})")
    parser.add_argument("--param", "-p", action="append", default=[], metavar="RANKER.NAME=VALUE")
    parser.add_argument("--json", action="store_true", help="print a JSON report")
    args = parser.parse_args()

    from sourcesum.cli.common import parse_params
    from sourcesum.data import load_split
    from sourcesum.rankers import create_ranker

    params = parse_params(args.param, args.rankers.split(","))

    split = load_split(args.split)
    wanted = args.pairs.split(",")
    pairs = [p for p in split.pairs if p.id in wanted]
    missing = sorted(set(wanted) - {p.id for p in pairs})
    if missing:
        parser.error(f"--pairs: not in {split.name}: {', '.join(missing)}")
    warm = load_split("xsum_pegasus").pairs[:1]
    results = []
    for name in args.rankers.split(","):
        ranker = create_ranker(name, **{"dtype": "float32", **params.get(name, {})})
        ranker.score_batch(warm)  # loads the model
        wall, cpu = time.perf_counter(), time.process_time()
        ranker.score_batch(pairs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        results.append(
            {"ranker": ranker.label, "wall_s": wall, "cpu_s": cpu, "cpu_s_per_pair": cpu / len(pairs)}
        )
        if not args.json:
            print(
                f"{split.name} {ranker.label}: {len(pairs)} pairs, {sum(p.n_sentences for p in pairs)} sentences, "
                f"wall {wall:.1f} s, CPU {cpu:.1f} s, {cpu / len(pairs):.1f} CPU s per pair",
                flush=True,
            )
    if args.json:
        report = {
            "split": split.name,
            "pairs": [p.id for p in pairs],
            "threads": os.environ.get("OMP_NUM_THREADS"),
            "machine": platform.processor() or platform.machine(),
            "load": os.getloadavg(),
            "results": results,
        }
        print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
