"""Pairs, judgments and splits (sourcesum.data.pairs): a pair carries no labels (reading one
names the pair), judgments from votes, and splits that keep their judgments aligned."""

from __future__ import annotations

from pathlib import Path

import pytest
from sourcesum.data import Judgment, Split, load_split
from sourcesum.errors import LabelAccessError, RankerError
from sourcesum.evaluation.qrels import Qrels
from support.pairs import make_pair


def test_reading_a_label_from_a_pair_raises_and_names_the_pair():
    pair = load_split("synth_alpha_sys").pairs[0]
    for field in ("votes", "graded", "binary", "judgment", "relevance"):
        with pytest.raises(
            LabelAccessError, match=f"pair {pair.id}: rankers receive pair inputs without labels"
        ):
            getattr(pair, field)
    with pytest.raises(AttributeError) as info:
        pair.no_such_field  # noqa: B018
    assert not isinstance(info.value, LabelAccessError)


@pytest.mark.parametrize("name", ["votes", "graded", "binary"])
def test_a_pair_has_no_labels(name):
    pair = make_pair(["One.", "Two."], "Sum.", pair_id="hand__7")
    with pytest.raises(LabelAccessError, match=rf"pair hand__7: .*\(read \.{name}\)"):
        getattr(pair, name)
    assert issubclass(LabelAccessError, RankerError)  # the runner reports it naming the ranker
    with pytest.raises(AttributeError, match="no attribute 'sentence_count'"):
        pair.sentence_count  # noqa: B018  (an ordinary missing attribute stays an AttributeError)
    assert pair.n_sentences == 2 and pair.sentences == ("One.", "Two.")


def test_judgment_from_votes_gives_graded_soft_and_binary():
    votes = [(1, 1, 1), (1, 0), (0, 0, 0), (1,)]  # vote counts may differ across sentences
    judgment = Judgment.from_votes(votes)
    assert judgment.graded.tolist() == [3.0, 1.0, 0.0, 1.0]
    assert judgment.soft.tolist() == [1.0, 0.5, 0.0, 1.0]
    assert judgment.votes == ((1, 1, 1), (1, 0), (0, 0, 0), (1,))
    assert judgment.binary(2).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert judgment.binary(1).tolist() == [1.0, 1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="read-only"):
        judgment.graded[0] = 5.0
    plain = Judgment.of([2, 0], [1.0, 0.0])
    assert plain.votes is None and plain.graded.dtype == float and plain.binary(1).tolist() == [1.0, 0.0]


def test_a_split_needs_one_judgment_per_pair():
    pairs = (make_pair(["a.", "b."], "s.", "p0"), make_pair(["c."], "t.", "p1"))
    with pytest.raises(ValueError, match="2 pairs but 1 judgments"):
        Split("s", "hand", "S", Path("<s>"), "sha", pairs, (Judgment.from_votes([(1,), (0,)]),), 2)
    with pytest.raises(ValueError, match="2 pairs but 1 clusters"):
        Split(
            "s",
            "hand",
            "S",
            Path("<s>"),
            "sha",
            pairs,
            (Judgment.from_votes([(1,), (0,)]), Judgment.from_votes([(1,)])),
            2,
            ("c",),
        )


def test_subset_keeps_judgments_and_clusters_aligned():
    split = load_split("synth_alpha_sys_all")
    ids = [split.pairs[4].id, split.pairs[1].id, "not-in-the-split"]
    part = split.subset(ids)
    assert [p.id for p in part] == [split.pairs[1].id, split.pairs[4].id]  # file order kept
    assert part.judgments == (split.judgments[1], split.judgments[4])
    assert part.clusters == (split.clusters[1], split.clusters[4])
    assert (part.name, part.sha256, part.min_relevant) == (split.name, split.sha256, split.min_relevant)
    for pair in part:
        assert part.judgment(pair.id) is split.judgment(pair.id)
        assert part.graded(pair.id).tolist() == split.graded(pair.id).tolist()
    qrels = Qrels.of_split(part)
    assert qrels is not Qrels.of_split(split) and qrels.pair_ids == tuple(p.id for p in part)
    assert qrels.row(1, "graded").tolist() == split.judgments[4].graded.tolist()
    assert split.subset({p.id: None for p in split}) is split  # a mapping of every id: the split
