"""MkDocs hook: lay out the package as it is installed, for mkdocstrings.

``pyproject.toml`` maps two folders onto one import namespace (``benchmark/`` is ``sourcesum``,
``rankers/`` is ``sourcesum.rankers``). mkdocstrings reads the source statically (griffe), which
cannot follow that mapping, so before each build this hook lays out ``build/docs-api/sourcesum/``
as symlinks (as ``scripts/lint.sh`` does for mypy) and ``mkdocs.yml`` points mkdocstrings there.
Nothing is imported.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

TREE = Path("build") / "docs-api"


def wanted(root: Path) -> dict[str, Path]:
    """Name -> target of every symlink of ``sourcesum/``: benchmark's entries and rankers/."""
    links = {
        item.name: item.resolve() for item in (root / "benchmark").iterdir() if item.name != "__pycache__"
    }
    links["rankers"] = (root / "rankers").resolve()
    return links


def layout(root: Path) -> Path:
    """Create ``root/build/docs-api/sourcesum`` (benchmark/* and rankers/ as symlinks), unless it
    is already exactly that; return ``root/build/docs-api``."""
    tree, links = root / TREE, wanted(root)
    package = tree / "sourcesum"
    if package.is_dir() and not package.is_symlink():
        present = {p.name: p for p in package.iterdir()}
        if present.keys() == links.keys() and all(
            p.is_symlink() and p.resolve() == links[name] for name, p in present.items()
        ):
            return tree
    if tree.is_symlink() or tree.is_file():
        tree.unlink()
    elif tree.exists():
        shutil.rmtree(tree)
    package.mkdir(parents=True)
    for name, target in sorted(links.items()):
        (package / name).symlink_to(target)
    return tree


@event_priority(100)  # before mkdocstrings reads its paths, which must exist then
def on_config(config: Any, **kwargs: Any) -> Any:
    layout(Path(config["config_file_path"]).resolve().parent)
    return config
