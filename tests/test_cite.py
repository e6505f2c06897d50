"""What to cite: ``sourcesum cite`` on a synthetic board (the dataset's BibTeX, the harness's
``@software`` entry with its git commit, the board's inputs digest, plugin rows), an incomplete
board and bad input; the harness's revision in and outside a git checkout; and CITATION.cff
(valid CFF 1.2.0 by cffconvert, the same version, title and author as the package says)."""

from __future__ import annotations

import json
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from helpers import declaration
from sourcesum import __version__
from sourcesum.board import collect_declared, read_declaration
from sourcesum.board.citation import (
    SOFTWARE_AUTHOR,
    SOFTWARE_TITLE,
    Revision,
    harness_revision,
    software_bibtex,
)
from sourcesum.cli import main
from sourcesum.data import dataset
from sourcesum.paths import PROJECT_ROOT
from sourcesum.store.stores import ScoreStore

BOARD = dataset("synthnews").board_splits()


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- CITATION.cff -------------------------------------------------------------------------------
def test_citation_cff_is_valid_and_names_this_release():
    from cffconvert import Citation  # the `test` extra installs it

    citation = Citation((PROJECT_ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    citation.validate()  # raises on anything the CFF 1.2.0 schema rejects
    cff = citation.cffobj
    assert cff["cff-version"] == "1.2.0"
    assert str(cff["version"]) == __version__
    assert cff["title"] == SOFTWARE_TITLE and cff["authors"] == [{"name": SOFTWARE_AUTHOR}]
    # the dataset paper is cited as SourceSum's own BibTeX cites it
    paper = cff["references"][0]
    assert paper["type"] == "conference-paper"
    assert f"title     = {{{paper['title']}}}" in dataset("sourcesum").citation
    assert [a["family-names"] for a in paper["authors"]] == ["Suhara", "Alikaniotis"]
    assert str(paper["year"]) in dataset("sourcesum").citation
    # the transfer tasks' papers, as their datasets' BibTeX cite them
    for ref in cff["references"][2:4]:
        assert any(
            str(ref["year"]) in dataset(d).citation
            and ref["authors"][0]["family-names"] in dataset(d).citation
            for d in ("wice", "qmsum")
        )
    # no URL but the papers' and the data's (each as its dataset's BibTeX gives it)
    urls = [v for ref in cff["references"] for k, v in ref.items() if "url" in k or k == "repository-code"]
    assert urls == [
        "https://arxiv.org/abs/2402.04677",
        "https://github.com/suhara/sourcesum",
        "https://arxiv.org/abs/2303.01432",
        "https://github.com/etri/QMSum_SummaryEvidence",
    ]
    assert all(
        url in "".join(dataset(d).citation for d in ("sourcesum", "wice", "qmsum"))
        or "suhara/sourcesum" in url
        for url in urls
    )
    assert not {"url", "repository-code", "repository"} & set(cff)


# -- the harness's revision ---------------------------------------------------------------------
def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_revision_of_a_git_checkout_clean_dirty_and_outside(tmp_path):
    package = tmp_path / "repo" / "benchmark"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "x"\n')
    _git(tmp_path / "repo", "init", "-q")
    _git(tmp_path / "repo", "add", "benchmark/__init__.py")
    _git(tmp_path / "repo", "commit", "-q", "-m", "one")
    commit = _git(tmp_path / "repo", "rev-parse", "HEAD")

    clean = harness_revision(package)
    assert clean == Revision(__version__, commit, dirty=False, date=clean.date)
    assert clean.date == _git(tmp_path / "repo", "log", "-1", "--format=%cs")
    (tmp_path / "repo" / "untracked.txt").write_text("not tracked: still clean\n")
    assert harness_revision(package).dirty is False
    (package / "__init__.py").write_text('__version__ = "y"\n')
    dirty = harness_revision(package)
    assert dirty.commit == commit and dirty.dirty and dirty.described == f"{commit}-dirty"

    # a package folder that git does not track (e.g. installed inside someone's repository)
    other = tmp_path / "repo" / "site-packages" / "sourcesum"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    assert harness_revision(other) == Revision(__version__)
    outside = tmp_path / "wheel" / "sourcesum"
    outside.mkdir(parents=True)
    (outside / "__init__.py").write_text("")
    assert harness_revision(outside) == Revision(__version__)


def test_software_entry_with_and_without_a_commit():
    sha = "0123456789abcdef0123456789abcdef01234567"
    entry = software_bibtex(Revision("9.9.9", sha, dirty=True, date="2026-01-02"))
    assert entry.splitlines() == [
        "@software{sourcesum_bench,",
        "  title   = {SourceSum Bench},",
        "  author  = {{SourceSum Bench contributors}},",
        "  version = {9.9.9},",
        "  date    = {2026-01-02},",
        f"  note    = {{git commit {sha}-dirty (the checkout had uncommitted changes to tracked files)}}",
        "}",
    ]
    assert f"note    = {{git commit {sha}}}" in software_bibtex(Revision("9.9.9", sha, date="2026-01-02"))
    bare = software_bibtex(Revision("9.9.9"))
    assert "note" not in bare and "date" not in bare and "url" not in bare and "version = {9.9.9}" in bare


# -- sourcesum cite -----------------------------------------------------------------------------
def _board(tmp_path: Path, rows) -> Path:
    path = tmp_path / "board.toml"
    path.write_text(declaration(rows=rows), encoding="utf-8")
    return path


def test_cite_a_complete_board_with_a_plugin_row(capsys, scores_dir, tmp_path):
    pytest.importorskip("sourcesum_overlap")  # the example plugin (scripts/test.sh installs it)
    path = _board(tmp_path, ("lead", "random", "overlap"))
    assert (
        main(["run", "--ranker", "lead,random,overlap,oracle", "--split", "synthnews", "--no-progress"]) == 0
    )
    capsys.readouterr()
    cite = ("cite", "--declaration", str(path), "--scores-dir", str(scores_dir))
    code, out, err = run_cli(capsys, *cite)
    assert code == 0 and err == ""

    board = collect_declared(read_declaration(path), ScoreStore(scores_dir, writable=False))
    assert len(board.inputs_sha256) == 64
    revision = harness_revision()
    assert out.startswith("% SynthNews, the dataset of this board: cite its paper\n")
    assert dataset("synthnews").citation in out
    assert software_bibtex(revision) in out
    assert f"board: {path} (entries from {scores_dir})" in out
    assert f"inputs sha256: {board.inputs_sha256} (" in out

    # the JSON carries the same, the digest equal to the board's own JSON
    code, js, _ = run_cli(capsys, *cite, "--json")
    payload = json.loads(js)
    _, board_js, _ = run_cli(
        capsys, "leaderboard", "--declaration", str(path), "--scores-dir", str(scores_dir), "--format", "json"
    )
    assert payload["schema"] == "sourcesum-cite/1"
    assert payload["board"]["inputs_sha256"] == board.inputs_sha256 == json.loads(board_js)["inputs_sha256"]
    assert payload["board"]["incomplete_entries"] == 0
    assert payload["software"]["version"] == __version__ and payload["software"]["commit"] == revision.commit
    if revision.commit is not None:  # tests run from a checkout: its HEAD
        head = subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert revision.commit == head and f"git commit {head}" in out

    # the plugin row: the example package, the ranker's version and each split's entry key
    keys = {p.name.split(".")[0]: p.name.split(".")[1] for p in (scores_dir / "overlap").glob("*.json")}
    (row,) = payload["plugin_rows"]
    assert row == {
        "row": "overlap",
        "ranker": "overlap",
        "ranker_version": "1",
        "package": "sourcesum-overlap",
        "package_version": version("sourcesum-overlap"),
        "entries": {split: keys[split] for split in BOARD},
    }
    assert (
        f"  overlap: package sourcesum-overlap {version('sourcesum-overlap')}, ranker overlap version 1"
        in out
    )
    assert all(f"    {split}: entry {keys[split]}" in out for split in BOARD)


def test_cite_a_board_without_plugin_rows_says_what_to_report(capsys, scores_dir, tmp_path):
    path = _board(tmp_path, ("lead",))
    assert main(["run", "--ranker", "lead,oracle", "--split", "synthnews", "--no-progress"]) == 0
    capsys.readouterr()
    code, out, _ = run_cli(capsys, "cite", "--declaration", str(path), "--scores-dir", str(scores_dir))
    assert code == 0
    assert (
        "plugin rows: none; for a row of your own ranker package, report the package and its version" in out
    )


def test_cite_an_incomplete_board_still_cites_and_says_why_no_digest(capsys, scores_dir, tmp_path):
    path = _board(tmp_path, ("lead", "random", "bm25"))
    assert main(["run", "--ranker", "lead", "--split", "synthnews", "--no-progress"]) == 0
    assert (
        main(["run", "--ranker", "bm25", "--split", "synth_beta_ref", "--limit", "1", "--no-progress"]) == 0
    )
    capsys.readouterr()
    cite = ("cite", "--declaration", str(path), "--scores-dir", str(scores_dir))
    code, out, err = run_cli(capsys, *cite)
    # random (4 splits), bm25 (3 missing, 1 partial) and the oracle reference (4) are not complete
    assert code == 0
    assert err.strip().splitlines() == [
        "note: the board's inputs are incomplete (12 declared entries missing, partial or invalid; "
        f"`sourcesum leaderboard --declaration {path} --scores-dir {scores_dir}` names them); no inputs digest"
    ]
    assert dataset("synthnews").citation in out and "@software{sourcesum_bench," in out
    assert "inputs sha256" not in out and "plugin rows: not known (the board is incomplete)" in out
    code, js, _ = run_cli(capsys, *cite, "--json")
    board = json.loads(js)["board"]
    assert code == 0 and board["inputs_sha256"] is None and board["incomplete_entries"] == 12


def test_cite_names_the_papers_of_the_transfer_tasks(capsys, scores_dir, tmp_path):
    path = _board(tmp_path, ("lead",))
    path.write_text(
        path.read_text() + '\n[[tasks]]\ndataset = "synthclaims"\n[[tasks.rows]]\nranker = "lead"\n'
    )
    code, out, _ = run_cli(capsys, "cite", "--declaration", str(path), "--scores-dir", str(scores_dir))
    assert code == 0
    claims = dataset("synthclaims")
    assert f"% {claims.title}, a transfer task on this board: cite its paper\n{claims.citation}" in out
    assert out.index(dataset("synthnews").citation) < out.index(claims.citation) < out.index("@software{")
    code, js, _ = run_cli(
        capsys, "cite", "--declaration", str(path), "--scores-dir", str(scores_dir), "--json"
    )
    assert json.loads(js)["tasks"] == [
        {"name": "synthclaims", "title": claims.title, "bibtex": claims.citation}
    ]


def test_cite_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    path = _board(tmp_path, ("lead",))
    for argv, fragment in (
        (
            ["--declaration", str(tmp_path / "nope.toml")],
            f"{tmp_path / 'nope.toml'}: cannot read the leaderboard",
        ),
        (
            ["--declaration", str(path), "--scores-dir", str(tmp_path / "nope")],
            f"{tmp_path / 'nope'}: no such",
        ),
    ):
        code, out, err = run_cli(capsys, "cite", *argv)
        assert code == 2 and out == "" and err.startswith("error: ") and fragment in err
        assert len(err.strip().splitlines()) == 1
