"""Moved: :mod:`sourcesum.rankers.lm.weights` (what weights are: packaged models, identities, the
dequantized copy), :mod:`sourcesum.rankers.lm.dtypes` (precision names) and
:mod:`sourcesum.rankers.lm.loading` (loading models). Names read from here still work for one
release, with a :class:`FutureWarning` naming their new home."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_HOMES = ("weights", "dtypes", "loading")


def __getattr__(name: str) -> Any:
    for home in _HOMES:
        module = importlib.import_module(f"sourcesum.rankers.lm.{home}")
        if hasattr(module, name):
            warnings.warn(
                f"sourcesum.rankers.lm.models.{name} moved to sourcesum.rankers.lm.{home}.{name}; "
                "sourcesum.rankers.lm.models goes away in the next release",
                FutureWarning,
                stacklevel=2,
            )
            return getattr(module, name)
    raise AttributeError(f"module 'sourcesum.rankers.lm.models' has no attribute {name!r}")
