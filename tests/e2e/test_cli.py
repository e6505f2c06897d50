"""The command line end to end: list, run, evaluate, leaderboard, compare, show, export, errors.

In-process ``main([...])`` calls on the synthetic datasets (``synthnews``: four board splits of
three pairs, ``synthclaims``: one split in another format; registered by conftest.py), so they
need no downloaded data. Tests marked ``real_data`` check what only the real splits, the paper's
published outputs or the committed store can show.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from sourcesum import paths, stats
from sourcesum.board.statistics import resampling_clusters
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.rankers import create_ranker
from support.boards import declaration
from support.cli import run_cli

SYNTH = dataset("synthnews").board_splits()
"""synth_alpha_sys, synth_alpha_ref, synth_beta_sys, synth_beta_ref."""


def run_json(capsys, rankers: str, split: str, *extra: str) -> dict[tuple[str, str], dict]:
    """``sourcesum run --json`` results by (ranker label, split)."""
    code, out, err = run_cli(
        capsys, "run", "--ranker", rankers, "--split", split, "--json", "--no-progress", *extra
    )
    assert code == 0, err
    return {(r["ranker"], r["split"]): r for r in json.loads(out)["results"]}


def test_list_shows_datasets_splits_rankers_measures_and_protocols(capsys):
    code, out, _ = run_cli(capsys, "list", "--json")
    listing = json.loads(out)
    assert code == 0
    assert set(listing) == {"schema", "datasets", "splits", "rankers", "measures", "protocols"}
    assert {"lead", "random", "oracle", "llm_judge"} <= {r["name"] for r in listing["rankers"]}
    # the built-in dataset comes first, with its four board splits (the pair counts it declares)
    datasets = {d["name"]: d for d in listing["datasets"]}
    assert listing["datasets"][0]["name"] == "sourcesum"
    assert [s["pairs"] for s in listing["splits"][:4]] == [119, 119, 468, 505]
    assert datasets["sourcesum"]["board_splits"] == [
        "xsum_pegasus",
        "xsum_reference",
        "cnn_pegasus",
        "cnn_reference",
    ]
    # plugin datasets are listed with their splits (the synthetic ones of conftest.py)
    assert datasets["synthnews"]["board_splits"] == SYNTH
    assert [(s["name"], s["pairs"], s["board"]) for s in datasets["synthnews"]["splits"]][-2:] == [
        ("synth_alpha_sys_all", 5, False),
        ("synth_alpha_sys_heldout", 2, False),
    ]
    assert [s["name"] for s in datasets["synthclaims"]["splits"]] == ["synth_claims"]
    assert {s["name"] for s in listing["splits"]} >= set(SYNTH) | {"synth_claims", "cnn_reference_all"}
    assert {"nDCG", "AP", "RR"} <= {m["family"] for m in listing["measures"]}
    assert {"own", "cross-corpus", "kfold"} <= {p["name"] for p in listing["protocols"]}
    code, text, _ = run_cli(capsys, "list")
    assert code == 0 and text.startswith("Datasets and splits")
    assert "  synthnews: SynthNews" in text and "Training protocols" in text


def test_run_json_oracle_is_perfect_and_lead_beats_random(capsys, scores_dir):
    """``--split synthnews`` (a dataset name) runs its four board splits."""
    results = run_json(capsys, "lead,random,oracle", "synthnews")
    assert len(results) == 12 and {s for _, s in results} == set(SYNTH)
    for split in SYNTH:
        oracle = results[("oracle", split)]
        assert oracle["ndcg"] == pytest.approx(1.0, abs=1e-12) and oracle["map"] == pytest.approx(
            1.0, abs=1e-12
        )
        assert results[("lead", split)]["ndcg"] > results[("random", split)]["ndcg"]
        assert oracle["pairs"] == len(load_split(split)) == 3
    assert len(list(scores_dir.glob("*/*.json"))) == 12
    # a second format: graded = number of supporting sets; one claim has no supporting sentence,
    # so no measure is defined on it
    claims = run_json(capsys, "oracle", "synth_claims")[("oracle", "synth_claims")]
    assert claims["ndcg"] == pytest.approx(1.0, abs=1e-12) and claims["pairs"] == 4
    assert claims["undefined"] == {"ndcg": 1, "map": 1}


def test_run_table_and_extra_measures(capsys, scores_dir):
    code, out, _ = run_cli(
        capsys,
        "run",
        "--ranker",
        "lead",
        "--split",
        "synth_alpha_sys_all",
        "--measures",
        "nDCG,AP,P@3",
        "--no-progress",
    )
    assert code == 0
    assert "P@3" in out
    # one pair has no sentence with 2 votes (no binary source)
    assert "note: lead on synth_alpha_sys_all: MAP is undefined (no relevant sentence on 1 pair)" in out
    assert "MAP is undefined (no relevant sentence on 1 pair)" in out and "left out of its mean" in out


def _score_file(tmp_path, split_name, field, transform, drop_pair=None, nan_at=()):
    """The split's own JSON file with one more annotation field ``field`` holding scores."""
    rows = json.loads(load_split(split_name).path.read_text())
    for i, row in enumerate(rows):
        for j, ann in enumerate(row["annotations"]):
            ann[field] = float("nan") if (i, j) in nan_at else transform(row, j)
    if drop_pair is not None:
        rows.pop(drop_pair)
    path = tmp_path / f"{split_name}__{field}.json"
    path.write_text(json.dumps(rows))
    return path


