"""``sourcesum compare`` for people: one line per comparison with the mean difference, its
bootstrap CI and both p-values."""

from __future__ import annotations

from collections.abc import Sequence

from sourcesum import stats
from sourcesum.outputs.tables import format_table


def format_comparisons(results: Sequence[stats.Comparison]) -> str:
    records = []
    for c in results:
        record = c.as_dict()
        record["diff"] = c.mean_a - c.mean_b
        record["diff 95% CI"] = f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}]"
        records.append(record)
    columns = [
        "a",
        "b",
        "split",
        "measure",
        "mean_a",
        "mean_b",
        "diff",
        "diff 95% CI",
        "p_randomization",
        "p_bootstrap",
        "p_holm",
    ]
    return format_table(records, columns)
