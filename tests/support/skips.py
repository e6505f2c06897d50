"""Skips shared by a group of tests (a missing extra, missing data): ``pytest -ra`` reports each
group in one line, ``SKIPPED [N] <where the reason is decided>: <reason>``, instead of one line
per test.

pytest reports a skip at the skipped test's own line, so tests skipped for one reason print one
line each; :func:`skip_group` raises :class:`GroupSkip`, and the ``pytest_runtest_makereport``
wrapper of ``tests/conftest.py`` calls :func:`fold` to report every such skip at the file of the
helper that decided it, without a line number, which the summary counts as one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


class GroupSkip(pytest.skip.Exception):  # type: ignore[misc,name-defined]
    """A skip whose reason is shared by a group of tests; ``origin`` is the helper's file."""

    def __init__(self, reason: str, origin: str) -> None:
        super().__init__(reason)
        self.origin = origin


def skip_group(reason: str, origin: str) -> None:
    """Skip the calling test for ``reason``, reported once per group at ``origin`` (a file path)."""
    raise GroupSkip(reason, os.path.relpath(origin, TESTS.parent))


def fold(report: pytest.TestReport, call: pytest.CallInfo[None]) -> None:
    """Report a :class:`GroupSkip` at its origin, without a line (so the summary folds it)."""
    if call.excinfo is None or not call.excinfo.errisinstance(GroupSkip):
        return
    if report.skipped and isinstance(report.longrepr, tuple):
        skip = call.excinfo.value
        report.longrepr = (skip.origin, None, f"Skipped: {skip.msg}")  # as a plain skip's message