def test_evaluate_sourcesum_format_infers_split_and_replaces_nan(capsys, tmp_path):
    split = load_split("synth_beta_sys")
    nan_at = {(0, 0), (1, 1)}
    lead_like = _score_file(tmp_path, split.name, "pos_score", lambda row, j: -j, nan_at=nan_at)
    code, out, _ = run_cli(capsys, "evaluate", str(lead_like), "--field", "pos_score", "--json")
    (record,) = json.loads(out)["results"]
    assert code == 0 and record["split"] == split.name and record["field"] == "pos_score"
    assert record["nan_replaced"] == 2 and record["pairs"] == 3 and record["all_nan_pairs"] == 0
    # NaN counts as 0 (pair 1's second sentence then ties with its first, scored -0)
    replaced = {
        p.id: [0.0 if (i, j) in nan_at else float(-j) for j in range(p.n_sentences)]
        for i, p in enumerate(split)
    }
    expected = evaluate_split(split, replaced, "expected")
    assert record["ndcg"] == expected.mean(NDCG) and record["map"] == expected.mean(AP)
    whole = {(2, j) for j in range(split.pairs[2].n_sentences)}
    lead_like = _score_file(tmp_path, split.name, "pos_score", lambda row, j: -j, nan_at=whole | {(0, 0)})
    code, out, _ = run_cli(capsys, "evaluate", str(lead_like), "--field", "pos_score")
    assert code == 0 and f"note: {len(whole) + 1} NaN scores replaced by 0 in synth_beta_sys" in out
    assert "in 1 pair(s) every score was NaN" in out


def test_evaluate_matches_run_for_the_same_scores(capsys, tmp_path, scores_dir):
    """A file holding lead's scores evaluates to exactly what `run --ranker lead` reports."""
    lead_file = _score_file(tmp_path, "synth_beta_ref", "position", lambda row, j: -j)
    measures = ("--measures", "nDCG,AP,RR,P@2")
    _, out, _ = run_cli(capsys, "evaluate", str(lead_file), "--field", "position", "--json", *measures)
    evaluated = json.loads(out)["results"][0]
    ran = run_json(capsys, "lead", "synth_beta_ref", *measures)[("lead", "synth_beta_ref")]
    for key in ("ndcg", "map", "rr", "p_at_2", "pairs"):
        assert evaluated[key] == ran[key]


def test_evaluate_errors_name_the_pair(capsys, tmp_path):
    split = load_split("synth_alpha_sys_all")
    missing = _score_file(tmp_path, split.name, "s", lambda row, j: 1.0, drop_pair=3)
    code, _, err = run_cli(capsys, "evaluate", str(missing), "--field", "s", "--split", split.name)
    pair_id = split.pairs[3].id
    assert code == 2 and err.strip() == f"error: {missing}: pair {pair_id} of split {split.name} is missing"
    # its 4 ids are neither synth_alpha_sys's 3 nor synth_alpha_sys_all's 5
    code, _, err = run_cli(capsys, "evaluate", str(missing), "--field", "s")
    assert code == 2 and "match no split exactly" in err
    code, _, err = run_cli(capsys, "evaluate", str(missing), "--field", "nope", "--split", split.name)
    assert code == 2 and "has no field 'nope'" in err and len(err.strip().splitlines()) == 1


