"""Verify score entries by recomputing them: what a checksum cannot catch (a forged entry with
its checksums recomputed), a recomputation does.

For each entry, :func:`verify_entry` checks the file (format, key, checksums, path), that its
ranker is installed and its parameters are canonical, then recomputes a sample of its pairs with
the installed ranker into a temporary store and compares the scores: bit for bit, or within the
ranker's ``reproduction_tolerance`` (rankers whose floating-point results depend on the machine
or on batch composition declare one). The entry under test is never read while recomputing (its
key is hidden from the stores the runner sees); a composite's bases and a trained ranker's
training data are read or computed as in any run.

Sample: every pair for rankers that declare no ``verify_sample``; the LM rankers declare a small
one (a forward pass per pair is costly). The pairs are the first ``N`` by a hash of (entry key,
pair id), so a sample is reproducible and differs between entries.
"""

from __future__ import annotations

import tempfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sourcesum.data import load_split
from sourcesum.errors import ScoreFileError, SourceSumError
from sourcesum.rankers.base import RANKERS
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_splits
from sourcesum.runner.selection import Selection
from sourcesum.store.entry import ScoreEntry, agreed_libraries, fit_problem
from sourcesum.store.stores import ScoreStore, StoreStack, read_entry
from sourcesum.util.hashing import sha256_bytes


@dataclass
class Verification:
    """The outcome for one entry."""

    path: Path
    label: str
    split: str
    checked: int
    total: int
    identical: int
    max_difference: float
    tolerance: float
    problems: list[str] = field(default_factory=list)
    library_differences: list[str] = field(default_factory=list)
    """Libraries whose recorded version differs from the installed one: ``name (recorded X,
    installed Y)`` (a note; a problem under ``strict``)."""

    @property
    def ok(self) -> bool:
        return not self.problems and self.max_difference <= self.tolerance

    def summary(self) -> str:
        verdict = (
            "reproduced bit for bit"
            if self.ok and self.identical == self.checked
            else f"reproduced within {self.tolerance:g} (largest difference {self.max_difference:.3g})"
            if self.ok
            else "NOT reproduced: "
            + ("; ".join(self.problems) or f"largest difference {self.max_difference:.3g}")
        )
        line = f"{self.path}: {self.label} on {self.split}, {self.checked} of {self.total} pairs: {verdict}"
        if self.library_differences and not self.problems:
            line += f"\n  note: recorded library versions differ from the installed ones: {'; '.join(self.library_differences)}"
        return line


class _Hiding(ScoreStore):
    """A read-only view of a store without one key (the entry under test)."""

    def __init__(self, store: ScoreStore, hidden: tuple[str, str, str]):
        super().__init__(store.root, writable=False)
        self.hidden = hidden

    def load(self, ranker: str, split: str, key: str) -> ScoreEntry | None:
        return None if (ranker, split, key) == self.hidden else super().load(ranker, split, key)

    def entries(
        self, splits: Collection[str] | None = None
    ) -> Iterator[tuple[Path, ScoreEntry | ScoreFileError]]:
        for path, item in super().entries(splits):
            if not (isinstance(item, ScoreEntry) and (item.ranker, item.split, item.key) == self.hidden):
                yield path, item


def sample_ids(entry: ScoreEntry, count: int | None) -> list[str]:
    """The pairs to recompute: all of them (``count`` None), else the first ``count`` by the
    sha256 of (entry key, pair id)."""
    ids = sorted(entry.scores)
    if count is None or count >= len(ids):
        return ids
    return sorted(ids, key=lambda pid: sha256_bytes(f"{entry.key}|{pid}".encode()))[:count]


def library_differences(recorded: dict[str, str], installed: dict[str, str]) -> list[str]:
    """``name (recorded X, installed Y)`` for every library the entry records (the harness's
    own version excepted) whose installed version differs."""
    mine = agreed_libraries(installed)
    return [
        f"{name} (recorded {version}, installed {mine.get(name, 'not installed')})"
        for name, version in sorted(agreed_libraries(recorded).items())
        if mine.get(name) != version
    ]


