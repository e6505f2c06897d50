"""Run README.md's Quick start and "Add a ranker" verbatim, as a new user would, and check that
they leave the tracked files as they were: prints each command (after ``$``) with its output and
wall time, then one line saying how many commands and Python blocks ran in how many seconds with
the tracked tree unchanged, or an error naming the failed check (exit status 1).

    python scripts/check_readme.py [--readme README.md] [--section "Quick start" ...] [--keep]
    python scripts/check_readme.py [--readme FILE] --list

What it checks, in order:

1. every fenced block preceded by ``<!-- check_readme: file PATH -->`` equals the file PATH, and
   every Markdown table is whole (each run of ``|`` lines starts with a header and a ``|---`` line,
   so a stray blank line cannot cut a table in two);
2. the ``bash`` blocks of the chosen sections (default: "Quick start", "Add a ranker"; a section
   ends at the next heading of any level), then their ``python`` blocks preceded by
   ``<!-- check_readme: run -->``, run in one bash session in the checkout (``set -eo pipefail``,
   so every command must succeed), with ``HOME`` and ``XDG_DATA_HOME`` in a new temporary folder
   (an empty score store and cache, as on a new machine; ``SOURCESUM_SCORES_DIR`` and
   ``SOURCESUM_CACHE_DIR`` are unset, ``SOURCESUM_DATA_DIR`` and pip's cache are kept);
3. ``git status --porcelain`` and ``git diff HEAD`` are the same after as before.

Each command is echoed with ``$`` and followed by its wall time. Exit status 0 when all hold.

``--list`` runs and checks nothing: it prints, as JSON, the file's fenced blocks as the checks
read them (heading, language, marker, opening line, text, and a bash block's commands) and the
first lines of its broken tables (tests/e2e/test_readme.py checks the parsing with it, and
tests/e2e/test_docs.py compares the documentation's copies of the README's commands).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("Quick start", "Add a ranker")
_HEADING = re.compile(r"^(#+)\s+(.*?)\s*$")
_MARKER = re.compile(r"^<!--\s*check_readme:\s*(.*?)\s*-->$")


@dataclass(frozen=True)
class Block:
    """A fenced code block: the heading it sits under, its language, text and marker."""

    heading: str
    lang: str
    text: str
    marker: str  # the check_readme marker just above the fence, or ""
    line: int  # 1-based line of the opening fence


def blocks(readme: str) -> list[Block]:
    """Every fenced block of ``readme``, in order."""
    out: list[Block] = []
    heading, marker, fence, lang, body, start = "", "", None, "", [], 0
    for number, line in enumerate(readme.splitlines(), 1):
        if fence is not None:
            if line.strip() == fence:
                out.append(Block(heading, lang, "".join(body), marker, start))
                fence, marker, body = None, "", []
            else:
                body.append(line + "\n")
            continue
        if line.startswith("```"):
            fence, lang, start = "```", line[3:].strip(), number
            continue
        if match := _HEADING.match(line):
            heading, marker = match.group(2), ""
        elif match := _MARKER.match(line.strip()):
            marker = match.group(1)
        elif line.strip():
            marker = ""
    if fence is not None:
        raise SystemExit(f"error: README: the code block opened on line {start} is never closed")
    return out


def broken_tables(readme: str) -> list[int]:
    """1-based first lines of runs of table rows (outside code blocks) that lack a header
    separator as their second line, e.g. rows cut off from their table by a blank line."""
    out, run, fenced = [], [], False
    for number, line in enumerate(readme.splitlines() + [""], 1):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("|"):
            run.append((number, line))
            continue
        if run and (len(run) < 2 or not re.match(r"^\|\s*:?-{3,}", run[1][1])):
            out.append(run[0][0])
        run = []
    return out


def commands(text: str) -> list[str]:
    """Shell commands of a bash block: one per line, backslash continuations joined, blank
    lines and whole-line comments dropped."""
    out, pending = [], ""
    for line in text.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line = pending + line
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(line)
    return out


def listing(readme: str) -> dict[str, list]:
    """What ``--list`` prints: every block (a bash block with its commands) and broken tables."""
    found = [
        {
            "heading": b.heading,
            "lang": b.lang,
            "marker": b.marker,
            "line": b.line,
            "text": b.text,
            "commands": commands(b.text) if b.lang in ("bash", "sh") else [],
        }
        for b in blocks(readme)
    ]
    return {"blocks": found, "broken_tables": broken_tables(readme)}


def session_script(cmds: list[str], python_blocks: list[str]) -> str:
    """One bash script: each command echoed, run in the session's shell, then timed."""
    done = "__e=$(( ($(date +%s%N) - __s) / 100000000 )); printf '  (%d.%d s)\\n' $((__e / 10)) $((__e % 10)) >&2"
    lines = ["set -eo pipefail"]
    for cmd in cmds:
        lines += [f"printf '%s\\n' {shlex.quote('$ ' + cmd)} >&2", "__s=$(date +%s%N)", cmd, done]
    for number, code in enumerate(python_blocks, 1):
        lines += [
            f"printf '%s\\n' '$ python <README python block {number}>' >&2",
            "__s=$(date +%s%N)",
            "python - <<'CHECK_README_PYTHON'",
            code.rstrip("\n"),
            "CHECK_README_PYTHON",
            done,
        ]
    return "\n".join(lines) + "\n"


