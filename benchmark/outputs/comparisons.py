"""``sourcesum compare`` for people: one line per comparison with the mean difference and its
bootstrap CI, the randomization p-value with its Monte Carlo error, the Holm-adjusted interval
and the decision, and the bootstrap p-value."""

from __future__ import annotations

from collections.abc import Sequence

from sourcesum.board.compare import Comparison
from sourcesum.outputs.text import format_table
from sourcesum.stats.significance import LOOK_LEVEL


def p_text(p: float, standard_error: float, exact: bool) -> str:
    """``0.0312 ± 0.0017`` (Monte Carlo standard error), or ``0.0312 (exact)``."""
    return f"{p:.4f} (exact)" if exact else f"{p:.4f} ± {standard_error:.4f}"


def bootstrap_p_text(p: float, resamples: int) -> str:
    """The bootstrap p-value; ``< 2/R`` when no resample crossed zero (it is never exactly 0)."""
    return f"< {2 / resamples:.2g}" if p == 0 else f"{p:.4f}"


def format_comparisons(results: Sequence[Comparison]) -> str:
    records = []
    for c in results:
        low, high = c.p_holm_interval
        records.append(
            {
                "a": c.a,
                "b": c.b,
                "split": c.split,
                "measure": c.measure,
                "mean_a": c.mean_a,
                "mean_b": c.mean_b,
                "diff": c.mean_a - c.mean_b,
                "diff 95% CI": f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}]",
                "p (sign flips)": p_text(c.p_randomization, c.p_mc_se, c.exact),
                f"Holm p, {LOOK_LEVEL:.2%} interval": f"{c.p_holm:.4f} [{low:.4f}, {high:.4f}]",
                "decision": c.decision,
                "p_bootstrap": bootstrap_p_text(c.p_bootstrap, c.resamples),
            }
        )
    columns = list(records[0]) if records else ["a", "b"]
    return format_table(records, columns)
