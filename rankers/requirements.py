"""What a ranker needs installed to score, checked before the ranker is built.

The model-based rankers import their libraries (torch, transformers, sentence-transformers, ...)
only when they score, so listing them and rendering boards from stored scores work with the core
package alone. Each declares those libraries by the extra of ``sourcesum-bench`` that installs
them (:attr:`~sourcesum.rankers.Ranker.requires`); :func:`check_requirements` turns a missing
one into one line that names the ``pip install`` to run.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping, Sequence

from sourcesum.errors import MissingDependencyError

Requirements = Mapping[str, Sequence[str]]
"""``extra -> top-level modules`` the extra of ``sourcesum-bench`` installs, e.g.
``{"lm": ("torch", "transformers")}``."""


def importable(module: str) -> bool:
    """Whether the top-level ``module`` can be found here without importing it (False when it is
    not installed or is blocked with ``sys.modules[module] = None``)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: in sys.modules without a spec
        return False


def install_command(extras: Iterable[str]) -> str:
    """The command that installs ``extras`` into the checkout's environment, with the pinned
    versions: ``pip install -e ".[lm,llm]" -c constraints.txt``."""
    return f'pip install -e ".[{",".join(extras)}]" -c constraints.txt'


def missing_extras(requirements: Requirements) -> dict[str, list[str]]:
    """``extra -> its modules that are not importable``, for the extras with any missing."""
    missing = {extra: [m for m in modules if not importable(m)] for extra, modules in requirements.items()}
    return {extra: modules for extra, modules in missing.items() if modules}


def check_requirements(ranker: str, requirements: Requirements) -> None:
    """Raise :class:`MissingDependencyError` (one line: the modules, the ``pip install`` to run
    from the checkout and the equivalent ``scripts/setup.sh`` call) when a module of
    ``requirements`` is missing."""
    missing = missing_extras(requirements)
    if not missing:
        return
    modules = ", ".join(dict.fromkeys(m for names in missing.values() for m in names))
    extras = ",".join(missing)
    raise MissingDependencyError(
        f"ranker {ranker!r} needs {modules}, not installed here: in the checkout run "
        f"`{install_command(missing)}` (or `bash scripts/setup.sh --extras {extras}`)"
    )
