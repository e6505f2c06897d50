"""Time `sourcesum leaderboard` end to end, in fresh processes: cold (empty statistics memo) and
warm (memo filled, nothing changed), for the Markdown board (which draws the plot) and the JSON
one (no plot). Prints JSON: the CPU count, the 1-minute load average and, per format, the median
cold and warm seconds over ``--repeats`` runs and the heavy libraries (torch, transformers,
sentence_transformers, matplotlib) that the last warm run imported.

    python scripts/bench_leaderboard.py [--repeats 3]

Targets (issue: architecture): warm under 3 s, cold under 15 s on 2 CPU cores. The board is
written to a temporary folder; the statistics memo of each repeat lives in its own temporary
``SOURCESUM_CACHE_DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HEAVY = ("torch", "transformers", "sentence_transformers", "matplotlib")
PROBE = (
    "import sys, sourcesum.cli as c; code = c.main(sys.argv[1:]); "
    f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr); sys.exit(code)"
)


def run(args: list[str], env: dict[str, str]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed: {proc.stderr}")
    heavy = next(line for line in proc.stderr.splitlines() if line.startswith("HEAVY="))[6:]
    return elapsed, [m for m in heavy.split(",") if m]


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3, help="cold + warm runs per format (median)")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "leaderboard.md")
        for fmt, extra in (("markdown (draws the plot)", []), ("json (no plot)", ["--format", "json"])):
            cold, warm, heavy = [], [], []
            for i in range(args.repeats):
                env = {**os.environ, "SOURCESUM_CACHE_DIR": os.path.join(tmp, f"cache-{fmt[:4]}-{i}")}
                seconds, modules = run(["leaderboard", "-o", out, *extra], env)
                cold.append(seconds)
                seconds, modules = run(["leaderboard", "-o", out, *extra], env)
                warm.append(seconds)
                heavy = modules
            results[fmt] = {
                "cold_s": round(statistics.median(cold), 2),
                "warm_s": round(statistics.median(warm), 2),
                "heavy_modules_imported": heavy,
            }
    print(
        json.dumps(
            {"cpu_count": os.cpu_count(), "load_avg_1min": os.getloadavg()[0], "runs": results}, indent=2
        )
    )


if __name__ == "__main__":
    main()
