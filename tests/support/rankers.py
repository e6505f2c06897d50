"""Test rankers more than one test file uses."""

from __future__ import annotations

from sourcesum.rankers import Ranker, register


class LongestFirst(Ranker):
    """Longer sentences first (or last): a user ranker, registered by the tests that need it."""

    name = "test_longest"
    version = "1"

    def __init__(self, longest_first: bool = True):
        self.longest_first = longest_first

    def score(self, pair):
        sign = 1 if self.longest_first else -1
        return [sign * len(s) for s in pair.sentences]


@register
class Piped(Ranker):
    """A plugin whose label holds a pipe, or anything its ``tag`` says (registered on import)."""

    name = "piped"

    def __init__(self, tag: str = ""):
        self.tag = tag

    def score(self, pair):
        return [float(-i) for i in range(pair.n_sentences)]


def split_means(ranker_name: str, split_name: str, **params) -> tuple[float, float]:
    """Mean nDCG and AP of a ranker fitted on, and scoring, the whole split ``split_name``."""
    from sourcesum.data import load_split
    from sourcesum.evaluation.evaluate import evaluate_split
    from sourcesum.evaluation.measures import AP, NDCG
    from sourcesum.rankers import create_ranker

    split = load_split(split_name)
    ranker = create_ranker(ranker_name, **params)
    ranker.fit(split.pairs)
    scores = {p.id: ranker.score(p) for p in split}
    evaluation = evaluate_split(split, scores, ranker_name, (NDCG, AP))
    return evaluation.mean(NDCG), evaluation.mean(AP)
