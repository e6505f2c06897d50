"""Statistics over per-pair values: bootstrap CIs and Holm (:mod:`~sourcesum.stats.bootstrap`),
the sign-flip tests that decide the board's marks (:mod:`~sourcesum.stats.significance`), and
the statistics' memo (:mod:`~sourcesum.stats.cache`)."""

from sourcesum.stats.bootstrap import (
    ALPHA,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MAX_RESAMPLES,
    MIN_RESAMPLES,
    RESAMPLE_BLOCK,
    bootstrap_ci,
    bootstrap_means,
    bootstrap_means_each,
    holm,
    paired_bootstrap_test,
    percentile_interval,
)

__all__ = [
    "ALPHA",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "MAX_RESAMPLES",
    "MIN_RESAMPLES",
    "RESAMPLE_BLOCK",
    "bootstrap_ci",
    "bootstrap_means",
    "bootstrap_means_each",
    "holm",
    "paired_bootstrap_test",
    "percentile_interval",
]
