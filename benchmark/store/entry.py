"""A score-store entry: the per-sentence scores of one ranker configuration on one split, and the
one rule that merges entries of a key.

An entry is keyed by (ranker name, parameters, ranker version, data sha256): change any of them
and the key changes, so a stale entry is never reused. It verifies itself on load (format
``sourcesum-scores/3``): its key must agree with its ranker, version, parameters and data sha256
and with its path, ``scores_sha256`` with its scores, and ``header_sha256`` with every other
header field (label, pair count, libraries, provenance included), so an edit anywhere is a
:class:`~sourcesum.errors.ScoreFileError` naming the file and how to recompute it, never a
result. A checksum catches damage, not a forgery (a file rewritten with its checksums recomputed
is valid): ``sourcesum verify`` recomputes an entry's scores with the installed ranker. The
header records the versions of the libraries and the package that produced the scores
(``libraries``) and what else they come from (``provenance``, e.g. a model's weights); entries
merged into one (:func:`merge_entries`), and runs resumed from one, must agree on both (the
harness's own version excepted: the ranker's ``version`` tracks code changes). A trained ranker
that stores its fit (``at2``) adds ``fits``, one per training assignment: merged entries must
agree on every fit they share. Format 1 and 2
entries are read only by ``sourcesum migrate``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sourcesum.errors import ScoreFileError, StoreConflict
from sourcesum.registry import NAME
from sourcesum.util.hashing import digest, sha256_hex

if TYPE_CHECKING:
    from sourcesum.data import Split
    from sourcesum.util.memo import Record

FORMAT = "sourcesum-scores/3"
LEGACY_FORMATS = ("sourcesum-scores/1", "sourcesum-scores/2")
HARNESS = "sourcesum-bench"
"""The harness's own distribution: recorded in ``libraries`` but not part of what entries must
agree on (a new harness release keeps every ranker's entries; the ranker ``version`` tracks
scoring changes)."""


def config_id(ranker: str, version: str, params: dict[str, Any]) -> str:
    """12 hex digits identifying a ranker configuration across splits."""
    return digest([ranker, version, params])


def entry_key(ranker: str, version: str, params: dict[str, Any], data_sha256: str) -> str:
    """12 hex digits of sha256 over the canonical JSON of the four key parts."""
    return digest([ranker, version, params, data_sha256])


def scores_sha256(scores: dict[str, list[float]]) -> str:
    """sha256 of the scores as canonical JSON (pair ids sorted, floats as ``json.dumps`` writes
    them, which round-trips exactly)."""
    return sha256_hex(scores)


def recompute_hint(ranker: str, split: str) -> str:
    return f"delete it and recompute with `sourcesum run --ranker {ranker} --split {split}`"


def agreed_libraries(libraries: dict[str, str]) -> dict[str, str]:
    """The library versions entries must agree on: all but the harness's own."""
    return {k: v for k, v in libraries.items() if k != HARNESS}


def _strings(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"{what} must be an object of strings")
    return dict(value)


def _fits(value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, dict) for k, v in value.items()
    ):
        raise ValueError("fits must be an object of objects")
    return dict(value)


def fit_key(trained_on: Sequence[str]) -> str:
    """The key of a fit in :attr:`ScoreEntry.fits`: the training splits (or folds), ``+``-joined."""
    return "+".join(trained_on)


def _scores(value: Any) -> dict[str, list[float]]:
    if not isinstance(value, dict):
        raise ValueError("scores must be a JSON object")
    out: dict[str, list[float]] = {}
    for pair_id, row in value.items():
        if not isinstance(row, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in row
        ):
            raise ValueError(f"pair {pair_id}: scores must be a list of numbers")
        out[str(pair_id)] = [float(x) for x in row]
    return out


