"""The paper's published outputs: located and verified like the data, re-scored as board rows.

Real data: every test that reads a published file or a SourceSum split is marked ``real_data``
(the manifest and the declaration are committed, so their checks run everywhere).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score, ndcg_score
from sourcesum import paths, stats
from sourcesum.board import board_statistics, build_view, collect, read_declaration
from sourcesum.board.statistics import row_identity
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.data.sources import locate, read_verified
from sourcesum.errors import DataError, SourceSumError, UnknownNameError
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.stats.bootstrap import ALPHA
from sourcesum.stats.significance import batch_counts, seed_for
from sourcesum.store import published
from sourcesum.store.published import load_published, published_file, published_methods, read_prompt
from sourcesum.store.stores import ScoreStore

CELLS = [(m, s) for m in published_methods() for s in m.reported]


def test_manifest_pins_thirty_outputs_and_two_prompts():
    source = published.source()
    assert source.name == "sourcesum-published" == dataset("sourcesum").published_source
    files = source.files
    assert len(CELLS) == 30 == sum(f.endswith(".json") for f in files)
    assert {f"{s}__{m.key}.json" for m, s in CELLS} == {f for f in files if f.endswith(".json")}
    assert {f for f in files if not f.endswith(".json")} == {"gpt_prompt_v1.txt", "gpt_prompt_v2.txt"}
    info = published_file("xsum_pegasus__perplexity.json")
    assert info.url.startswith("https://raw.githubusercontent.com/suhara/sourcesum/ba7043a")
    assert info.url.endswith("/outputs/xsum_pegasus__perplexity.json")
    assert info.env_var == "SOURCESUM_PUBLISHED_DIR" and info.download_dir == paths.DATA_ROOT / "published"
    assert published_file("gpt_prompt_v2.txt").url.endswith("/data/gpt_prompt_v2.txt")
    with pytest.raises(UnknownNameError, match="no published file 'nosuch.json'"):
        published_file("nosuch.json")
    # every split a method reports is a board split of SourceSum
    assert {s for _, s in CELLS} == set(dataset("sourcesum").board_splits())


@pytest.mark.real_data
@pytest.mark.parametrize("method,split", CELLS, ids=[f"{s}-{m.key}" for m, s in CELLS])
def test_cell_equals_the_paper(method, split):
    output = load_published(split, method.key)
    evaluation = evaluate_split(load_split(split), output.entry.scores, method.label)
    reported_ndcg, reported_map = method.reported[split]
    assert abs(evaluation.mean(NDCG) - reported_ndcg) <= 5e-5 + 1e-12  # equal to 4 decimals
    assert abs(evaluation.mean(AP) - reported_map) <= 5e-5 + 1e-12


@pytest.mark.real_data
@pytest.mark.parametrize(
    "method,split",
    # one cell in the fast loop, every cell in the full suite (a per-pair scikit-learn loop each)
    [pytest.param(m, s, marks=() if i == 0 else pytest.mark.slow) for i, (m, s) in enumerate(CELLS)],
    ids=[f"{s}-{m.key}" for m, s in CELLS],
)
def test_cell_equals_scikit_learn_on_the_raw_file(method, split):
    output = load_published(split, method.key)
    evaluation = evaluate_split(load_split(split), output.entry.scores, method.label)
    # scikit-learn on the raw file, NaN -> 0 as the paper did
    rows = json.loads(output.path.read_bytes())
    ndcgs, aps = [], []
    for row in rows:
        scores = [0.0 if math.isnan(a[method.key]) else a[method.key] for a in row["annotations"]]
        graded = [sum(a["label"]) for a in row["annotations"]]
        ndcgs.append(ndcg_score([graded], [scores]))
        aps.append(average_precision_score([int(g >= 2) for g in graded], scores))
    assert abs(evaluation.mean(NDCG) - np.mean(ndcgs)) <= 1e-9
    assert abs(evaluation.mean(AP) - np.mean(aps)) <= 1e-9


@pytest.mark.real_data
def test_nan_scores_are_replaced_and_counted():
    for method, split in CELLS:
        output = load_published(split, method.key)
        rows = json.loads(output.path.read_bytes())
        flags = [[math.isnan(a[method.key]) for a in row["annotations"]] for row in rows]
        assert output.nan_replaced == sum(map(sum, flags))
        assert output.all_nan_pairs == sum(all(f) for f in flags)
        assert all(math.isfinite(x) for v in output.entry.scores.values() for x in v)
        assert output.entry.ranker == method.ranker == f"published:{method.key}"
        assert output.entry.complete and output.entry.data_sha256 == load_split(split).sha256
    attention = load_published("cnn_pegasus", "attention")
    assert attention.all_nan_pairs > 100  # the paper's cross-attention: whole pairs of NaN
    with pytest.raises(UnknownNameError, match="published no attention output for split 'xsum_reference'"):
        load_published("xsum_reference", "attention")


@pytest.mark.real_data
def test_prompts_are_verified_templates():
    v1, v2 = read_prompt("v1"), read_prompt("v2")
    assert "{summary}" in v2 and "{sentence}" in v2 and "0 to 100" in v2 and v1 != v2


@pytest.mark.real_data
def test_located_like_the_data(tmp_path, monkeypatch):
    shared = paths.env_dir("SOURCESUM_PUBLISHED_DIR")
    assert shared is not None
    info = published_file("xsum_pegasus__rouge1.json")
    assert locate(info) == shared / info.file  # 1. $SOURCESUM_PUBLISHED_DIR
    monkeypatch.setenv("SOURCESUM_PUBLISHED_DIR", str(tmp_path / "empty"))
    with pytest.raises(DataError, match="SOURCESUM_PUBLISHED_DIR=.* has no xsum_pegasus__rouge1.json"):
        locate(info)
    monkeypatch.delenv("SOURCESUM_PUBLISHED_DIR")
    # a download folder of its own, and the pinned file served from the shared copy
    here = dataclasses.replace(info, download_dir=tmp_path / "published")
    served = dataclasses.replace(here, url=(shared / info.file).as_uri())
    path = locate(served)  # 3. the pinned download, into the download folder
    assert (
        path == tmp_path / "published" / info.file and path.read_bytes() == (shared / info.file).read_bytes()
    )
    assert locate(here) == path  # 2. an earlier download (no URL needed)
    path.write_bytes(path.read_bytes().replace(b"0.", b"1.", 1))
    with pytest.raises(DataError, match=r"sha256 .* for published file xsum_pegasus__rouge1.json"):
        read_verified(here)


def test_declaration_names_published_methods(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text('[[rows]]\nranker = "lead"\n\n[[published]]\nmethod = "perplexity"\n')
    declaration = read_declaration(good)
    assert declaration.dataset == "sourcesum" and declaration.path == good
    assert [(r.ranker, r.published) for r in declaration.rows] == [("perplexity", True), ("lead", False)]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[published]]\nmethod = "nosuch"\n')
    with pytest.raises(UnknownNameError, match="unknown published method 'nosuch'"):
        read_declaration(bad)
    bad.write_text('[[published]]\nranker = "perplexity"\n')
    with pytest.raises(SourceSumError, match=r"\[\[published\]\] #1 needs exactly method"):
        read_declaration(bad)
    declared = read_declaration(paths.DECLARATION_PATH)
    assert declared.dataset == "sourcesum"
    assert {r.ranker for r in declared.rows if r.published} == {m.key for m in published_methods()}


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    store = ScoreStore(tmp_path_factory.mktemp("store"))
    from sourcesum.rankers import create_ranker
    from sourcesum.runner.run import run_splits

    splits = [load_split(name) for name in dataset("sourcesum").board_splits()]
    for name in ("lead", "random", "oracle"):
        run_splits(create_ranker(name), splits, store, progress=False)
    return collect(store)


@pytest.fixture(scope="module")
def board_stats(board):
    return board_statistics(board)


@pytest.mark.real_data
def test_published_rows_are_set_apart_and_compete(board, board_stats):
    rows = board.published_rows
    assert len(rows) == 8 and all(not r.reference and r.label.startswith("published: ") for r in rows)
    assert board.row("published:perplexity").label == "published: perplexity gain (PEGASUS)"
    attention = board.row("published:attention")
    assert set(attention.evaluations) == {"xsum_pegasus", "cnn_pegasus"}
    assert math.isnan(attention.average(NDCG)) and attention.nan_replaced["cnn_pegasus"][1] > 100
    assert {r.label for r in board.ranked_rows} == {"lead", "random"}
    # the best of a column is chosen among rankers and published rows alike
    best = board.best[("xsum_pegasus", NDCG)]
    assert best == max(board.competing_rows, key=lambda r: r.mean("xsum_pegasus", NDCG)).label
    for row in board.competing_rows:
        assert ("xsum_pegasus", NDCG) in board_stats.of(row).ci
        assert row.label == best or ("xsum_pegasus", NDCG) in board_stats.of(row).vs_best
        assert "xsum_pegasus" in board_stats.of(row).ties
    # the view shows them in their own table; the one that misses two splits is named
    view = build_view(board, board_stats)
    assert [r.label for r in view.published] == [r.label for r in rows]
    assert all(r.kind == "published" and r.keys == () for r in view.published)
    assert view.published_coverage == (
        ("published: cross-attention (PEGASUS)", ("XSum-PEGASUS", "CNN/DM-PEGASUS")),
    )


@pytest.mark.real_data
def test_lead_claims_come_from_holm_adjusted_randomization_tests(board, board_stats):
    """Every "better than lead" claim is a decided test: its p-value is (1 + X) / (N + 1) over
    the first N sign patterns of its own seed (recounted here from the per-document sums), and
    the decision is read from Holm on the 99% interval ends of the column's family."""
    lead = board.lead
    for split in board.splits:
        for measure in board.measures:
            family = [r for r in board.competing_rows if r is not lead and split.name in r.evaluations]
            intervals = []
            for r in family:
                marked = board_stats.of(r).vs_lead[(split.name, measure)]
                diffs = pd.Series(
                    r.evaluations[split.name].values(measure) - lead.evaluations[split.name].values(measure),
                    index=list(split.clusters),
                ).dropna()  # undefined pairs (no relevant sentence) are left out
                by_document = diffs.groupby(level=0).sum() / len(diffs)
                seed = seed_for("0", "lead", row_identity(r), row_identity(lead), split.name, measure.name)
                extreme = sum(batch_counts(by_document.to_numpy(), seed, 0, marked.count.batches))
                assert marked.count.extreme == extreme and not marked.count.exact
                assert marked.count.p == (1 + extreme) / (marked.count.flips + 1)
                intervals.append(marked.count.interval())
            lows, highs = stats.holm([i[0] for i in intervals]), stats.holm([i[1] for i in intervals])
            expected = {
                r.label
                for r, high in zip(family, highs, strict=True)
                if high < ALPHA and r.mean(split.name, measure) > lead.mean(split.name, measure)
            }
            assert {r.label for r in board_stats.against_lead(board, split.name, measure)} == expected
            undecided = {r.label for r, lo, hi in zip(family, lows, highs, strict=True) if lo < ALPHA <= hi}
            assert {
                r.label
                for r in family
                if board_stats.of(r).vs_lead[(split.name, measure)].decision == "undecided"
            } == undecided
    from sourcesum.outputs.markdown import render_markdown

    text = render_markdown(build_view(board, board_stats))
    perplexity = board.row("published:perplexity")
    lead_table = text.split("## Against `lead`")[1].split("\n## ")[0]
    line = next(x for x in lead_table.splitlines() if x.startswith(f"| {perplexity.name} |"))
    first = line.split(" | ")[1]  # the XSum-PEGASUS NDCG column
    assert (first == "▲") == (perplexity.label in {r.label for r in board_stats.against_lead(board, "xsum_pegasus", NDCG)})
    replaced, all_nan = board.row("published:attention").nan_replaced["cnn_pegasus"]
    assert (
        f"On CNN/DM-PEGASUS, {replaced:,} NaN scores were replaced by 0 as in the paper; in "
        f"{all_nan} of its 468 pairs every score was NaN"
    ) in text


@pytest.mark.real_data
def test_compare_and_show_take_published_rows(capsys, scores_dir):
    code = main(["compare", "published:perplexity", "published:rouge1", "--split", "xsum_pegasus", "--json"])
    out, _ = capsys.readouterr()
    rows = json.loads(out)["comparisons"]
    assert code == 0 and {r["a"] for r in rows} == {"published: perplexity gain (PEGASUS)"}
    pair = load_split("cnn_pegasus").pairs[0]
    code = main(["show", pair.id, "--ranker", "published:attention", "--json"])
    view = json.loads(capsys.readouterr()[0])
    expected = load_published("cnn_pegasus", "attention").entry.scores[pair.id]
    assert (
        code == 0
        and [s["scores"]["published: cross-attention (PEGASUS)"]["score"] for s in view["sentences"]]
        == expected
    )
    assert main(["show", load_split("xsum_reference").pairs[0].id, "--ranker", "published:attention"]) == 2
    assert "has no scores on split xsum_reference" in capsys.readouterr()[1]
