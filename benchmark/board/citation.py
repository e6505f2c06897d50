"""What to cite for a board (``sourcesum cite``): the dataset's paper(s), its data at the pinned
commit the board's header names (:func:`data_bibtex`), this harness at the commit it runs from,
for every row of a plugin ranker what identifies its numbers, and for every declared row the key
of each entry it uses on the board, its held-out test and its task boards
(:func:`declared_entries`).

The harness's revision is read from git: the commit of the checkout the package's own files are
tracked in (``git rev-parse HEAD``), marked ``-dirty`` when ``git status`` shows changes to
tracked files. Outside a git checkout (an installed wheel) no commit is known: the version alone
identifies the harness. The repository has no public URL, so no entry names one.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sourcesum import __version__

if TYPE_CHECKING:
    from sourcesum.board.model import Leaderboard
    from sourcesum.data import Dataset

PACKAGE_ROOT = Path(__file__).resolve().parent
"""The folder of the package's own modules (``benchmark/`` in a checkout)."""

SOFTWARE_TITLE = "SourceSum Bench"
SOFTWARE_AUTHOR = "SourceSum Bench contributors"
SOFTWARE_KEY = "sourcesum_bench"


@dataclass(frozen=True)
class Revision:
    """The harness's code: its version and, in a git checkout, the commit and whether tracked
    files differ from it."""

    version: str
    commit: str | None = None
    dirty: bool = False
    date: str | None = None
    """The commit's date (``YYYY-MM-DD``), None without a commit."""

    @property
    def described(self) -> str | None:
        """``<commit>`` or ``<commit>-dirty``; None outside a git checkout."""
        if self.commit is None:
            return None
        return self.commit + ("-dirty" if self.dirty else "")


def _git(root: Path, *args: str) -> str | None:
    """stdout of ``git -C root ARGS`` (stripped), None when git fails or is not installed."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def harness_revision(root: Path = PACKAGE_ROOT) -> Revision:
    """The revision of the package in ``root``: a commit only when ``root/__init__.py`` is a
    file tracked by the git checkout ``root`` lies in (a package installed inside some other
    repository's folder is not that repository's code)."""
    if _git(root, "ls-files", "--error-unmatch", "--", "__init__.py") is None:
        return Revision(__version__)
    commit = _git(root, "rev-parse", "HEAD")
    if not commit:
        return Revision(__version__)
    changes = _git(root, "status", "--porcelain", "--untracked-files=no")
    date = _git(root, "log", "-1", "--format=%cs", commit)
    return Revision(__version__, commit, dirty=bool(changes), date=date or None)


def software_bibtex(revision: Revision) -> str:
    """The harness as a BibTeX ``@software`` entry (the commit in ``note`` when known)."""
    fields = [
        ("title", f"{{{SOFTWARE_TITLE}}}"),
        ("author", f"{{{{{SOFTWARE_AUTHOR}}}}}"),
        ("version", f"{{{revision.version}}}"),
    ]
    if revision.date:
        fields.append(("date", f"{{{revision.date}}}"))
    if revision.described:
        note = f"git commit {revision.described}"
        if revision.dirty:
            note += " (the checkout had uncommitted changes to tracked files)"
        fields.append(("note", f"{{{note}}}"))
    width = max(len(name) for name, _ in fields)
    body = ",\n".join(f"  {name.ljust(width)} = {value}" for name, value in fields)
    return f"@software{{{SOFTWARE_KEY},\n{body}\n}}"


@dataclass(frozen=True)
class PluginRow:
    """A board row whose ranker comes from a package other than the harness: what a paper
    must report for its numbers to be traced to code."""

    label: str
    ranker: str
    ranker_version: str
    package: str
    package_version: str
    """As recorded in the row's entries (``libraries``); several, comma-separated, when the
    entries were computed with different releases; ``not recorded`` for entries without it."""
    entries: dict[str, str] = field(default_factory=dict)
    """Split -> entry key."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "row": self.label,
            "ranker": self.ranker,
            "ranker_version": self.ranker_version,
            "package": self.package,
            "package_version": self.package_version,
            "entries": dict(self.entries),
        }


