"""Score sets for notebooks (sourcesum.api.scores): ``load_scores`` finds a stored configuration
by display name, label or ranker in the user's store over the committed one, as ``compare``
does; ``read_scores`` reads one's own scores from a dict, a DataFrame or a TREC run into the
same values, and refuses scores that do not fit the split with an error naming the pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sourcesum import paths
from sourcesum.api import Scores, load_scores, load_split, read_scores
from sourcesum.errors import ScoreFileError, SourceSumError, UnknownNameError
from sourcesum.store.stores import ScoreStore
from support.data import BOARD_SPLITS
from support.store import fill

SPLIT = "synth_alpha_sys"


@pytest.fixture
def stores(scores_dir: Path) -> tuple[ScoreStore, ScoreStore]:
    """lead and random(seed=3) in the committed stand-in, bm25 in the user store."""
    from sourcesum.data import load_split as load
    from sourcesum.rankers import create_ranker
    from sourcesum.runner.run import run_splits

    committed = fill(paths.COMMITTED_SCORES_DIR, ("lead",))
    run_splits(
        create_ranker("random", seed=3),
        [load(n) for n in BOARD_SPLITS],
        committed,
        progress=False,
    )
    return committed, fill(scores_dir, ("bm25",))


def _entry_scores(store: ScoreStore, ranker: str) -> dict[str, list[float]]:
    [(_, entry)] = [(p, e) for p, e in store.entries({SPLIT}) if e.ranker == ranker]
    return entry.scores


def test_load_scores_reads_the_user_store_over_the_committed_one(stores):
    committed, user = stores
    split = load_split(SPLIT)
    bm25, lead = load_scores("bm25", SPLIT), load_scores("lead", split)
    assert isinstance(bm25, Scores) and (bm25.name, bm25.label, bm25.split) == ("bm25", "bm25", SPLIT)
    assert dict(bm25) == _entry_scores(user, "bm25") and list(bm25) == [p.id for p in split]
    assert dict(lead) == _entry_scores(committed, "lead")
    assert list(bm25.values()) == [bm25[k] for k in bm25] and dict(bm25.items()) == dict(bm25)  # a Mapping
    by_label = load_scores("random(seed=3)", SPLIT)  # the full label; the ranker's name alone too
    assert dict(by_label) == dict(load_scores("random", SPLIT)) == _entry_scores(committed, "random")
    assert by_label.identity == 'random|{"seed": 3}' and bm25.identity != lead.identity


def test_load_scores_names_what_it_cannot_find(stores):
    with pytest.raises(UnknownNameError, match="no single leaderboard row for 'nosuch'; rows: .*bm25"):
        load_scores("nosuch", SPLIT)
    with pytest.raises(UnknownNameError, match="synth_alpha_sys_all is not a board split of synthnews"):
        load_scores("bm25", "synth_alpha_sys_all")
    with pytest.raises(SourceSumError, match="unknown split"):
        load_scores("bm25", "nosuch")


def _frame(scores: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(pid, i, s) for pid, row in scores.items() for i, s in enumerate(row)],
        columns=["pair_id", "sentence_index", "score"],
    ).sample(frac=1.0, random_state=0)  # any row order


def _trec(path: Path, scores: dict[str, list[float]]) -> Path:
    lines = [
        f"{pid} Q0 {pid}#{i} {rank} {s!r} mine"
        for pid, row in scores.items()
        for rank, (i, s) in enumerate(sorted(enumerate(row), key=lambda x: -x[1]), start=1)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_read_scores_reads_a_dict_a_dataframe_and_a_trec_run_alike(tmp_path):
    split = load_split(SPLIT)
    rng = np.random.default_rng(0)
    mine = {p.id: [float(x) for x in rng.random(p.n_sentences)] for p in reversed(split.pairs)}
    from_dict = read_scores(mine, SPLIT, "mine")
    from_frame = read_scores(_frame(mine), split, "mine")
    from_trec = read_scores(_trec(tmp_path / "mine.run", mine), SPLIT, "mine")
    from_numpy = read_scores({k: np.array(v) for k, v in mine.items()}, SPLIT, "mine")
    for scores in (from_dict, from_frame, from_trec, from_numpy):
        assert dict(scores) == mine and list(scores) == [p.id for p in split]  # split order
        assert scores.identity == from_dict.identity and scores.name == scores.label == "mine"
    assert read_scores(
        {**mine, split.pairs[0].id: [0.0] * split.pairs[0].n_sentences}, SPLIT, "x"
    ).identity != (from_dict.identity)


def test_read_scores_refuses_scores_that_do_not_fit_the_split(tmp_path):
    split = load_split(SPLIT)
    first = split.pairs[0]
    good = {p.id: [0.0] * p.n_sentences for p in split}
    cases = [
        ({k: v for k, v in good.items() if k != first.id}, f"pair {first.id} of split {SPLIT} is missing"),
        ({**good, "other": [1.0]}, "pair other is not in split"),
        ({**good, first.id: [0.0]}, f"pair {first.id} has 1 scores but {first.n_sentences} sentences"),
        ({**good, first.id: [float("nan")] * first.n_sentences}, "non-finite score"),
        ({**good, first.id: ["a"] * first.n_sentences}, "score 'a' is not a number"),
        ({**good, first.id: [True] * first.n_sentences}, "score True is not a number"),
    ]
    for data, message in cases:
        with pytest.raises(ScoreFileError, match=message):
            read_scores(data, SPLIT, "mine")
    frame = _frame(good)
    with pytest.raises(ScoreFileError, match="lacks column.*sentence_index"):
        read_scores(frame.drop(columns="sentence_index"), SPLIT, "mine")
    doubled = pd.concat([frame, frame[frame.pair_id == first.id].head(1)])
    with pytest.raises(ScoreFileError, match=f"pair {first.id}: sentence indices .* are not 0..n-1"):
        read_scores(doubled, SPLIT, "mine")
    with pytest.raises(ScoreFileError, match="no such file"):
        read_scores(tmp_path / "missing.run", SPLIT, "mine")
    with pytest.raises(
        SourceSumError, match="expected a mapping, a DataFrame or a TREC run's path, not list"
    ):
        read_scores([1.0], SPLIT, "mine")


@pytest.mark.real_data
def test_load_scores_reads_published_outputs_with_their_nan_count(tmp_path, monkeypatch):
    """A published system by its label; its NaN scores read as 0 are counted as the board counts them."""
    from sourcesum.board.collect import collect_stores
    from sourcesum.board.statistics import row_identity

    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(tmp_path))
    label = "published: cross-attention (PEGASUS)"
    row = collect_stores(tmp_path).row(label)
    scores = load_scores(label, "cnn_pegasus")
    assert dict(scores) == row.entries["cnn_pegasus"].scores and scores.identity == row_identity(row)
    assert scores.nan_replaced == row.nan_replaced["cnn_pegasus"][0] > 0