@dataclass
class ScoreEntry:
    """Scores of one ranker configuration on one split (possibly partial)."""

    ranker: str
    version: str
    params: dict[str, Any]
    label: str
    split: str
    data_sha256: str
    n_pairs: int
    scores: dict[str, list[float]] = field(default_factory=dict)
    libraries: dict[str, str] = field(default_factory=dict)
    """Versions of the libraries (and the ranker's package) that produced the scores."""
    provenance: dict[str, str] = field(default_factory=dict)
    """What else the scores come from (e.g. a model's weights), from :meth:`Ranker.provenance`."""
    fits: dict[str, dict[str, Any]] = field(default_factory=dict)
    """What a trained ranker fitted, per training assignment that scored pairs of the entry
    (:func:`fit_key` -> :meth:`Ranker.fitted_state`, JSON data), for the rankers that store it
    (``at2``'s head weights); empty for the others, and then absent from the header."""
    verified: tuple[int, int, str] | None = field(default=None, repr=False, compare=False)
    """``(id of the scores dict, pairs, scores_sha256)`` as checked when the entry was read
    from its file (``None`` for an entry built in memory): :meth:`scores_checksum` reuses it
    while the entry holds that same dict with that many pairs (the runner only adds pairs;
    nothing replaces a stored score in place)."""

    def scores_checksum(self) -> str:
        """:func:`scores_sha256` of the scores, computed once per read entry."""
        if self.verified is not None and self.verified[:2] == (id(self.scores), len(self.scores)):
            return self.verified[2]
        return scores_sha256(self.scores)

    @property
    def key(self) -> str:
        return entry_key(self.ranker, self.version, self.params, self.data_sha256)

    @property
    def config_id(self) -> str:
        return config_id(self.ranker, self.version, self.params)

    @property
    def complete(self) -> bool:
        return len(self.scores) == self.n_pairs

    def header(self) -> dict[str, Any]:
        """Every header field in file order, ``header_sha256`` last: the sha256 of the canonical
        JSON of the fields before it (``scores_sha256`` among them, :meth:`scores_checksum`)."""
        header: dict[str, Any] = {
            "format": FORMAT,
            "ranker": self.ranker,
            "version": self.version,
            "params": self.params,
            "label": self.label,
            "split": self.split,
            "data_sha256": self.data_sha256,
            "n_pairs": self.n_pairs,
            "key": self.key,
            "libraries": dict(sorted(self.libraries.items())),
            "provenance": dict(sorted(self.provenance.items())),
            **({"fits": dict(sorted(self.fits.items()))} if self.fits else {}),
            "scores_sha256": self.scores_checksum(),
        }
        header["header_sha256"] = sha256_hex(header)
        return header

    def to_json(self) -> str:
        """Canonical text: header fields, then one ``"pair id": [scores]`` line per pair."""
        lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in self.header().items()]
        rows = [f"    {json.dumps(pid)}: {json.dumps(self.scores[pid])}" for pid in sorted(self.scores)]
        body = ",\n".join(rows)
        return "{\n" + "\n".join(lines) + '\n  "scores": {\n' + body + ("\n" if rows else "") + "  }\n}\n"

    @classmethod
    def from_json(cls, text: str, path: Path, allow_legacy: bool = False) -> ScoreEntry:
        """Parse and verify an entry; ``allow_legacy`` accepts formats 1 and 2 (for
        :func:`migrate`), whose headers carry no ``header_sha256``."""
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise ValueError("not a JSON object")
            fmt = raw.get("format")
            if fmt != FORMAT and not (allow_legacy and fmt in LEGACY_FORMATS):
                hint = " (run `sourcesum migrate` to convert it)" if fmt in LEGACY_FORMATS else ""
                raise ValueError(f"format {fmt!r}, expected {FORMAT!r}{hint}")
            if not isinstance(raw["params"], dict):
                raise ValueError("params must be a JSON object")
            for name in ("ranker", "version", "label", "split", "data_sha256"):
                if not isinstance(raw.get(name, ""), str):
                    raise ValueError(f"{name} must be a string")
            n_pairs = raw["n_pairs"]
            if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or n_pairs < 1:
                raise ValueError(f"n_pairs {n_pairs!r} is not a positive integer")
            scores = _scores(raw["scores"])
            entry = cls(
                ranker=raw["ranker"],
                version=raw["version"],
                params=raw["params"],
                label=str(raw.get("label", raw["ranker"])),
                split=raw["split"],
                data_sha256=raw["data_sha256"],
                n_pairs=n_pairs,
                scores=scores,
                libraries=_strings(raw.get("libraries") or {}, "libraries"),
                provenance=_strings(raw.get("provenance") or {}, "provenance"),
                fits=_fits(raw.get("fits", {})),
            )
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise ScoreFileError(f"{path}: not a valid score-store entry ({exc}); delete it") from exc
        if not NAME.fullmatch(entry.ranker):
            raise ScoreFileError(
                f"{path}: ranker name {entry.ranker!r} is not a name ([A-Za-z][A-Za-z0-9_]*); delete it"
            )
        hint = recompute_hint(entry.ranker, entry.split)
        bad = [pid for pid, v in scores.items() if not all(math.isfinite(x) for x in v)]
        if bad:
            raise ScoreFileError(f"{path}: pair {bad[0]} has a non-finite score; {hint}")
        if len(scores) > entry.n_pairs:
            raise ScoreFileError(
                f"{path}: {len(scores)} pairs, more than its n_pairs {entry.n_pairs}; {hint}"
            )
        if fmt != "sourcesum-scores/1":
            if raw.get("key") != entry.key:
                raise ScoreFileError(
                    f"{path}: header key {raw.get('key')!r} does not match its ranker, version, "
                    f"params and data ({entry.key}); {hint}"
                )
            checksum = scores_sha256(scores)
            if raw.get("scores_sha256") != checksum:
                raise ScoreFileError(f"{path}: scores do not match their scores_sha256 (edited?); {hint}")
            entry.verified = (id(entry.scores), len(scores), checksum)
        if fmt == FORMAT and raw.get("header_sha256") != entry.header()["header_sha256"]:
            raise ScoreFileError(
                f"{path}: header fields do not match their header_sha256 (label, n_pairs, libraries, "
                f"provenance or fits edited?); {hint}"
            )
        expected = (entry.ranker, f"{entry.split}.{entry.key}.json")
        if (path.parent.name, path.name) != expected:
            raise ScoreFileError(
                f"{path}: holds {entry.ranker} on {entry.split} (key {entry.key}), which belongs at "
                f"{expected[0]}/{expected[1]}; {hint}"
            )
        return entry


