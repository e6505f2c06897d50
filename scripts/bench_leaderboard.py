"""Time `sourcesum leaderboard` end to end: cold (empty statistics memo) and warm (memo filled,
nothing changed), in fresh processes, and report which heavy libraries each run imported.

    python scripts/bench_leaderboard.py [--repeats 3]

Targets (issue: architecture): warm under 3 s, cold under 15 s on 2 CPU cores. Prints JSON.
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
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
