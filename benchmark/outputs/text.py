"""Aligned text tables for terminals (``run``, ``evaluate``, ``compare``): no board needed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sourcesum.util.numbers import fmt


def format_table(
    records: Sequence[dict[str, Any]], columns: Sequence[str], headers: Sequence[str] | None = None
) -> str:
    """A plain aligned text table of ``records``' values under ``columns`` (floats to 4
    decimals), headed by ``headers`` (default: the column keys)."""
    cells = [
        [fmt(r.get(c)) if isinstance(r.get(c), float) else str(r.get(c, "")) for c in columns]
        for r in records
    ]
    heads = list(columns if headers is None else headers)
    if len(heads) != len(columns):
        raise ValueError(f"{len(heads)} headers for {len(columns)} columns")
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)) for row in cells]
    return "\n".join(lines)
