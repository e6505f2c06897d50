"""Lazy re-exports for a package ``__init__`` (PEP 562): a name is imported from its module on
first access, so importing one submodule of a package (e.g. ``sourcesum.evaluation.measures``)
does not import its heavy siblings (``evaluate``'s pandas)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose public ``name`` lives in module
    ``exports[name]``; an unknown name raises :class:`AttributeError` as usual."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
