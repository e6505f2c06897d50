"""``sourcesum evaluate``: a TREC run read without ``--format trec`` is refused, saying so."""

from __future__ import annotations

import json

from sourcesum.data import load_split
from support.cli import run_cli


def test_evaluate_a_trec_run_without_format_trec_says_so(capsys, tmp_path):
    split = load_split("synth_alpha_sys")
    run_file = tmp_path / "lead.run"
    run_file.write_text(
        "".join(f"{p.id} Q0 s{i} {i + 1} {-i} lead\n" for p in split for i in range(p.n_sentences))
    )
    for extra in ([], ["--field", "score"]):
        code, _, err = run_cli(capsys, "evaluate", str(run_file), *extra)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert (
            err.startswith(f"error: evaluate {run_file}: this is a TREC run file")
            and "pass --format trec" in err
        )
    code, out, _ = run_cli(capsys, "evaluate", str(run_file), "--format", "trec", "--json")
    assert code == 0 and json.loads(out)["results"][0]["split"] == split.name
    # JSON that is not a TREC run keeps its own message
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    code, _, err = run_cli(capsys, "evaluate", str(broken), "--field", "s")
    assert code == 2 and "not valid JSON" in err and "--format trec" not in err


def test_evaluate_per_pair_prints_each_pairs_values_and_names_a_runs_column_run(capsys, tmp_path):
    """``--per-pair``: the values of the per-pair table (JSON ``per_pair``, null where undefined;
    a table after the means); a TREC run's column is headed ``run``, a SourceSum file's
    ``field``."""
    from sourcesum.evaluation.evaluate import evaluate_split
    from sourcesum.evaluation.measures import parse_measures

    split = load_split("synth_alpha_sys_all")  # one pair without a relevant sentence: AP undefined
    scores = {p.id: [float((i * 7) % 3) for i in range(p.n_sentences)] for p in split}
    run_file = tmp_path / "mine.run"
    run_file.write_text(
        "".join(f"{pid} Q0 s{i} {i + 1} {s} mine\n" for pid, row in scores.items() for i, s in enumerate(row))
    )
    expected = evaluate_split(split, scores, "mine", parse_measures("nDCG,AP")).per_pair
    argv = ("evaluate", str(run_file), "--format", "trec", "--split", split.name, "--per-pair")
    code, out, _ = run_cli(capsys, *argv, "--json")
    (record,) = json.loads(out)["results"]
    assert code == 0 and record["run"] == "mine" and "field" not in record
    assert [r["pair_id"] for r in record["per_pair"]] == [p.id for p in split]
    for r, (_, row) in zip(record["per_pair"], expected.iterrows(), strict=True):
        for key, name in (("ndcg", "nDCG"), ("map", "AP")):
            assert r[key] == (None if row[name] != row[name] else row[name])
    assert None in [r["map"] for r in record["per_pair"]]
    code, out, _ = run_cli(capsys, *argv)
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["run", "split", "pairs", "NDCG", "MAP"]
    table = lines[lines.index("") + 1 :]
    assert table[0].split() == ["pair", "NDCG", "MAP"] and len(table) == 2 + len(split)
    for line, (pair_id, row) in zip(table[2:], expected.iterrows(), strict=True):
        cells = line.split()
        assert cells[0] == pair_id and cells[1] == f"{row['nDCG']:.4f}"
        assert cells[2] == ("-" if row["AP"] != row["AP"] else f"{row['AP']:.4f}")
    code, out, _ = run_cli(capsys, "evaluate", str(run_file), "--format", "trec", "--split", split.name)
    assert "pair_id" not in out and lines[0] in out.splitlines()  # without --per-pair: the means alone
