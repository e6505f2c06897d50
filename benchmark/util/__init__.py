"""What knows nothing of benchmarks: the canonical hash (:mod:`~sourcesum.util.hashing`), safe
file writes (:mod:`~sourcesum.util.files`) and the one memo (:mod:`~sourcesum.util.memo`)."""
