"""The command line in process: ``sourcesum ARGV`` through :func:`sourcesum.cli.main`, its
output captured."""

from __future__ import annotations

import pytest
from sourcesum.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``sourcesum ARGV``."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one ``error: ...`` line of ``sourcesum ARGV``, which must exit with status 2."""
    code, _, err = run_cli(capsys, *argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]
