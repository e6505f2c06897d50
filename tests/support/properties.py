"""The example budget of property tests (hypothesis)."""

from __future__ import annotations

import os

QUICK = os.environ.get("SOURCESUM_QUICK_TESTS") == "1"
"""True in the fast loop (``pytest -m "not slow"``; set by tests/conftest.py)."""


def examples(full: int) -> int:
    """A property test's hypothesis example count: ``full`` in the full suite (what CI runs),
    a tenth of it (at least 50) in the fast loop."""
    return full if not QUICK else max(50, full // 10)
