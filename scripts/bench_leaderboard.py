"""Time `sourcesum leaderboard` end to end, in fresh processes: cold (empty statistics memo) and
warm (memo filled, nothing changed), for the Markdown board (which draws the plot), the JSON
one (no plot) and the board of every entry in the stores (``--all``). Prints JSON: the CPU
count, the 1-minute load average and, per board, the median cold and warm wall-clock and CPU
seconds (the child process's user + system time) over ``--repeats`` runs and the heavy
libraries (torch, transformers, sentence_transformers, matplotlib) that the last warm run
imported.

    python scripts/bench_leaderboard.py [--repeats 3] [--declaration FILE]

``--declaration`` times the Markdown and JSON boards of another declaration (``sourcesum
leaderboard --declaration FILE``; ``--all`` reads the stores whatever the declaration).

Targets: warm under 5 CPU s for the declared board (SourceSum's declaration alone under 3) and
under 5 for ``--all``, on 2 CPU cores.
The board is written to a temporary folder; the statistics memo of each repeat lives in its own
temporary ``SOURCESUM_CACHE_DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(args: list[str], env: dict[str, str]) -> tuple[float, float, list[str]]:
    """Wall-clock seconds, CPU seconds and heavy modules of one ``sourcesum`` run."""
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True)
    elapsed, used = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"failed: {proc.stderr}")
    heavy = next(line for line in proc.stderr.splitlines() if line.startswith("HEAVY="))[6:]
    return elapsed, used, [m for m in heavy.split(",") if m]


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3, help="cold + warm runs per format (median)")
    parser.add_argument(
        "--declaration", help="the rows of the Markdown and JSON boards (default: leaderboard.toml)"
    )
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.declaration is not None and not os.path.isfile(args.declaration):
        parser.error(f"--declaration {args.declaration}: no such file")
    declared = ["--declaration", os.path.abspath(args.declaration)] if args.declaration else []
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        boards = (
            ("markdown (draws the plot)", declared),
            ("json (no plot)", [*declared, "--format", "json"]),
            ("--all, markdown", ["--all"]),
        )
        for name, extra in boards:
            times: dict[str, list[float]] = {"cold_s": [], "warm_s": [], "cold_cpu_s": [], "warm_cpu_s": []}
            heavy: list[str] = []
            for i in range(args.repeats):
                env = {**os.environ, "SOURCESUM_CACHE_DIR": os.path.join(tmp, f"cache-{len(results)}-{i}")}
                for state in ("cold", "warm"):
                    out = os.path.join(tmp, f"board{len(results)}.{'json' if 'json' in extra else 'md'}")
                    seconds, cpu, heavy = run(["leaderboard", "-o", out, *extra], env)
                    times[f"{state}_s"].append(seconds)
                    times[f"{state}_cpu_s"].append(cpu)
            results[name] = {key: round(statistics.median(v), 2) for key, v in times.items()}
            results[name]["heavy_modules_imported"] = heavy
    print(
        json.dumps(
            {"cpu_count": os.cpu_count(), "load_avg_1min": os.getloadavg()[0], "runs": results}, indent=2
        )
    )


if __name__ == "__main__":
    main()