def test_evaluate_trec_run(capsys, tmp_path, scores_dir):
    split = load_split("synth_alpha_sys")
    lines = [f"{p.id} Q0 s{i} {i + 1} {-i} lead" for p in split for i in range(p.n_sentences)]
    run_file = tmp_path / "lead.run"
    run_file.write_text("\n".join(lines) + "\n")
    _, out, _ = run_cli(capsys, "evaluate", str(run_file), "--format", "trec", "--json")
    (record,) = json.loads(out)["results"]
    lead = run_json(capsys, "lead", split.name)[("lead", split.name)]
    assert record["split"] == split.name  # not synth_alpha_sys_all, which holds these 3 pairs and 2 more
    assert record["ndcg"] == pytest.approx(lead["ndcg"], abs=1e-12)
    assert record["map"] == pytest.approx(lead["map"], abs=1e-12)


def test_leaderboard_is_byte_identical_and_has_all_formats(capsys, scores_dir, tmp_path):
    results = run_json(capsys, "lead,random,oracle", "synthnews")
    board = ("leaderboard", "--all", "--dataset", "synthnews")
    first, second = tmp_path / "a" / "leaderboard.md", tmp_path / "b" / "leaderboard.md"
    assert run_cli(capsys, *board, "-o", str(first))[0] == 0
    assert run_cli(capsys, *board, "-o", str(second))[0] == 0
    text = first.read_text()
    assert text == second.read_text()
    png = first.with_name("leaderboard.png").read_bytes()
    assert png == second.with_name("leaderboard.png").read_bytes()
    assert text.startswith("# SynthNews leaderboard\n")
    lead, random = results[("lead", "synth_alpha_sys")], results[("random", "synth_alpha_sys")]
    assert lead["ndcg"] > random["ndcg"]
    assert f"| lead | **{lead['ndcg']:.4f}** [" in text  # the best ranked row of the first column
    # three documents per split: no sign-flip test reaches p < 0.25, so random is not
    # significantly worse than the best (†)
    assert f"| random | {random['ndcg']:.4f} † [" in text
    assert "## Reference rows" in text and "| oracle | 1.0000" in text
    assert "## Published systems" not in text  # synthnews publishes no outputs
    _, latex, _ = run_cli(capsys, *board, "-o", "-", "--format", "latex")
    assert r"\toprule" in latex and r"\textbf{" in latex and "Alpha-Sys" in latex
    _, csv_text, _ = run_cli(capsys, *board, "-o", "-", "--format", "csv")
    assert csv_text.splitlines()[0].startswith(
        "board,group,name,ranker,split,pairs,reference,published,ndcg,ndcg_ci_low,ndcg_ci_high,map"
    )
    _, js, _ = run_cli(capsys, *board, "-o", "-", "--format", "json")
    records = json.loads(js)["results"]
    assert len(records) == 12 and not any(r["published"] for r in records)  # 3 rankers, 4 splits
    assert {(r["ranker"], r["split"]) for r in records} == set(results)
    for record in records:
        assert record["ndcg"] == results[(record["ranker"], record["split"])]["ndcg"]


@pytest.mark.real_data
def test_leaderboard_all_adds_the_published_systems(capsys, scores_dir, tmp_path):
    """On SourceSum, `--all` adds a row per published method of the paper (its printed numbers)."""
    run_cli(capsys, "run", "--ranker", "lead,random,oracle", "--split", "all", "--no-progress")
    out = tmp_path / "leaderboard.md"
    assert run_cli(capsys, "leaderboard", "--all", "-o", str(out))[0] == 0
    text = out.read_text()
    assert "| lead | 0.8521 [" in text  # the paper's published perplexity gain is best there
    assert "| published: perplexity gain (PEGASUS) | **0.8976** [" in text
    assert "## Reference rows" in text and "| oracle | 1.0000" in text
    assert "## Published systems" in text and "| published: ROUGE-1 | 0.8476 [" in text
    _, js, _ = run_cli(capsys, "leaderboard", "--all", "-o", "-", "--format", "json")
    results = json.loads(js)["results"]
    published = [r for r in results if r["published"]]
    assert len(results) - len(published) == 12  # 3 rankers, 4 splits
    assert len(published) == 30  # 8 methods, 4 splits each but cross-attention (2)


DECLARATION = declaration()


