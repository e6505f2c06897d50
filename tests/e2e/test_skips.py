"""The suite's skip report: tests skipped for one shared reason (here the real-data tests without
their data) print one ``-ra`` line for the group, at the helper that decided it
(tests/support/skips.py), not one line per test."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sourcesum.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow  # a pytest run in a subprocess


def test_a_group_of_skips_is_one_line_of_the_summary(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCESUM_")}
    env["SOURCESUM_DATA_DIR"] = str(tmp_path / "absent")  # no local copy of SourceSum here
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "tests/e2e/test_paper.py",
            "-m",
            "real_data",
        ],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    count = int(done.stdout.strip().splitlines()[-1].split()[0])  # "N skipped in ..."
    assert count >= 2
    assert lines == [f"SKIPPED [{count}] tests/support/data.py: {lines[0].split(': ', 1)[1]}"]
    assert "has no local copy" in lines[0]
