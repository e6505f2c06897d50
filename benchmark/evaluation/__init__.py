"""From scores and labels to per-pair values.

* :mod:`~sourcesum.evaluation.qrels`: relevance of judgments, checked score runs;
* :mod:`~sourcesum.evaluation.metrics`: the kernels (NDCG, AP, ... with exact tie semantics);
* :mod:`~sourcesum.evaluation.measures`: the measure table (one registration per measure);
* :mod:`~sourcesum.evaluation.ties`: what tie rules change;
* :mod:`~sourcesum.evaluation.human`: agreement with held-out annotators;
* :mod:`~sourcesum.evaluation.evaluate`: per-pair evaluations of a split (:func:`evaluate_split`).
"""

from typing import TYPE_CHECKING

from sourcesum.util.lazy import lazy_exports

if TYPE_CHECKING:
    from sourcesum.evaluation.evaluate import Evaluation, evaluate, evaluate_split, memoised_evaluation
    from sourcesum.evaluation.measures import DEFAULT_MEASURES

__all__ = ["DEFAULT_MEASURES", "Evaluation", "evaluate", "evaluate_split", "memoised_evaluation"]
# imported on first use: importing the measures alone must not import pandas
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DEFAULT_MEASURES": "sourcesum.evaluation.measures",
        **{name: "sourcesum.evaluation.evaluate" for name in __all__ if name != "DEFAULT_MEASURES"},
    },
)
