"""What to cite (sourcesum.board.citation): the harness's revision in and outside a git checkout,
its ``@software`` entry with and without a commit, and CITATION.cff (valid CFF 1.2.0 by
cffconvert, the same version, title and author as the package says)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sourcesum import __version__
from sourcesum.board.citation import (
    SOFTWARE_AUTHOR,
    SOFTWARE_TITLE,
    Revision,
    harness_revision,
    software_bibtex,
)
from sourcesum.data import dataset
from sourcesum.paths import PROJECT_ROOT

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