def test_declared_board_of_another_dataset(capsys, scores_dir, tmp_path):
    """A declaration naming its dataset: every missing or partial entry is named with the
    command that computes it, and nothing is written; once computed, the board equals `--all`'s
    on the same store (but for the header saying where its rows come from)."""
    declaration = tmp_path / "board.toml"
    declaration.write_text(DECLARATION)
    out = tmp_path / "declared" / "leaderboard.md"
    declared = ("leaderboard", "--declaration", str(declaration), "--scores-dir", str(scores_dir))
    scores_dir.mkdir(exist_ok=True)
    run_cli(capsys, "run", "--ranker", "bm25", "--split", "synth_beta_ref", "--limit", "1", "--no-progress")
    code, _, err = run_cli(capsys, *declared, "-o", str(out))
    assert code == 2 and "16 declared entries are not complete and valid; nothing was written" in err
    assert "bm25 on synth_beta_ref: partial (1/3 pairs" in err
    assert f"lead on synth_alpha_sys: missing ({scores_dir}/lead/synth_alpha_sys." in err
    # the store named is run's default ($SOURCESUM_SCORES_DIR): the hint needs no --scores-dir
    assert "compute: sourcesum run --ranker oracle --split synth_beta_sys\n" in err
    assert not out.parent.exists()

    run_cli(capsys, "run", "--ranker", "lead,random,bm25,oracle", "--split", "synthnews", "--no-progress")
    assert run_cli(capsys, *declared, "-o", str(out))[0] == 0
    everything = tmp_path / "all" / "leaderboard.md"
    assert run_cli(capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(everything))[0] == 0
    text = out.read_text()
    assert text.startswith("# SynthNews leaderboard\n")
    assert (
        f"- **Regenerate**: `sourcesum leaderboard --declaration {paths.shown(declaration)} "
        f"--scores-dir {paths.shown(scores_dir)}`" in text
    )

    def results(board: str) -> str:  # the results up to the part that says where they come from
        return board.split("## Results")[1].split("## How to read this board")[0]

    assert results(text) == results(everything.read_text())
    assert out.with_suffix(".png").read_bytes() == everything.with_suffix(".png").read_bytes()

    declaration.write_text('dataset = "nosuch"\n' + DECLARATION.split("\n", 1)[1])
    code, _, err = run_cli(capsys, *declared, "-o", str(out))
    assert code == 2 and "dataset = 'nosuch' is not a registered dataset (" in err
    assert len(err.strip().splitlines()) == 1


def test_a_board_of_a_dataset_without_votes(capsys, scores_dir, tmp_path):
    """synthclaims has one board split and no per-annotator votes: one column per measure
    and Avg, its own relevance policy, and no human-agreement table."""
    results = run_json(capsys, "lead,random,oracle", "synthclaims")
    out = tmp_path / "claims.md"
    assert run_cli(capsys, "leaderboard", "--all", "--dataset", "synthclaims", "-o", str(out))[0] == 0
    text = out.read_text()
    assert text.startswith("# SynthClaims leaderboard\n")
    assert "- **Relevance**: graded = number of minimal supporting sets holding the sentence" in text
    assert "| Ranker | Claims NDCG | Claims MAP | Avg NDCG | Avg MAP |" in text
    assert "## Human agreement" not in text and "## Ties" in text
    lead = results[("lead", "synth_claims")]
    line = next(x for x in text.splitlines() if x.startswith("| lead | "))
    assert f"{lead['ndcg']:.4f}" in line and f"{lead['map']:.4f}" in line


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["run", "--ranker", "nosuch", "--split", "synth_alpha_sys"], "unknown ranker 'nosuch'; registered:"),
        (["run", "--ranker", "lead", "--split", "synth"], "unknown split 'synth'"),
        (
            ["run", "--ranker", "random", "-p", "random.sede=1", "--split", "synth_alpha_sys"],
            "ranker 'random' has no parameter 'sede'; it accepts seed",
        ),
        (
            ["run", "--ranker", "lead", "--split", "synth_alpha_sys", "--measures", "MRR"],
            "unknown measure 'MRR'",
        ),
        (["evaluate", "/nonexistent.json", "--field", "x"], "/nonexistent.json: no such file"),
        (["leaderboard", "--all", "--dataset", "nosuch", "-o", "-"], "unknown dataset 'nosuch'; registered:"),
        (
            ["compare", "lead", "random", "--split", "synth_alpha_sys,synth_claims"],
            "one dataset's splits at a time",
        ),
        (
            ["compare", "lead", "random", "--split", "synth_alpha_sys_all"],
            "compare works on the board splits",
        ),
    ],
)
def test_user_errors_are_one_line_with_exit_2(capsys, scores_dir, argv, fragment):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_debug_shows_the_exception(scores_dir):
    from sourcesum.errors import UnknownNameError

    with pytest.raises(UnknownNameError):
        main(["--debug", "run", "--ranker", "nosuch"])