def fit_problem(entry: ScoreEntry, split: Split) -> str | None:
    """Why ``entry``'s pairs cannot be ``split``'s (another pair count, or a pair the split
    does not have), in words; None when they fit."""
    if entry.n_pairs != len(split):
        return f"it records {entry.n_pairs} pairs; split {split.name} has {len(split)}"
    unknown = sorted(set(entry.scores) - set(split.index))
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        return f"it holds pair {unknown[0]}{more}, which split {split.name} does not have"
    return None


HEADER = ("ranker", "version", "params", "split", "data_sha256", "n_pairs", "libraries", "provenance")
"""Header fields every entry merged into one must share (``libraries`` without the harness's
own version; the label is derived from the others and not compared)."""


def _agreed(entry: ScoreEntry, name: str) -> Any:
    value = getattr(entry, name)
    return agreed_libraries(value) if name == "libraries" else value


def merge_entries(entries: Sequence[tuple[str, ScoreEntry]]) -> ScoreEntry:
    """The one merge rule of the store: one entry with the union of the pairs of ``entries``
    (``(origin, entry)`` pairs of one key; ``origin`` names a file or a run, for messages).

    Every header field of :data:`HEADER` must agree, and a pair present in several entries
    must have identical scores (bit for bit); otherwise :class:`ScoreFileError` names the field
    or pair and both origins (a :class:`~sourcesum.errors.StoreConflict`). Store layers,
    concurrent writers and ``sourcesum merge`` all merge this way."""
    (first_origin, first), *rest = entries
    merged = ScoreEntry(
        **{name: getattr(first, name) for name in HEADER},
        label=first.label,
        scores=dict(first.scores),
        fits=dict(first.fits),
    )
    origin = {pid: first_origin for pid in first.scores}
    for where, entry in rest:
        for name in HEADER:
            if _agreed(entry, name) != _agreed(first, name):
                raise StoreConflict(
                    f"cannot merge {where} into {first_origin}: {name} differs "
                    f"({_agreed(entry, name)!r} vs {_agreed(first, name)!r})"
                )
        for name, fitted in entry.fits.items():
            if merged.fits.setdefault(name, fitted) != fitted:
                raise StoreConflict(
                    f"cannot merge {where} into {first_origin}: the fit on {name} differs (a pair's "
                    "scores must come from one fit)"
                )
        for pid, values in entry.scores.items():
            known = merged.scores.get(pid)
            if known is None:
                merged.scores[pid] = list(values)
                origin[pid] = where
            elif known != values:
                raise StoreConflict(
                    f"cannot merge {entry.ranker} on {entry.split}: pair {pid} has different scores "
                    f"in {origin[pid]} and {where}"
                )
    unfitted = [where for where, entry in entries if entry.scores and not entry.fits]
    if merged.fits and unfitted:
        raise StoreConflict(
            f"cannot merge {unfitted[0]} with entries that store their fits: its scores come "
            "without the fit that made them"
        )
    if (
        not rest
        and first.verified is not None
        and first.verified[:2] == (id(first.scores), len(first.scores))
    ):
        # one entry: the checksum it was read with holds for the copy (same pairs, same values)
        merged.verified = (id(merged.scores), len(merged.scores), first.verified[2])
    if len(merged.scores) > merged.n_pairs:
        raise ScoreFileError(
            f"merging {merged.ranker} on {merged.split} gives {len(merged.scores)} pairs, "
            f"more than the split's {merged.n_pairs}"
        )
    return merged


