"""The explorer's data (sourcesum.board.explorer): every board measure per pair and row, a dataset
without votes, and exact ranks kept only where rounding changes them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sourcesum.board import collect, collect_declared, read_declaration
from sourcesum.board.explorer import SCORE_DIGITS, explorer_data, explorer_ranks, ranks
from sourcesum.cli import main
from sourcesum.data import load_split
from sourcesum.evaluation.measures import parse_measures
from sourcesum.store.stores import ScoreStore
from support.boards import declaration
from support.site import cli_site


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """The synthetic site: lead, random and bm25 ranked, oracle as reference, on synthnews's four
    board splits (tests/support/site.py)."""
    return cli_site(tmp_path_factory.mktemp("site"), declaration(), "synthnews")


def test_explorer_data_lists_every_board_measure(built):
    """A board of other measures: the explorer names each (key, display name) and carries every
    pair's value of each for every row (null where undefined), rows in leaderboard order."""
    _, board, selection = built
    store = ScoreStore(Path(selection[3]), writable=False)
    measures = parse_measures("nDCG,AP,RR,P@2")
    other = collect_declared(read_declaration(Path(selection[1])), store, measures=measures)
    split = load_split("synth_alpha_ref")
    data = explorer_data(other, split.name)
    assert data["split"] == split.name and data["title"] == "Alpha-Ref"
    assert data["measures"] == [{"key": m.json_key, "name": m.display_name} for m in measures]
    assert [m["key"] for m in data["measures"]] == ["ndcg", "map", "rr", "p_at_2"]
    rows = other.ranked_rows + other.reference_rows
    assert data["rankers"] == [
        {"label": r.label, "name": r.name or r.label, "reference": r.reference} for r in rows
    ]
    assert rows[-1].label == "oracle" and [r.label for r in rows[:3]] == [r.label for r in board.ranked_rows]
    assert len(data["pairs"]) == len(split) and len(data["docs"]) == 3  # three documents
    nulls = 0
    for i, (pair, item) in enumerate(zip(split.pairs, data["pairs"], strict=True)):
        assert item["id"] == pair.id and data["docs"][item["doc"]] == list(pair.sentences)
        assert item["votes"] == [list(v) for v in split.judgment(pair.id).votes]
        for measure in measures:
            expected = [r.evaluations[split.name].per_pair[measure.name].iloc[i] for r in rows]
            shown = item["values"][measure.json_key]
            assert len(shown) == len(rows)
            for value, want in zip(shown, expected, strict=True):
                assert (value is None and math.isnan(want)) or value == want
                nulls += value is None
        for j, row in enumerate(rows):
            scores = row.entries[split.name].scores[pair.id]
            assert item["scores"][j] == pytest.approx(scores, rel=5e-4, abs=1e-12)  # 4 significant digits
            exact = [1 + sum(o > s for o in scores) for s in scores]
            shown = [1 + sum(o > s for o in item["scores"][j]) for s in item["scores"][j]]
            changed = {str(k): e for k, (e, r) in enumerate(zip(exact, shown, strict=True)) if e != r}
            assert item["ranks"][j] == (changed or None)
    # one pair of Alpha-Ref has a single annotator, none of whose sentences has 2 votes: MAP and
    # RR are undefined there, P@2 is 0
    (empty,) = [i for i, p in enumerate(split.pairs) if not any(split.binary(p.id))]
    assert nulls == 2 * len(rows)
    assert data["pairs"][empty]["values"]["map"] == data["pairs"][empty]["values"]["rr"] == [None] * len(rows)
    assert data["pairs"][empty]["values"]["p_at_2"] == [0.0] * len(rows)


def test_explorer_data_of_a_dataset_without_votes(scores_dir, capsys):
    """synthclaims has graded labels but no per-annotator votes: each sentence's "votes" is its
    graded relevance as a one-item list."""
    assert main(["run", "--ranker", "lead,oracle", "--split", "synthclaims", "--no-progress"]) == 0
    capsys.readouterr()
    from sourcesum.store.stores import open_stores

    board = collect(open_stores(), published=False, dataset_name="synthclaims")
    split = load_split("synth_claims")
    data = explorer_data(board, split.name)
    assert [r["label"] for r in data["rankers"]] == ["lead", "oracle"]
    for pair, item in zip(split.pairs, data["pairs"], strict=True):
        assert item["votes"] == [[float(g)] for g in split.graded(pair.id)]
    assert data["pairs"][3]["values"]["ndcg"] == [None, None]  # a claim no sentence supports


@pytest.mark.parametrize("seed", range(20))
def test_explorer_ranks_keep_only_what_rounding_changes(seed):
    """ranks() is 1 + the number of larger scores (brute force, ties drawn on purpose); the page
    carries the exact rank of exactly the sentences whose rank among the rounded scores differs,
    and those with the page's own ranking of the rounded scores give the exact ranks."""
    rng = np.random.default_rng(seed)
    scores = rng.choice(rng.normal(size=6), size=12).tolist()  # repeated values: ties
    assert ranks(scores) == [1 + sum(o > s for o in scores) for s in scores]
    shown = [float(f"{s:.{SCORE_DIGITS}g}") for s in scores]
    assert explorer_ranks(scores, shown) is None  # rounding merges no distinct value here
    close = [s + 1e-9 * k for k, s in enumerate(scores)]  # distinct scores that rounding merges
    expected = [1 + sum(o > s for o in close) for s in close]
    rounded = [float(f"{s:.{SCORE_DIGITS}g}") for s in close]
    changed = explorer_ranks(close, rounded)
    merged = ranks(rounded)
    assert changed and all(expected[int(i)] != merged[int(i)] for i in changed)
    for i, rank in changed.items():
        merged[int(i)] = rank
    assert merged == expected
