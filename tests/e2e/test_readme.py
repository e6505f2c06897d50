"""README's Quick start and "Add a ranker" run verbatim (scripts/check_readme.py) and leave the
tracked tree as it was; the script's own parsing is checked on a small README (through its
``--list``, which prints what it read); the README stays short and opens with its two commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sourcesum.paths import PROJECT_ROOT

CHECK_README = PROJECT_ROOT / "scripts" / "check_readme.py"


def listed(readme: Path) -> dict:
    """What ``check_readme.py --list`` reads in ``readme``: its blocks and broken tables."""
    done = subprocess.run(
        [sys.executable, str(CHECK_README), "--readme", str(readme), "--list"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_blocks_sections_markers_and_continuations(tmp_path: Path):
    readme = (
        "# T\n```bash\nnot run\n```\n## Quick start\n```bash\n# a comment\necho a \\\n  b  # c\n\n"
        "echo d\n```\n<!-- check_readme: run -->\n\n```python\nprint(1)\n```\n"
        "### Sub\n```bash\nnot run either\n```\n"
    )
    (tmp_path / "README.md").write_text(readme)
    found = listed(tmp_path / "README.md")["blocks"]
    assert [(b["heading"], b["lang"], b["marker"]) for b in found] == [
        ("T", "bash", ""),
        ("Quick start", "bash", ""),
        ("Quick start", "python", "run"),
        ("Sub", "bash", ""),
    ]
    assert found[1]["commands"] == ["echo a    b  # c", "echo d"]


def test_a_table_cut_by_a_blank_line_is_found(tmp_path: Path):
    text = "| a | b |\n|---|---:|\n| 1 | 2 |\n\n| 3 | 4 |\n```\n| in code |\n```\n"
    (tmp_path / "README.md").write_text(text)
    assert listed(tmp_path / "README.md")["broken_tables"] == [5]
    assert listed(PROJECT_ROOT / "README.md")["broken_tables"] == []


def test_the_readme_stays_short_and_keeps_its_first_commands():
    """The README holds what a user needs first (the rest is in docs/); it opens with the two
    commands that work on a fresh machine."""
    lines = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 300, f"README.md has {len(lines)} lines: move detail into docs/"
    assert lines[2:6] == [
        "```bash",
        "bash scripts/leaderboard.sh   # set up, then regenerate leaderboard.md from leaderboard.toml + data/scores",
        "bash scripts/test.sh          # set up, then run the test suite",
        "```",
    ]


def test_a_failing_command_fails_the_check(tmp_path: Path):
    readme = tmp_path / "README.md"
    readme.write_text("## Quick start\n```bash\ntrue\nfalse\necho never\n```\n")
    done = subprocess.run(
        [
            sys.executable,
            str(CHECK_README),
            "--readme",
            str(readme),
            "--section",
            "Quick start",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "$ false" in done.stderr and "never" not in done.stdout + done.stderr


def test_a_shown_file_that_drifted_fails_the_check(tmp_path: Path):
    readme = tmp_path / "README.md"
    readme.write_text("## Quick start\n<!-- check_readme: file pyproject.toml -->\n```toml\nnot it\n```\n")
    done = subprocess.run(
        [sys.executable, str(CHECK_README), "--readme", str(readme)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "differs from pyproject.toml" in done.stderr


@pytest.mark.slow  # ~3 min: set-up check, leaderboard, site, plugin install, a personal board
def test_readme_commands_run_verbatim_and_leave_the_tree_clean():
    done = subprocess.run(
        [sys.executable, str(CHECK_README)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "the tracked tree is unchanged" in done.stdout