def test_leaderboard_shows_cis_significance_ties_and_human_row(capsys, scores_dir, tmp_path):
    results = run_json(capsys, "lead,random,oracle", "synthnews")
    out = tmp_path / "lb.md"
    board = ("leaderboard", "--all", "--dataset", "synthnews")
    assert run_cli(capsys, *board, "-o", str(out))[0] == 0
    text = out.read_text()
    lead = results[("lead", "synth_alpha_sys")]
    assert f"| lead | **{lead['ndcg']:.4f}** [0." in text
    assert "## Ties" in text and "| random | Alpha-Sys | 0.0% | 0.0% |" in text  # continuous scores
    assert "| MAP worst-first | MAP block, scikit-learn (default) | MAP expected | MAP best-first |" in text
    assert "## Human agreement" in text and "| human (held-out annotator's votes) | 0." in text
    # annotators per pair: Alpha-Ref has a pair with one annotator, Beta-Ref one whose
    # sentences carry different numbers of votes; both are left out of the human table
    assert "| Alpha-Ref | 3 | 1 | 0 | 0 | 2 |" in text and "| Beta-Ref | 3 | 0 | 1 | 0 | 2 |" in text
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # named after its board
    _, latex, _ = run_cli(capsys, *board, "-o", "-", "--format", "latex", "--ci")
    assert r"\scriptsize[" in latex
    _, js, _ = run_cli(capsys, *board, "-o", "-", "--format", "json")
    record = next(
        r for r in json.loads(js)["results"] if r["ranker"] == "lead" and r["split"] == "synth_alpha_sys"
    )
    assert record["ndcg_ci"][0] < record["ndcg"] < record["ndcg_ci"][1] and "ties" in record


def test_compare_json_oracle_vs_itself_and_lead_vs_random(capsys, scores_dir):
    results = run_json(capsys, "lead,random,oracle", "synthnews")
    code, out, _ = run_cli(capsys, "compare", "oracle", "oracle", "--split", "synth_alpha_sys", "--json")
    (first, second) = json.loads(out)["comparisons"]
    assert code == 0 and first["p_randomization"] == 1.0 and first["p_holm"] == 1.0
    _, out, _ = run_cli(capsys, "compare", "lead", "random", "oracle", "--split", "synth_alpha_sys", "--json")
    rows = json.loads(out)["comparisons"]
    assert len(rows) == 6  # 3 comparisons x 2 measures
    # the p-values are the document-level randomization tests, Holm-corrected per measure,
    # of the rankers' own scores
    split = load_split("synth_alpha_sys")
    scores = {
        "lead": {p.id: [float(-i) for i in range(p.n_sentences)] for p in split},
        "random": {p.id: list(create_ranker("random").score(p)) for p in split},
        "oracle": {p.id: [float(g) for g in split.graded(p.id)] for p in split},
    }
    values = {label: evaluate_split(split, s, label) for label, s in scores.items()}
    for measure in (NDCG, AP):
        family = [r for r in rows if r["measure"] == measure.name]
        assert [(r["a"], r["b"]) for r in family] == [
            ("lead", "random"),
            ("lead", "oracle"),
            ("random", "oracle"),
        ]
        for r in family:  # synth_alpha_sys has 3 documents: every sign pattern is enumerated
            diffs = values[r["a"]].values(measure) - values[r["b"]].values(measure)
            by_document = pd.Series(diffs, index=resampling_clusters(split)).dropna()
            sums = by_document.groupby(level=0).sum().to_numpy() / len(by_document)
            patterns = np.array(list(itertools.product([-1.0, 1.0], repeat=len(sums))))
            exact = np.mean(np.abs(patterns @ sums) >= abs(sums.sum()) - 1e-12)
            assert r["exact"] and r["p_mc_se"] == 0.0 and r["flips"] == 2 ** len(sums)
            assert r["p_randomization"] == pytest.approx(exact, abs=1e-12)
        raw = [r["p_randomization"] for r in family]
        assert [r["p_holm"] for r in family] == pytest.approx(stats.holm(raw), abs=1e-12)
        assert all(r["p_holm_interval"] == [r["p_holm"], r["p_holm"]] for r in family)
        assert all(r["decision"] == "not significant" for r in family)  # 3 documents: p >= 2/8
        lead_random = family[0]
        assert lead_random["mean_a"] == pytest.approx(results[("lead", split.name)][measure.json_key])
        assert lead_random["mean_b"] == pytest.approx(results[("random", split.name)][measure.json_key])
    assert min(r["p_randomization"] for r in rows) >= 2 / 8
    _, out, _ = run_cli(capsys, "compare", "lead", "random", "--split", "synthnews", "--json")
    assert {r["split"] for r in json.loads(out)["comparisons"]} == set(SYNTH)


