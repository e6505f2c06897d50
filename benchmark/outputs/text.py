"""Aligned text tables for terminals (``run``, ``evaluate``, ``compare``): no board needed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sourcesum.util.numbers import fmt


def format_table(records: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain aligned text table of ``records`` (floats to 4 decimals)."""
    cells = [
        [fmt(r.get(c)) if isinstance(r.get(c), float) else str(r.get(c, "")) for c in columns]
        for r in records
    ]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=False))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)) for row in cells]
    return "\n".join(lines)
