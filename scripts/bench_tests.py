"""What the test suite costs: runs pytest once (in a subprocess, with the arguments given after
``--``; default the fast loop, ``-m "not slow and not real_data"``) with ``--durations=0`` and
prints JSON: the command, the CPU model and load before the run, the tests run, the wall time,
the CPU time of pytest and every process it started (user + sys, so parallel workers are no
speed-up), the collection's own CPU time (a ``--collect-only`` run of the same selection), each
test file's summed durations (setup, call and teardown), the slowest tests, and the ratio of the
suite's CPU time to the reference budget (``--budget``, 60 CPU s for the fast loop).

    python scripts/bench_tests.py [--budget 60] [--slowest 25] [-- PYTEST ARGS...]

Durations are wall seconds per test as pytest reports them; on a loaded machine they grow, the
CPU seconds much less.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAST_LOOP = ["-m", "not slow and not real_data"]
DURATION = re.compile(r"^([0-9.]+)s (setup|call|teardown)\s+(\S+)$")
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|deselected)")


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_pytest(args: list[str]) -> tuple[str, float, float]:
    """(output, wall seconds, CPU seconds of the run and its children)."""
    before, start = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return done.stdout + done.stderr, time.perf_counter() - start, children_cpu() - before


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--budget", type=float, default=60.0, help="reference CPU seconds (default 60)")
    parser.add_argument("--slowest", type=int, default=25)
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (default the fast loop)")
    args = parser.parse_args()
    selection = args.pytest_args or FAST_LOOP
    load = os.getloadavg()
    _, collect_wall, collect_cpu = run_pytest(["--collect-only", "-q", *selection])
    output, wall, cpu = run_pytest(["-q", "--durations=0", "--durations-min=0", *selection])
    per_file: dict[str, float] = defaultdict(float)
    per_test: dict[str, float] = defaultdict(float)
    for line in output.splitlines():
        match = DURATION.match(line.strip())
        if match:
            seconds, test = float(match.group(1)), match.group(3)
            per_file[test.split("::", 1)[0]] += seconds
            per_test[test] += seconds
    counts = {kind: int(n) for n, kind in SUMMARY.findall(output.splitlines()[-1] if output else "")}
    report = {
        "pytest_args": selection,
        "cpu": cpu_model(),
        "load_before": [round(x, 2) for x in load],
        "tests": counts,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cpu_over_budget": round(cpu / args.budget, 2),
        "collection": {"wall_s": round(collect_wall, 1), "cpu_s": round(collect_cpu, 1)},
        "files": {f: round(s, 2) for f, s in sorted(per_file.items(), key=lambda kv: -kv[1])},
        "slowest": {
            t: round(s, 2) for t, s in sorted(per_test.items(), key=lambda kv: -kv[1])[: args.slowest]
        },
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
