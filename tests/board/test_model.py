"""The board's values (sourcesum.board.model): the human-agreement table's ceiling only when every
row is significantly below the annotators."""

from __future__ import annotations

from sourcesum.board.model import HumanAgreement
from sourcesum.evaluation.human import HUMAN_LABEL
from sourcesum.evaluation.measures import NDCG
from sourcesum.stats.significance import Marked, SignFlipCount


def _marked(decision: str) -> Marked:
    count = SignFlipCount(extreme=0, flips=10_000, batches=1)
    return Marked(count, (0.0, 1.0), 0.5, decision)  # only the decision matters here


def test_ceiling_only_when_every_row_is_significantly_below():
    table = HumanAgreement(measures=(NDCG,), labels=[HUMAN_LABEL, "a", "b"])
    import pandas as pd

    for label, value in ((HUMAN_LABEL, 0.9), ("a", 0.5), ("b", 0.95)):
        table.per_pair[(label, "s")] = pd.DataFrame({"nDCG": [value, value]})
    table.vs_human[("a", "s", NDCG)] = _marked("significant")
    table.vs_human[("b", "s", NDCG)] = _marked("not significant")
    assert table.versus_human("a", "s", NDCG) == -1 and table.versus_human("b", "s", NDCG) == 0
    assert not table.is_ceiling("s", NDCG)
    table.vs_human[("b", "s", NDCG)] = _marked("significant")  # significant, but above the human
    assert table.versus_human("b", "s", NDCG) == 1 and not table.is_ceiling("s", NDCG)
    table.per_pair[("b", "s")] = pd.DataFrame({"nDCG": [0.4, 0.4]})
    assert table.is_ceiling("s", NDCG)
    table.vs_human[("b", "s", NDCG)] = _marked("undecided")  # below, but not decided: no ceiling
    assert table.versus_human("b", "s", NDCG) is None and not table.is_ceiling("s", NDCG)