def tree_state() -> tuple[str, str]:
    """``git status --porcelain`` (untracked files listed one by one) and a hash of ``git diff HEAD``."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    diff = subprocess.run(
        ["git", "diff", "HEAD", "--binary"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    return status, hashlib.sha256(diff).hexdigest()


def user_environment(home: Path) -> dict[str, str]:
    """The caller's environment with a new HOME and XDG_DATA_HOME, and no store or cache override."""
    env = dict(os.environ)
    pip_cache = env.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
    for name in ("SOURCESUM_SCORES_DIR", "SOURCESUM_CACHE_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        env.pop(name, None)
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        PIP_CACHE_DIR=pip_cache,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def main(argv: list[str] | None = None) -> int:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--readme", default=str(ROOT / "README.md"))
    parser.add_argument(
        "--section",
        action="append",
        help="heading to run (repeatable; default: " + ", ".join(repr(s) for s in SECTIONS) + ")",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary HOME and print it")
    parser.add_argument(
        "--list", action="store_true", help="print the blocks and broken tables as JSON; run nothing"
    )
    args = parser.parse_args(argv)
    sections = args.section or list(SECTIONS)
    if args.list:
        print(json.dumps(listing(Path(args.readme).read_text(encoding="utf-8")), indent=2))
        return 0

    found = blocks(Path(args.readme).read_text(encoding="utf-8"))
    failures = []
    for block in found:
        if block.marker.startswith("file "):
            path = ROOT / block.marker[5:].strip()
            if not path.is_file() or path.read_text(encoding="utf-8") != block.text:
                failures.append(f"README line {block.line}: the block differs from {path.relative_to(ROOT)}")
    text = Path(args.readme).read_text(encoding="utf-8")
    failures += [
        f"README line {n}: table rows without a header (a blank line cuts a table?)"
        for n in broken_tables(text)
    ]
    missing = [s for s in sections if not any(b.heading == s for b in found)]
    if missing:
        failures.append(f"README has no code under the heading(s) {', '.join(map(repr, missing))}")
    cmds = [
        c
        for s in sections
        for b in found
        if b.heading == s and b.lang in ("bash", "sh")
        for c in commands(b.text)
    ]
    python_blocks = [
        b.text for s in sections for b in found if b.heading == s and b.lang == "python" and b.marker == "run"
    ]
    if failures:
        print("\n".join(f"error: {f}" for f in failures), file=sys.stderr)
        return 1

    before = tree_state()
    home = Path(tempfile.mkdtemp(prefix="sourcesum-readme-"))
    started = time.perf_counter()
    try:
        script = home / "readme.sh"
        script.write_text(session_script(cmds, python_blocks), encoding="utf-8")
        (home / "home").mkdir()
        done = subprocess.run(["bash", str(script)], cwd=ROOT, env=user_environment(home / "home"))
    finally:
        if args.keep:
            print(f"kept {home}", file=sys.stderr)
        else:
            import shutil

            shutil.rmtree(home, ignore_errors=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        print(
            f"error: a README command failed (exit {done.returncode}); see the last `$` line above",
            file=sys.stderr,
        )
        return 1
    after = tree_state()
    if after != before:
        changed = sorted(set(after[0].splitlines()) ^ set(before[0].splitlines()))
        print(
            "error: the README's commands changed the tracked tree"
            + (f": {', '.join(changed)}" if changed else " (git diff HEAD differs)"),
            file=sys.stderr,
        )
        return 1
    print(
        f"ok: {len(cmds)} commands and {len(python_blocks)} Python blocks of "
        f"{', '.join(map(repr, sections))} ran in {elapsed:.0f} s; the tracked tree is unchanged"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
