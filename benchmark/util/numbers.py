"""How numbers are written for people: a value to 4 decimals, an interval to 3."""

from __future__ import annotations

import math


def fmt(value: float | None, digits: int = 4) -> str:
    """A value to ``digits`` decimals, ``-`` for a missing or undefined one."""
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def fmt_ci(ci: tuple[float, float] | None) -> str:
    """``[low, high]`` to 3 decimals, empty when there is no interval."""
    if ci is None or not math.isfinite(ci[0]):
        return ""
    return f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]"
