"""The notebook API: the harness's data, stored scores, measures and paired tests as Python
calls, each the one the command line uses.

* :func:`load_split`: a split (pairs, sentences, labels);
* :func:`load_scores`: the stored scores of any configuration by name or label (the user's
  store over the committed one), as ``sourcesum compare`` finds it;
* :func:`read_scores`: one's own scores (a dict, a DataFrame or a TREC run), checked against a
  split;
* :func:`evaluate`: the per-pair table (a DataFrame) of any measures;
* :func:`compare`: the paired tests, CIs and Holm correction ``sourcesum compare`` prints.

Each score set is a :class:`Scores` (a mapping pair id -> scores)."""

from sourcesum.api.evaluating import compare, evaluate
from sourcesum.api.scores import Scores, load_scores, read_scores
from sourcesum.data import load_split

__all__ = ["Scores", "compare", "evaluate", "load_scores", "load_split", "read_scores"]
