"""Display names of board rows: short, readable, unique on a board.

A declared row may set ``name`` in the declaration; every other row gets :func:`default_name`:
the ranker's name plus the parameters that differ from its defaults (label parameters at their
defaults left out; the ranker's label parameters first, then the rest by name), values
abbreviated (a list of more than three base rankers becomes ``N rankers``, any value longer than
:data:`VALUE_CHARS` is cut with ``…``). Names are at most :data:`MAX_NAME` characters (trailing
parameters dropped, with ``…``, until the name fits); where two rows would share one, each gets the first six hex digits
of its configuration id in brackets (:func:`unique_names`). The full label (ranker and every
changed parameter) stays the row's identity: the details table shows both.
"""

from __future__ import annotations

from collections.abc import Sequence

from sourcesum.errors import SourceSumError
from sourcesum.runner.configs import Configuration

MAX_NAME = 48
"""The longest display name."""
VALUE_CHARS = 24
"""Parameter values longer than this are cut in default names."""


def check_name(name: object, where: str) -> str:
    """A declared name: a non-empty string of at most :data:`MAX_NAME` printable characters."""
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise SourceSumError(f"{where}: name must be a non-empty string without surrounding spaces")
    if len(name) > MAX_NAME:
        raise SourceSumError(f"{where}: name {name!r} has {len(name)} characters; at most {MAX_NAME}")
    if not name.isprintable():
        raise SourceSumError(f"{where}: name {name!r} holds control characters")
    if "`" in name:
        raise SourceSumError(f"{where}: name {name!r} holds a backtick (names are quoted in backticks)")
    return name


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def abbreviate(value: object) -> str:
    """A parameter value for a name: ``12 rankers`` for a long list of bases, else the value cut
    to :data:`VALUE_CHARS` characters."""
    text = str(value)
    if text.count("+") >= 3:
        return f"{text.count('+') + 1} rankers"
    return _cut(text, VALUE_CHARS)


def default_name(config: Configuration) -> str:
    """``ranker(param=value, ...)`` over the parameters that differ from the defaults (module
    docstring), at most :data:`MAX_NAME` characters."""
    changed = config.ranker_class.changed_params_of(config.params, include_label_params=False)
    if config.bases and "rankers" in changed:  # composites: their bases as in their labels
        changed["rankers"] = "+".join(b.ranker_class.base_label_for(b.params) for b in config.bases)
    first = [k for k in config.ranker_class.label_params if k in changed]  # the ranker's main ones
    keys = first + sorted(k for k in changed if k not in first)
    parts = [f"{key}={abbreviate(changed[key])}" for key in keys]
    name = config.ranker + (f"({', '.join(parts)})" if parts else "")
    while len(name) > MAX_NAME and parts:  # drop trailing parameters, saying so
        parts.pop()
        name = f"{config.ranker}({', '.join([*parts, '…'])})"
    return _cut(name, MAX_NAME)


def unique_names(names: Sequence[str], ids: Sequence[str]) -> list[str]:
    """``names`` cut to :data:`MAX_NAME`, each name that several rows share suffixed by
    `` [id6]`` (the first six characters of the row's id), cut so that the result fits."""
    out = []
    cut = [_cut(name, MAX_NAME) for name in names]
    for name, row_id in zip(cut, ids, strict=True):
        if cut.count(name) > 1:
            suffix = f" [{row_id[:6]}]"
            name = _cut(name, MAX_NAME - len(suffix)) + suffix
        out.append(name)
    return out


def check_declared_names(items: Sequence[tuple[str, str | None]], where: str) -> None:
    """Declared names cannot spoof: ``items`` are every declared row's ``(label, declared name
    or None)``; a name may equal no registered ranker's name and no other row's
    label (its own label is allowed), else :class:`SourceSumError` naming the row."""
    from sourcesum.rankers.base import RANKERS

    rankers = set(RANKERS.names())
    labels = {label for label, _ in items}
    for label, name in items:
        if name is None or name == label:
            continue
        if name in rankers or name in labels:
            raise SourceSumError(
                f"{where}: the row {label} is named {name!r}, which is "
                + ("a ranker's name" if name in rankers else "another row's label")
                + "; a display name may not pass for another row"
            )