def test_show_and_export(capsys, scores_dir, tmp_path):
    run_cli(capsys, "run", "--ranker", "lead,oracle", "--split", "synthnews", "--no-progress")
    split = load_split("synth_alpha_sys")
    pair = split.pairs[2]
    judgment = split.judgment(pair.id)
    code, out, _ = run_cli(capsys, "show", pair.id, "--ranker", "lead,oracle", "--json")
    view = json.loads(out)
    assert code == 0 and view["summary"] == pair.summary and len(view["sentences"]) == pair.n_sentences
    assert view["split"] == split.name and view["rankers"] == ["lead", "oracle"]
    assert view["sentences"][0]["scores"]["lead"]["rank"] == 1
    assert [s["votes"] for s in view["sentences"]] == [list(v) for v in judgment.votes]
    assert [s["graded"] for s in view["sentences"]] == [int(g) for g in judgment.graded]
    assert [s["scores"]["oracle"]["score"] for s in view["sentences"]] == [float(g) for g in judgment.graded]
    code, out, _ = run_cli(capsys, "show", pair.id)
    assert code == 0 and " ".join(out.split()).count("summary: " + pair.summary) == 1
    assert "A = lead" in out  # the best declared ranked row with scores here
    folder = tmp_path / "trec"
    assert run_cli(capsys, "export", "--dataset", "synthnews", "--output", str(folder))[0] == 0
    run_file = folder / "lead.synth_alpha_sys.run"
    _, out, _ = run_cli(capsys, "evaluate", str(run_file), "--format", "trec", "--json")
    lead = run_json(capsys, "lead", split.name)[("lead", split.name)]
    assert json.loads(out)["results"][0]["ndcg"] == pytest.approx(lead["ndcg"], abs=1e-12)
    qrels = (folder / "synth_alpha_sys.binary.qrels").read_text().splitlines()
    assert len(qrels) == sum(p.n_sentences for p in split)
    relevant = [line for line in qrels if line.split()[-1] != "0"]
    assert len(relevant) == sum(int(b) for p in split for b in split.binary(p.id))
    assert sorted(p.name for p in folder.glob("*.run")) == sorted(
        f"{r}.{s}.run" for r in ("lead", "oracle") for s in SYNTH
    )


@pytest.mark.real_data
def test_show_fits_100_columns_and_names_its_columns(capsys):
    """Against the committed store: the 4 best declared rankers, no line over 100 columns."""
    pair = load_split("cnn_pegasus").pairs[0]
    code, out, _ = run_cli(capsys, "show", pair.id)
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 100
    assert "  A = learned(model=logistic, protocol=kfold," in out and "  D = " in out and "  E = " not in out
    for sentence in pair.sentences[:3]:
        assert sentence.split()[0] in out
    code, _, err = run_cli(capsys, "show", pair.id, "--ranker", "lead,random,bm25,tfidf,rouge1,rouge2,rougeL")
    assert code == 2 and "do not fit in 100 columns (at most 5)" in err
    code, _, err = run_cli(capsys, "show", "nope")
    assert code == 2 and "no pair 'nope' in any split; ids look like " in err


