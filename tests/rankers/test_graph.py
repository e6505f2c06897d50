"""LexRank (sourcesum.rankers.graph): the central sentence first and isolated sentences tied, and
close to the paper on the real XSum split (``real_data``)."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.rankers import create_ranker
from support.pairs import make_pair
from support.rankers import split_means


def test_lexrank_central_sentence_first_and_isolated_sentences_tie():
    pair = make_pair(
        ["Budget parks council city.", "Council approves budget.", "Parks budget grows.", "Rain fell."],
        "anything",
    )
    ranker = create_ranker("lexrank")
    ranker.fit([pair])
    scores = ranker.score(pair)
    assert np.argmax(scores) == 0 and scores[3] == 1.0  # an isolated sentence is its own component
    with pytest.raises(RuntimeError, match="fit"):
        create_ranker("lexrank").score(pair)


@pytest.mark.slow  # a whole split
@pytest.mark.real_data
def test_lexrank_is_close_to_the_paper_on_xsum_pegasus():
    ndcg, ap = split_means("lexrank", "xsum_pegasus")
    assert abs(ndcg - 0.7499) < 1e-3 and abs(ap - 0.5302) < 1e-3
