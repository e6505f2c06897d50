"""TREC export (sourcesum.outputs.trec): export names are reversible, never collide and stay within
file-system limits; every file is listed, foreign files are never overwritten, and a re-export
removes the run files of an earlier one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sourcesum.data import load_split
from sourcesum.outputs.trec import export_name, label_of
from sourcesum.runner.run import run_ranker
from sourcesum.store.stores import ScoreStore
from support.cli import run_cli
from support.rankers import Piped
from support.store import fill


@pytest.mark.parametrize(
    "label", ["random(seed=1)", "random(seed=-1)", "m(model=org/name x)", "a%2F", "x [abc123]"]
)
def test_export_names_are_reversible(label):
    assert label_of(export_name(label)) == label and "/" not in export_name(label)


def test_export_names_never_collide_and_every_file_is_listed(capsys, scores_dir, tmp_path):
    for seed in ("1", "-1"):
        run_cli(
            capsys,
            "run",
            "--ranker",
            "random",
            "-p",
            f"random.seed={seed}",
            "--split",
            "synth_alpha_sys",
            "--no-progress",
        )
    folder = tmp_path / "trec"
    code, out, err = run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(folder))
    assert code == 0, err
    listed = [Path(line.strip()) for line in out.splitlines()[1:]]
    assert sorted(listed) == sorted(folder.iterdir())
    runs = sorted(p.name for p in folder.glob("*.run"))
    assert runs == ["random(seed=-1).synth_alpha_sys.run", "random(seed=1).synth_alpha_sys.run"]
    assert len(list(folder.glob("*.qrels"))) == 8  # graded and binary for each of the 4 board splits
    assert run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(folder))[0] == 0  # ours: rewritten


def test_export_never_overwrites_foreign_files(capsys, scores_dir, tmp_path):
    run_cli(capsys, "run", "--ranker", "lead", "--split", "synth_alpha_sys", "--no-progress")
    folder = tmp_path / "trec"
    folder.mkdir()
    (folder / "synth_alpha_sys.graded.qrels").write_text("my own qrels\n")
    code, _, err = run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(folder))
    assert code == 2 and "would overwrite 1 file(s) that it did not write" in err
    assert (folder / "synth_alpha_sys.graded.qrels").read_text() == "my own qrels\n"


SPLIT = "synth_alpha_sys"


def test_export_names_stay_within_file_system_limits(tmp_path, scores_dir, capsys):
    long_tag = "t" * 300
    run_ranker(Piped(tag=long_tag), load_split(SPLIT), ScoreStore(scores_dir), progress=False)
    code, _, err = run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(tmp_path / "trec"))
    assert code == 0, err
    index = json.loads((tmp_path / "trec" / "sourcesum-export.json").read_text())["files"]
    [name] = [n for n, info in index.items() if info.get("ranker", "").startswith("piped")]
    assert (
        len(name.encode()) < 255
        and (tmp_path / "trec" / name).is_file()
        and long_tag in index[name]["ranker"]
    )


def test_a_reexport_removes_the_run_files_of_an_earlier_export(tmp_path, capsys, scores_dir):
    fill(scores_dir, ("lead", "bm25"))
    out = tmp_path / "trec"
    assert run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(out))[0] == 0
    assert (out / "bm25.synth_alpha_sys.run").is_file()
    for path in (scores_dir / "bm25").glob("*.json"):
        path.unlink()
    (out / "notes.txt").write_text("mine")  # not the export's: kept
    assert run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(out))[0] == 0
    assert not list(out.glob("bm25.*")) and (out / "lead.synth_alpha_sys.run").is_file()
    assert (out / "notes.txt").read_text() == "mine"
