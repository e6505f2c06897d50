"""SourceSum Bench: a benchmark harness for source sentence detection in summarization.

Modules that moved into the folders of their step (0.3) are still importable from their old
paths for one release, with a :class:`FutureWarning` naming the new home (:data:`MOVED`)."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
import warnings
from typing import Any

__version__ = "0.3.0"

MOVED = {
    "sourcesum.measures": "sourcesum.evaluation.measures",
    "sourcesum.metrics": "sourcesum.evaluation.metrics",
    "sourcesum.qrels": "sourcesum.evaluation.qrels",
    "sourcesum.ties": "sourcesum.evaluation.ties",
    "sourcesum.human": "sourcesum.evaluation.human",
    "sourcesum.significance": "sourcesum.stats.significance",
    "sourcesum.statscache": "sourcesum.stats.cache",
    "sourcesum.configs": "sourcesum.runner.configs",
    "sourcesum.protocols": "sourcesum.runner.protocols",
    "sourcesum.verify": "sourcesum.runner.verify",
    "sourcesum.folds": "sourcesum.data.folds",
    "sourcesum.merge": "sourcesum.store.merge",
    "sourcesum.scorefiles": "sourcesum.store.scorefiles",
    "sourcesum.published": "sourcesum.store.published",
    "sourcesum.hashing": "sourcesum.util.hashing",
    "sourcesum.files": "sourcesum.util.files",
    "sourcesum.memo": "sourcesum.util.memo",
    "sourcesum.citation": "sourcesum.board.citation",
    "sourcesum.board.pairs": "sourcesum.board.explorer",
}
"""Old module path -> new one: the old path works for one release and warns."""


class _Moved(types.ModuleType):
    """An old module path: every attribute read goes to the module's new home."""

    def __init__(self, name: str, target: str):
        super().__init__(name, f"Moved to {target}.")
        self._target = target

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module(self._target), name)


class _MovedFinder:
    """Finds and loads the old paths of :data:`MOVED` (a meta path finder and loader, after every
    real module: a real file always wins)."""

    def find_spec(
        self, fullname: str, path: Any, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        # a loader by protocol (importlib.abc costs 60 ms to import)
        return importlib.machinery.ModuleSpec(fullname, self) if fullname in MOVED else None  # type: ignore[arg-type]

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        warnings.warn(
            f"{spec.name} moved to {MOVED[spec.name]}; the old path goes away in the next release",
            FutureWarning,
            stacklevel=3,
        )
        return _Moved(spec.name, MOVED[spec.name])

    def exec_module(self, module: types.ModuleType) -> None:
        importlib.import_module(MOVED[module.__name__])  # fail now if the new home does


if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
    sys.meta_path.append(_MovedFinder())
