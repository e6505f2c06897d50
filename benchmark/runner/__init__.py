"""Running rankers: configurations, training protocols, pair selection, batched scoring into the
store, and re-computation.

* :mod:`~sourcesum.runner.configs`: a ranker configuration's label, key and protocol, without an
  instance;
* :mod:`~sourcesum.runner.protocols`: the training protocols (the only way labels reach a ranker);
* :mod:`~sourcesum.runner.selection`: which pairs a run scores (limit, pair ids, shard);
* :mod:`~sourcesum.runner.batches`: scoring whole documents in batches, scores validated;
* :mod:`~sourcesum.runner.provide`: the labelled training data a protocol allows;
* :mod:`~sourcesum.runner.run`: :func:`run_splits` / :func:`run_ranker` (bases first, resumable);
* :mod:`~sourcesum.runner.explain`: what a trained ranker fits (``sourcesum explain``);
* :mod:`~sourcesum.runner.verify`: recompute entries and compare (``sourcesum verify``).
"""

from sourcesum.runner.explain import explain
from sourcesum.runner.run import SplitRun, run_ranker, run_splits
from sourcesum.runner.selection import Selection, Shard

__all__ = ["Selection", "Shard", "SplitRun", "explain", "run_ranker", "run_splits"]