def verify_entry(
    path: Path, layers: list[ScoreStore], sample: int | None = None, strict: bool = False
) -> Verification:
    """Recompute (a sample of) the entry at ``path`` (module docstring); ``layers`` are the
    stores bases may be read from (the entry itself is hidden in every one). The entry's
    recorded library versions are compared with the installed ones: a difference is noted, and
    with ``strict`` it fails the verification."""
    entry = read_entry(path)
    if entry.ranker not in RANKERS:
        raise ScoreFileError(f"{path}: ranker {entry.ranker} is not installed here, so it cannot be verified")
    cls = RANKERS.get(entry.ranker)
    config = Configuration.of(entry.ranker, entry.params)
    split = load_split(entry.split)
    unfit = fit_problem(entry, split)
    if unfit:
        raise ScoreFileError(f"{path}: {unfit}, so it cannot be verified; delete it")
    problems = []
    differ = library_differences(entry.libraries, cls.library_versions())
    if strict and differ:
        problems.append(f"recorded library versions differ from the installed ones: {'; '.join(differ)}")
    if config.params != entry.params:
        problems.append(f"parameters {entry.params} are not canonical ({config.params})")
    if config.entry_key(split.name, split.sha256) != entry.key or split.sha256 != entry.data_sha256:
        problems.append("its key is not the one the installed ranker and data give (stale)")
    count = sample if sample is not None else getattr(cls, "verify_sample", None)
    ids = sample_ids(entry, count)
    tolerance = float(getattr(cls, "reproduction_tolerance", 0.0))
    if problems:
        return Verification(
            path,
            config.label,
            entry.split,
            0,
            len(entry.scores),
            0,
            float("inf"),
            tolerance,
            problems,
            differ,
        )
    hidden = (entry.ranker, entry.split, entry.key)
    with tempfile.TemporaryDirectory(prefix="sourcesum-verify-") as tmp:
        stack = StoreStack([ScoreStore(Path(tmp)), *(_Hiding(layer, hidden) for layer in layers)])
        [run] = run_splits(
            config.create(), [split], stack, Selection(pair_ids=frozenset(ids)), progress=False
        )
        recomputed = {pid: run.entry.scores[pid] for pid in ids}
        refitted = dict(run.entry.fits)
    identical = sum(recomputed[pid] == entry.scores[pid] for pid in ids)
    largest = max(
        (abs(a - b) for pid in ids for a, b in zip(recomputed[pid], entry.scores[pid], strict=True)),
        default=0.0,
    )
    problems = fit_problems(entry.fits, refitted, tolerance)
    return Verification(
        path,
        config.label,
        entry.split,
        len(ids),
        len(entry.scores),
        identical,
        largest,
        tolerance,
        problems,
        differ,
    )


def fit_problems(
    stored: dict[str, dict[str, Any]], refitted: dict[str, dict[str, Any]], tolerance: float
) -> list[str]:
    """How the fits an entry stores differ from those its recomputation fitted: a fit it lacks
    (unless it stores none: written before fits were stored), or one whose numbers differ by more
    than ``tolerance`` (or whose other fields differ at all)."""
    problems = []
    for key, fit in refitted.items():
        if key not in stored:
            if stored:
                problems.append(f"it stores no fit on {key}, which scored the pairs recomputed")
            continue
        gap = json_difference(stored[key], fit)
        if gap > tolerance:
            what = "differs in its fields" if gap == float("inf") else f"differs by {gap:.3g}"
            problems.append(f"its stored fit on {key} {what} from the refit (tolerance {tolerance:g})")
    return problems


def json_difference(a: object, b: object) -> float:
    """The largest difference between the numbers of two JSON values of one shape; infinite
    where the shapes or any other value differ."""
    numbers = (int, float)
    if (
        isinstance(a, numbers)
        and isinstance(b, numbers)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return abs(float(a) - float(b))
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return float("inf")
        return max((json_difference(x, y) for x, y in zip(a, b, strict=True)), default=0.0)
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return float("inf")
        return max((json_difference(a[k], b[k]) for k in a), default=0.0)
    return 0.0 if a == b else float("inf")


def entry_paths(arguments: list[str]) -> list[Path]:
    """Entry files named directly, every entry of a named ranker folder (``STORE/RANKER``), or
    of a whole store folder."""
    out: list[Path] = []
    for argument in arguments:
        path = Path(argument).expanduser()
        if path.is_dir():
            out += sorted(path.glob("*.json")) or sorted(path.glob("*/*.json"))
        elif path.is_file():
            out.append(path)
        else:
            raise SourceSumError(f"verify: {argument}: no such entry file or store folder")
    if not out:
        raise SourceSumError(f"verify: {' '.join(arguments)}: no score-store entries there")
    return out