def scores_record(scores: dict[str, list[float]], value: dict[str, Any]) -> Record:
    """A memo record (:class:`sourcesum.util.memo.Record`) of ``scores``: ``value`` plus the pair ids
    (in order) and each pair's score count, the scores one flat float64 array."""
    import numpy as np
    from sourcesum.util.memo import Record

    ids = list(scores)
    flat = np.fromiter((x for pid in ids for x in scores[pid]), dtype=np.float64)
    return Record({**value, "pairs": ids, "lengths": [len(scores[pid]) for pid in ids]}, {"scores": flat})


def scores_of_record(record: Record) -> dict[str, list[float]]:
    """The scores :func:`scores_record` stored, checked for shape (else
    :class:`~sourcesum.util.memo.MemoMismatch`)."""
    import numpy as np
    from sourcesum.util.memo import MemoMismatch

    ids, lengths = record.value.get("pairs"), record.value.get("lengths")
    flat = record.arrays.get("scores")
    if (
        not isinstance(ids, list)
        or not isinstance(lengths, list)
        or len(ids) != len(lengths)
        or not all(isinstance(p, str) for p in ids)
        or not all(isinstance(n, int) and n >= 0 for n in lengths)
        or flat is None
        or flat.dtype != np.float64
        or flat.shape != (sum(lengths),)
        or not np.isfinite(flat).all()
    ):
        raise MemoMismatch("not the scores of an entry")
    ends = np.cumsum(lengths)
    return {
        pid: flat[end - n : end].tolist() for pid, n, end in zip(ids, lengths, ends.tolist(), strict=True)
    }