@pytest.mark.slow  # a CLI subprocess
def test_a_closed_pipe_ends_quietly():
    """Output to a pipe whose reader is gone (`sourcesum list | head -1` once head has exited)
    ends with exit 0 and nothing on stderr. The reader is closed before the command starts, so
    the pipe is closed whatever the timing; `list` prints more than one buffer, so the first
    write fails inside the command."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from sourcesum.cli import main; sys.exit(main(['list']))"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert proc.returncode == 0 and proc.stderr == ""


def test_csv_carries_every_field_of_the_json_records(capsys, scores_dir):
    run_cli(capsys, "run", "--ranker", "lead,random,oracle", "--split", "synthnews", "--no-progress")
    board = ("leaderboard", "--all", "--dataset", "synthnews", "-o", "-")
    _, js, _ = run_cli(capsys, *board, "--format", "json")
    _, csv_text, _ = run_cli(capsys, *board, "--format", "csv")
    lines = list(csv.DictReader(io.StringIO(csv_text)))
    payload = json.loads(js)
    results = payload["results"]
    assert [(line["name"], line["split"]) for line in lines] == [(r["name"], r["split"]) for r in results]
    averages = {r["name"]: r for r in payload["averages"]}
    checked = set()

    def check(line, name, value):
        assert name in line, name
        if isinstance(value, bool):
            assert line[name] == str(value).lower(), name
        elif isinstance(value, float):
            assert float(line[name]) == value or (math.isnan(value) and math.isnan(float(line[name]))), name
        else:
            assert line[name] == str(value), name
        checked.add(name)

    def leaves(record, prefix=""):
        for key, value in record.items():
            if isinstance(value, dict):
                yield from leaves(value, f"{prefix}{key}.")
            elif isinstance(value, list) and len(value) == 2:
                yield f"{prefix}{key}_low", value[0]
                yield f"{prefix}{key}_high", value[1]
            else:
                yield f"{prefix}{key}", value

    for line, record in zip(lines, results, strict=True):
        for key, value in leaves(record):
            check(line, key, value)
        for key, value in leaves(averages[record["name"]]):
            if key not in ("board", "group", "ranker", "name", "reference", "published", "splits"):
                check(line, f"avg_{key}", value)
    # p-values against the best and against lead, and the tie report, are among them
    assert {"ndcg_p_vs_best", "map_p_vs_lead", "ties.pairs_with_ties", "ties.map.expected"} <= checked
    assert {"avg_ndcg", "avg_ndcg_ci_low", "avg_map_p_vs_best_decision"} <= checked


def test_leaderboard_measures_are_generic_end_to_end(capsys, scores_dir, tmp_path):
    results = run_json(capsys, "lead,random,oracle", "synthnews", "--measures", "nDCG@5,AP,RR")
    out = tmp_path / "board.md"
    board = ("leaderboard", "--all", "--dataset", "synthnews")
    measures = ["--measures", "nDCG@5,AP,RR"]
    assert run_cli(capsys, *board, "-o", str(out), *measures)[0] == 0
    text = out.read_text()
    assert "| Ranker | Alpha-Sys nDCG@5 | Alpha-Sys MAP | Alpha-Sys RR |" in text
    assert "| Avg nDCG@5 | Avg MAP | Avg RR |" in text and "map" not in text.split("## Results")[1][:400]
    assert (
        "- **Measures of this board**: `nDCG@5` (graded relevance), MAP (`AP`, binary relevance), "
        "`RR` (binary relevance);" in text
    )
    assert "| nDCG@5 worst-first |" in text and "| RR worst-first |" in text  # the Ties table too
    assert out.with_suffix(".png").read_bytes().startswith(b"\x89PNG")
    _, latex, _ = run_cli(capsys, *board, "-o", "-", "--format", "latex", *measures)
    assert r"\multicolumn{3}{c}{Alpha-Sys}" in latex and "Ranker & nDCG@5 & MAP & RR & nDCG@5" in latex
    _, csv_text, _ = run_cli(capsys, *board, "-o", "-", "--format", "csv", *measures)
    assert "rr_ci_low" in csv_text.splitlines()[0].split(",")
    _, js, _ = run_cli(capsys, *board, "-o", "-", "--format", "json", *measures)
    lead = next(
        r for r in json.loads(js)["results"] if r["ranker"] == "lead" and r["split"] == "synth_beta_sys"
    )
    assert 0 < lead["rr"] <= 1 and 0 < lead["ndcg_at_5"] <= 1 and 0 < lead["map"] <= 1
    for key in ("rr", "ndcg_at_5", "map"):
        assert lead[key] == results[("lead", "synth_beta_sys")][key]
    # lead puts a relevant sentence first in every pair of synth_beta_sys
    split = load_split("synth_beta_sys")
    assert all(split.binary(p.id)[0] for p in split) and lead["rr"] == 1.0
    assert np.isfinite(lead["rr_ci"][0])
