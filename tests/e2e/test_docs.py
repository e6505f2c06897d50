"""The documentation: docs/cli.md is what scripts/gen_cli_reference.py writes from the argparse
tree; the site builds with ``mkdocs build --strict`` (broken links, missing pages or anchors and
unrenderable docstrings fail it); the README's relative links resolve.

The build needs the ``docs`` extra (``pip install -e ".[docs]"``). Without it the build test is
skipped, unless ``SOURCESUM_REQUIRE_DOCS=1`` (CI), where it fails instead."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sourcesum.paths import PROJECT_ROOT

GENERATOR = PROJECT_ROOT / "scripts" / "gen_cli_reference.py"
CLI_PAGE = PROJECT_ROOT / "docs" / "cli.md"


def test_the_cli_reference_is_current():
    done = subprocess.run(
        [sys.executable, str(GENERATOR), "--check", "-o", str(CLI_PAGE)],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
    )
    assert done.returncode == 0, done.stderr


def test_the_cli_reference_covers_every_command_and_option():
    """Every sub-command of the parser has its section, and every option of each is named there
    (walked here with argparse itself, apart from the generator)."""
    import argparse

    from sourcesum.cli import build_parser

    page = CLI_PAGE.read_text(encoding="utf-8")
    commands = [
        (name, sub)
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for name, sub in action.choices.items()
    ]
    assert len(commands) >= 10
    for name, parser in commands:
        assert f"## `{name}`" in page, name
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            for option in action.option_strings:
                assert f"`{option}" in page, (name, option)


_TOY_CLI = """
import argparse


def build_parser():
    parser = argparse.ArgumentParser(prog="tool", description="a tool")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("go", help="go somewhere")
    p.add_argument("--when", default="now", help="a|b, *not* <this> (default: %(default)s)")
    p.add_argument("--flag", action="store_true")
    p.add_argument("--pick", choices=["x", "y"], default="x", metavar="P")
    p.add_argument("things", nargs="+", metavar="THING", help="what to take (`--flag` to list)")
    p.add_argument("extra", nargs="?", help="optional")
    return parser
"""


def test_the_generator_escapes_markdown_and_shows_defaults(tmp_path: Path):
    (tmp_path / "toy_cli.py").write_text(_TOY_CLI)
    out = tmp_path / "toy.md"
    done = subprocess.run(
        [sys.executable, str(GENERATOR), "--parser", "toy_cli:build_parser", "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    assert "## `go`\n\nGo somewhere.\n" in page
    assert "| `--when WHEN` | `now` | a\\|b, \\*not\\* &lt;this&gt; (default: now) |" in page
    assert "| `--flag` | off | - |" in page
    assert "| `--pick P` | `x` | one of `x`, `y` |" in page
    assert "| `THING` | (required) | what to take (`--flag` to list) |" in page
    assert "| `extra` | - | optional |" in page
    assert "tool go [--when WHEN] [--flag] [--pick P] THING [THING ...] [extra]" in page


def _mkdocs_available() -> bool:
    return all(
        importlib.util.find_spec(m) is not None for m in ("mkdocs", "material", "mkdocstrings_handlers")
    )


def test_the_documentation_builds_in_strict_mode(tmp_path: Path):
    if not _mkdocs_available():
        message = (
            'mkdocs, mkdocs-material or mkdocstrings[python] is not installed (pip install -e ".[docs]")'
        )
        if os.environ.get("SOURCESUM_REQUIRE_DOCS", "") not in ("", "0"):
            pytest.fail(message + "; SOURCESUM_REQUIRE_DOCS is set")
        pytest.skip(message)
    out = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    for page in ("index.html", "cli.html", "performance.html", "api/rankers.html", "rankers/lm.html"):
        assert (out / page).is_file(), page
    # mkdocstrings rendered the docstrings (the API pages are not empty shells).
    assert "reproduction_tolerance" in (out / "api" / "rankers.html").read_text(encoding="utf-8")


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_the_readmes_relative_links_resolve():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    anchors = {
        re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in readme.splitlines()
        if line.startswith("#")
    }
    missing = []
    for target in _LINK.findall(readme):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        if not path:
            if anchor not in anchors:
                missing.append(target)
        elif not (PROJECT_ROOT / path).exists():
            missing.append(target)
    assert not missing, f"README links to what does not exist: {missing}"


def _bash_blocks(path: Path, heading: str) -> list[str]:
    """The commands of the bash blocks under ``heading``, as scripts/check_readme.py reads them
    (its ``--list``)."""
    done = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "scripts" / "check_readme.py"), "--readme", str(path), "--list"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)["blocks"]
    # The commands, without their trailing comments (which may point elsewhere on each page).
    return [
        "\n".join(re.sub(r"\s+#\s.*$", "", c) for c in b["commands"])
        for b in found
        if b["heading"] == heading and b["lang"] == "bash"
    ]


def test_the_pages_show_the_commands_the_readme_runs():
    """docs/index.md's first commands and Quick start and docs/add-ranker.md's commands are the
    README's, which scripts/check_readme.py runs: the copies cannot drift from what is tested."""
    readme = PROJECT_ROOT / "README.md"
    docs = PROJECT_ROOT / "docs"
    assert _bash_blocks(docs / "index.md", "Quick start") == _bash_blocks(readme, "Quick start")
    assert _bash_blocks(docs / "index.md", "SourceSum Bench")[0] == _bash_blocks(readme, "SourceSum Bench")[0]
    ranker = _bash_blocks(readme, "Add a ranker")
    assert (
        ranker
        and _bash_blocks(
            docs / "add-ranker.md", "2. Install, test, run, compare with BM25, put it on a board"
        )
        == ranker
    )


@pytest.mark.real_data
def test_the_notebook_page_example_runs_and_compares_as_the_cli(tmp_path: Path, monkeypatch, capsys):
    """docs/notebook.md's Python block, run as it stands on the committed store (an empty user
    store over it): its comparison is what ``sourcesum compare --json`` prints, field by field,
    and its tables are the per-pair values of the stored scores."""
    from sourcesum.data import load_split
    from sourcesum.evaluation.evaluate import evaluate_split
    from sourcesum.evaluation.measures import parse_measures
    from support.cli import run_cli

    page = (PROJECT_ROOT / "docs" / "notebook.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(tmp_path))
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/notebook.md", "exec"), namespace)
    printed = capsys.readouterr().out
    code, out, _ = run_cli(capsys, "compare", "bm25", "lead", "--split", "xsum_pegasus", "--json")
    assert code == 0 and namespace["result"].to_dict("records") == json.loads(out)["comparisons"]
    split = load_split("xsum_pegasus")
    table = namespace["table"]
    expected = evaluate_split(split, dict(namespace["bm25"]), "bm25", parse_measures("nDCG,AP,P@3")).per_pair
    assert table.shape == (119, 3) and table.equals(expected)
    assert "P@3" in printed and "decision" in printed  # the tables were printed
