"""The score store: per-sentence scores of one ranker configuration on one split, one JSON file each.

An entry is keyed by (ranker name, parameters, ranker version, data sha256): change any of them
and the key changes, so a stale entry is never reused. Files live at
``<root>/<ranker>/<split>.<key>.json``, are written atomically, list one pair per line (small,
diff-friendly, committed under ``data/scores`` for the leaderboard), and may be partial: the
runner resumes an interrupted run from the pairs already there.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from sourcesum.atomic import write_text_atomic
from sourcesum.errors import ScoreFileError

FORMAT = "sourcesum-scores/1"


def entry_key(ranker: str, version: str, params: dict[str, Any], data_sha256: str) -> str:
    """12 hex digits of sha256 over the canonical JSON of the four key parts."""
    blob = json.dumps([ranker, version, params, data_sha256], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


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

    @property
    def key(self) -> str:
        return entry_key(self.ranker, self.version, self.params, self.data_sha256)

    @property
    def complete(self) -> bool:
        return len(self.scores) == self.n_pairs

    def to_json(self) -> str:
        """Canonical text: header fields, then one ``"pair id": [scores]`` line per pair."""
        header = {
            "format": FORMAT,
            "ranker": self.ranker,
            "version": self.version,
            "params": self.params,
            "label": self.label,
            "split": self.split,
            "data_sha256": self.data_sha256,
            "n_pairs": self.n_pairs,
        }
        lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in header.items()]
        rows = [f"    {json.dumps(pid)}: {json.dumps(self.scores[pid])}" for pid in sorted(self.scores)]
        body = ",\n".join(rows)
        return "{\n" + "\n".join(lines) + '\n  "scores": {\n' + body + ("\n" if rows else "") + "  }\n}\n"

    @classmethod
    def from_json(cls, text: str, path: Path) -> "ScoreEntry":
        try:
            raw = json.loads(text)
            if raw.get("format") != FORMAT:
                raise ValueError(f"format {raw.get('format')!r}, expected {FORMAT!r}")
            scores = {str(k): [float(x) for x in v] for k, v in raw["scores"].items()}
            entry = cls(
                ranker=raw["ranker"],
                version=str(raw["version"]),
                params=raw["params"],
                label=raw.get("label", raw["ranker"]),
                split=raw["split"],
                data_sha256=raw["data_sha256"],
                n_pairs=int(raw["n_pairs"]),
                scores=scores,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ScoreFileError(f"{path}: not a valid score-store entry ({exc}); delete it") from exc
        bad = [pid for pid, v in scores.items() if not all(math.isfinite(x) for x in v)]
        if bad:
            raise ScoreFileError(f"{path}: pair {bad[0]} has a non-finite score; delete the file")
        return entry


class ScoreStore:
    """A folder of :class:`ScoreEntry` files."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def path_for(self, ranker: str, split: str, key: str) -> Path:
        return self.root / ranker / f"{split}.{key}.json"

    def load(self, ranker: str, split: str, key: str) -> ScoreEntry | None:
        path = self.path_for(ranker, split, key)
        if not path.is_file():
            return None
        return ScoreEntry.from_json(path.read_text(), path)

    def save(self, entry: ScoreEntry) -> Path:
        path = self.path_for(entry.ranker, entry.split, entry.key)
        write_text_atomic(path, entry.to_json())
        return path

    def entries(self) -> Iterator[tuple[Path, ScoreEntry]]:
        """Every entry in the store, in path order."""
        if not self.root.is_dir():
            return
        for path in sorted(self.root.glob("*/*.json")):
            yield path, ScoreEntry.from_json(path.read_text(), path)
