"""Installed versions of distributions, read once per process (entries record them, and reading
a distribution's metadata parses its METADATA file: milliseconds each, thousands of times in a
test run)."""

from __future__ import annotations

from functools import cache


@cache
def installed_version(distribution: str) -> str:
    """The installed version of ``distribution`` (``importlib.metadata.version``), or
    ``"not installed"``. Cached for the process: installing a package under a running process
    is not supported."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"