def _boards(board: Leaderboard) -> list[tuple[str, Leaderboard]]:
    """``board``, its held-out test and its task boards, each with what it is in words."""
    parts = [(f"{board.dataset.name} board", board)]
    if board.heldout is not None:
        parts.append((f"{board.dataset.name} held-out test", board.heldout))
    parts += [(f"task {task.dataset.name}", task) for task in board.tasks]
    return parts


@dataclass(frozen=True)
class RowEntries:
    """The entries one declared row uses on one board (the board, its held-out test or a task):
    what identifies its numbers."""

    board: str
    """``sourcesum board``, ``sourcesum held-out test``, ``task wice``... (:func:`declared_entries`)."""
    row: str
    """The row's display name."""
    label: str
    ranker: str
    published: bool
    entries: dict[str, str] = field(default_factory=dict)
    """Split -> entry key."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "board": self.board,
            "row": self.row,
            "label": self.label,
            "ranker": self.ranker,
            "published": self.published,
            "entries": dict(self.entries),
        }


def declared_entries(board: Leaderboard) -> list[RowEntries]:
    """Every row of ``board``, its held-out test and its task boards with the key of each entry
    it uses, split by split (reference rows without scores have none)."""
    return [
        RowEntries(
            board=part,
            row=row.name or row.label,
            label=row.label,
            ranker=row.ranker,
            published=row.published,
            entries={split: entry.key for split, entry in row.entries.items()},
        )
        for part, each in _boards(board)
        for row in each.rows
        if row.entries
    ]


def data_bibtex(dataset: Dataset) -> str:
    """The data a board of ``dataset`` is computed on, as a BibTeX ``@misc`` entry: its first
    source (the one the board's header names) at its pinned commit."""
    source = next(iter(dataset.sources().values()))
    title = source.title or f"{dataset.title} data"
    note = f"{source.repository} at commit {source.commit}, every file pinned by sha256"
    if source.unpinned_files:
        note = f"{source.repository} at {source.commit}; {len(source.unpinned_files)} file(s) unpinned"
    fields = [("title", f"{{{{{title}}}}}"), ("note", f"{{{note}}}")]
    width = max(len(name) for name, _ in fields)
    body = ",\n".join(f"  {name.ljust(width)} = {value}" for name, value in fields)
    return f"@misc{{{dataset.name}_data,\n{body}\n}}"


def plugin_rows(board: Leaderboard) -> list[PluginRow]:
    """The rows of ``board`` (a :class:`~sourcesum.board.Leaderboard`, held-out and task rows
    included) whose ranker class is defined by an installed distribution other than the
    harness."""
    from sourcesum.rankers.base import RANKERS, distribution_of

    boards = [each for _, each in _boards(board)]
    found: dict[tuple[str, str], tuple[str, list[Any]]] = {}  # (label, ranker) -> package, entries
    for each in boards:
        for row in each.rows:
            if row.published or row.ranker not in RANKERS or not row.entries:
                continue
            package = distribution_of(RANKERS.get(row.ranker))
            if package is not None:
                found.setdefault((row.label, row.ranker), (package, []))[1].extend(row.entries.values())
    out: list[PluginRow] = []
    for (label, ranker), (package, entries) in found.items():
        recorded = sorted({e.libraries[package] for e in entries if package in e.libraries})
        if not recorded:  # entries of store format 1, which recorded no libraries
            recorded = ["not recorded"]
        out.append(
            PluginRow(
                label=label,
                ranker=ranker,
                ranker_version=", ".join(sorted({e.version for e in entries})),
                package=package,
                package_version=", ".join(recorded),
                entries={e.split: e.key for e in entries},
            )
        )
    return out
