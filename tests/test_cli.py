"""The command line end to end on the real splits: run, evaluate, leaderboard, errors."""

from __future__ import annotations

import json
import math

import pytest

from benchmark.cli import main
from benchmark.data import load_split


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_splits_and_rankers(capsys):
    code, out, _ = run_cli(capsys, "list", "--json")
    listing = json.loads(out)
    assert code == 0
    assert {"lead", "random", "oracle"} <= {r["name"] for r in listing["rankers"]}
    assert [s["pairs"] for s in listing["splits"][:4]] == [119, 119, 468, 505]


def test_run_json_oracle_is_perfect_and_lead_beats_random(capsys, scores_dir):
    code, out, _ = run_cli(capsys, "run", "--ranker", "lead,random,oracle", "--split", "all", "--json", "--no-progress")
    assert code == 0
    results = {(r["ranker"], r["split"]): r for r in json.loads(out)["results"]}
    assert len(results) == 12
    for split in ("xsum_pegasus", "xsum_reference", "cnn_pegasus", "cnn_reference"):
        oracle = results[("oracle", split)]
        assert oracle["ndcg"] == pytest.approx(1.0, abs=1e-12) and oracle["map"] == pytest.approx(1.0, abs=1e-12)
        assert results[("lead", split)]["ndcg"] > results[("random", split)]["ndcg"]
        assert oracle["examples"] == len(load_split(split))
    assert len(list(scores_dir.glob("*/*.json"))) == 12


def test_run_table_and_extra_measures(capsys, scores_dir):
    code, out, _ = run_cli(capsys, "run", "--ranker", "lead", "--split", "xsum_pegasus_all",
                           "--measures", "nDCG,AP,P@3", "--no-progress")
    assert code == 0
    assert "P@3" in out and "left out of the mean" in out  # 24 pairs have no binary source


def _score_file(tmp_path, split_name, field, transform, drop_pair=False, nan_at=()):
    rows = json.loads(load_split(split_name).path.read_text())
    for i, row in enumerate(rows):
        for j, ann in enumerate(row["annotations"]):
            ann[field] = float("nan") if (i, j) in nan_at else transform(row, j)
    if drop_pair:
        rows.pop(3)
    path = tmp_path / f"{split_name}__{field}.json"
    path.write_text(json.dumps(rows))
    return path


def test_evaluate_sourcesum_format_infers_split_and_replaces_nan(capsys, tmp_path):
    lead_like = _score_file(tmp_path, "cnn_pegasus", "pos_score", lambda row, j: -j, nan_at={(0, 0), (5, 1)})
    code, out, _ = run_cli(capsys, "evaluate", str(lead_like), "--field", "pos_score", "--json")
    (record,) = json.loads(out)["results"]
    assert code == 0 and record["split"] == "cnn_pegasus" and record["field"] == "pos_score"
    assert record["nan_replaced"] == 2 and record["examples"] == 468
    assert 0.7 < record["ndcg"] < 0.75  # close to the lead baseline


def test_evaluate_matches_run_for_the_same_scores(capsys, tmp_path, scores_dir):
    oracle_file = _score_file(tmp_path, "xsum_reference", "votes", lambda row, j: sum(row["annotations"][j]["label"]))
    _, out, _ = run_cli(capsys, "evaluate", str(oracle_file), "--field", "votes", "--json")
    assert json.loads(out)["results"][0]["map"] == pytest.approx(1.0, abs=1e-12)


def test_evaluate_errors_name_the_pair(capsys, tmp_path):
    missing = _score_file(tmp_path, "xsum_pegasus", "s", lambda row, j: 1.0, drop_pair=True)
    code, _, err = run_cli(capsys, "evaluate", str(missing), "--field", "s", "--split", "xsum_pegasus")
    pair_id = load_split("xsum_pegasus").pairs[3].id
    assert code == 2 and err.strip() == f"error: {missing}: pair {pair_id} of split xsum_pegasus is missing"
    code, _, err = run_cli(capsys, "evaluate", str(missing), "--field", "s")
    assert code == 2 and "match no split exactly" in err
    code, _, err = run_cli(capsys, "evaluate", str(missing), "--field", "nope", "--split", "xsum_pegasus")
    assert code == 2 and "has no field 'nope'" in err and len(err.strip().splitlines()) == 1


def test_evaluate_trec_run(capsys, tmp_path):
    split = load_split("xsum_pegasus")
    lines = [f"{p.id} Q0 s{i} {i + 1} {-i} lead" for p in split for i in range(p.n_sentences)]
    run_file = tmp_path / "lead.run"
    run_file.write_text("\n".join(lines) + "\n")
    _, out, _ = run_cli(capsys, "evaluate", str(run_file), "--format", "trec", "--json")
    (record,) = json.loads(out)["results"]
    _, lead_out, _ = run_cli(capsys, "run", "--ranker", "lead", "--split", "xsum_pegasus", "--json", "--no-progress")
    lead = json.loads(lead_out)["results"][0]
    assert record["split"] == "xsum_pegasus"
    assert record["ndcg"] == pytest.approx(lead["ndcg"], abs=1e-12) and record["map"] == pytest.approx(lead["map"], abs=1e-12)


def test_leaderboard_is_byte_identical_and_has_all_formats(capsys, scores_dir, tmp_path):
    run_cli(capsys, "run", "--ranker", "lead,random,oracle", "--split", "all", "--no-progress")
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    assert run_cli(capsys, "leaderboard", "-o", str(first))[0] == 0
    assert run_cli(capsys, "leaderboard", "-o", str(second))[0] == 0
    text = first.read_text()
    assert text == second.read_text()
    assert "| lead | **0.8521** |" in text
    assert "## Reference rows" in text and "| oracle | 1.0000" in text
    assert "Numbers reported in the paper" in text and "0.8476 / 0.6740" in text
    _, latex, _ = run_cli(capsys, "leaderboard", "--format", "latex")
    assert r"\toprule" in latex and r"\textbf{" in latex
    _, csv_text, _ = run_cli(capsys, "leaderboard", "--format", "csv")
    assert csv_text.splitlines()[0].startswith("ranker,reference,XSum-PEGASUS NDCG")
    _, js, _ = run_cli(capsys, "leaderboard", "--format", "json")
    assert len(json.loads(js)["results"]) == 12


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["run", "--ranker", "nosuch", "--split", "xsum_pegasus"], "unknown ranker 'nosuch'; registered:"),
        (["run", "--ranker", "lead", "--split", "xsum"], "unknown split 'xsum'"),
        (["run", "--ranker", "random", "-p", "random.sede=1", "--split", "xsum_pegasus"], "rejected parameters"),
        (["run", "--ranker", "lead", "--measures", "MRR"], "unknown measure 'MRR'"),
        (["evaluate", "/nonexistent.json", "--field", "x"], "/nonexistent.json: no such file"),
    ],
)
def test_user_errors_are_one_line_with_exit_2(capsys, scores_dir, argv, fragment):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_debug_shows_the_exception(scores_dir):
    from benchmark.errors import UnknownNameError

    with pytest.raises(UnknownNameError):
        main(["--debug", "run", "--ranker", "nosuch"])
