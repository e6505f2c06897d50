"""Measures and paired tests for notebooks (sourcesum.api.evaluating): ``evaluate`` gives the
per-pair table whose means ``sourcesum run`` prints; ``compare`` gives exactly the numbers
``sourcesum compare --json`` prints for the same rows, and compares one's own scores the same
way."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sourcesum.api import compare, evaluate, load_scores, load_split, read_scores
from sourcesum.errors import SourceSumError, UnknownNameError
from support.cli import run_cli
from support.store import fill

SPLIT = "synth_alpha_sys"


@pytest.fixture
def store(scores_dir: Path) -> Path:
    fill(scores_dir, ("lead", "bm25", "random"))
    return scores_dir


def test_evaluate_gives_the_per_pair_table_whose_means_run_prints(store, capsys):
    bm25 = load_scores("bm25", SPLIT)
    table = evaluate(bm25, "nDCG,AP,P@1,Spearman")
    split = load_split(SPLIT)
    assert isinstance(table, pd.DataFrame) and list(table.columns) == ["nDCG", "AP", "P@1", "Spearman"]
    assert table.index.name == "pair_id" and list(table.index) == [p.id for p in split]
    code, out, _ = run_cli(
        capsys,
        "run",
        "--ranker",
        "bm25",
        "--split",
        SPLIT,
        "--measures",
        "nDCG,AP,P@1",
        "--json",
        "--no-progress",
    )
    [record] = json.loads(out)["results"]
    assert code == 0
    assert [record["ndcg"], record["map"], record["p_at_1"]] == pytest.approx(
        table[["nDCG", "AP", "P@1"]].mean().tolist(), abs=1e-15
    )
    best = {p.id: [float(g) for g in split.graded(p.id)] for p in split}  # the oracle's ranking
    assert (evaluate(read_scores(best, SPLIT, "best"), "nDCG")["nDCG"] == 1.0).all()
    with pytest.raises(UnknownNameError, match="unknown measure 'nosuch'"):
        evaluate(bm25, "nosuch")


def test_compare_gives_the_numbers_sourcesum_compare_prints(store, capsys):
    code, out, _ = run_cli(
        capsys, "compare", "bm25", "lead", "random", "--split", SPLIT, "--measures", "nDCG,RR", "--json"
    )
    assert code == 0
    printed = json.loads(out)["comparisons"]
    table = compare(*(load_scores(n, SPLIT) for n in ("bm25", "lead", "random")), measures="nDCG,RR")
    assert len(printed) == 6 and table.to_dict("records") == printed  # every field, bit for bit
    code, out, _ = run_cli(
        capsys,
        "compare",
        "bm25",
        "lead",
        "--split",
        SPLIT,
        "--by",
        "pair",
        "--resamples",
        "2000",
        "--seed",
        "7",
        "--json",
    )
    by_pair = compare(
        load_scores("bm25", SPLIT), load_scores("lead", SPLIT), by="pair", resamples=2000, seed=7
    )
    assert by_pair.to_dict("records") == json.loads(out)["comparisons"]


def test_compare_takes_ones_own_scores(store):
    split = load_split(SPLIT)
    lead = load_scores("lead", SPLIT)
    mine = read_scores({p.id: list(-np.arange(p.n_sentences, dtype=float)) for p in split}, SPLIT, "mine")
    table = compare(mine, lead)
    assert list(table["a"]) == ["mine", "mine"] and list(table["b"]) == ["lead", "lead"]
    assert (table["mean_a"] == table["mean_b"]).all()  # lead's own ranking: nothing to tell apart
    assert (
        (table["ci_low"] == 0).all()
        and (table["ci_high"] == 0).all()
        and (table["p_randomization"] == 1).all()
    )
    with pytest.raises(SourceSumError, match="two score sets share a name"):
        compare(lead, load_scores("lead", SPLIT))
    with pytest.raises(SourceSumError, match="on different splits"):
        compare(mine, load_scores("lead", "synth_beta_sys"))
    with pytest.raises(SourceSumError, match="by='documents'"):
        compare(mine, lead, by="documents")
    with pytest.raises(SourceSumError, match="resamples=10 is not between 1,000 and 100,000"):
        compare(mine, lead, resamples=10)
