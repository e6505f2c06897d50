"""``sourcesum export``: it needs ``-o`` (and every ``sourcesum export`` the README shows parses)."""

from __future__ import annotations

import shlex

from sourcesum.cli import build_parser
from sourcesum.paths import PROJECT_ROOT
from support.cli import run_cli


def test_export_needs_an_output_folder(capsys, scores_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "export", "--dataset", "synthnews")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: sourcesum export: the following arguments are required: --output/-o "
        "(see sourcesum export --help)"
    )
    assert list(tmp_path.iterdir()) == [scores_dir]  # no ./trec
    # every `sourcesum export` the README shows in a code block still parses
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    shown = [
        line.split("#")[0].strip()
        for line in readme.splitlines()
        if line.startswith("sourcesum export ") or line.startswith("$ sourcesum export ")
    ]
    assert "sourcesum export -o /tmp/sourcesum-trec" in shown
    for line in shown:
        args = build_parser().parse_args(shlex.split(line.removeprefix("$ "))[1:])
        assert args.output
