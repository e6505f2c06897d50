"""``sourcesum export``: it needs ``-o`` (and every ``sourcesum export`` the README shows parses);
``--format hf`` writes a folder ``datasets.load_dataset`` reads; bad input is one error line."""

from __future__ import annotations

import shlex

from sourcesum.cli import build_parser
from sourcesum.data import load_split
from sourcesum.paths import PROJECT_ROOT
from support.cli import one_error_line, run_cli


def test_export_needs_an_output_folder(capsys, scores_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "export", "--dataset", "synthnews")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: sourcesum export: the following arguments are required: --output/-o "
        "(see sourcesum export --help)"
    )
    assert list(tmp_path.iterdir()) == [scores_dir]  # no ./trec
    # every `sourcesum export` the README shows in a code block still parses
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    shown = [
        line.split("#")[0].strip()
        for line in readme.splitlines()
        if line.startswith("sourcesum export ") or line.startswith("$ sourcesum export ")
    ]
    assert "sourcesum export -o /tmp/sourcesum-trec" in shown
    for line in shown:
        args = build_parser().parse_args(shlex.split(line.removeprefix("$ "))[1:])
        assert args.output


def test_export_hf_writes_a_folder_load_dataset_reads(capsys, tmp_path):
    folder = tmp_path / "hub"
    code, out, err = run_cli(
        capsys,
        "export",
        "--format",
        "hf",
        "--dataset",
        "synthnews,synthclaims",
        "--no-progress",
        "-o",
        str(folder),
    )
    assert code == 0, err
    assert out.startswith(f"wrote 9 files to {folder} (")  # 7 Parquet files, the card and the index
    assert f"  {folder / 'synthclaims' / 'synth_claims.parquet'}\n" in out
    import datasets  # here, not at collection: it costs half a second to import

    loaded = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "cache"))
    assert loaded["synth_claims"].num_rows == len(load_split("synth_claims"))


def test_export_hf_bad_input_is_one_error_line(capsys, tmp_path):
    folder = str(tmp_path / "hub")
    line = one_error_line(capsys, "export", "--format", "hf", "--dataset", "nosuch", "-o", folder)
    assert "nosuch" in line
    line = one_error_line(capsys, "export", "--format", "hf", "--scores-dir", folder, "-o", folder)
    assert (
        line == "error: --scores-dir: --format hf exports the data, not scores (give it with --format trec)"
    )
    line = one_error_line(capsys, "export", "--dataset", "synthnews,synthclaims", "-o", folder)
    assert line == "error: --dataset synthnews,synthclaims: --format trec exports one dataset's board"
    assert not (tmp_path / "hub").exists()
