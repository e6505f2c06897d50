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
