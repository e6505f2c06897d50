"""The one registry mechanism: a lazy name -> class (or object) table that checks what it is given
and loads entry-point plugins. Rankers and datasets register classes, measure families and
training protocols register objects; each has its entry point group.

Built-in classes are declared by name as ``"module:Class"`` strings (as lm-eval-harness does) and
imported only when first asked for, so listing names or reading a leaderboard imports no model
library. External packages register rankers through the entry point group ``sourcesum.rankers``;
each entry point names a module (importing it runs its ``@register`` decorators) or a class.

A plugin that fails to load (an import error, an invalid name, a class the registry's ``check``
refuses) is reported once on stderr with its distribution, entry point and reason; the other
names keep working, and asking for the failed one is an error that says why.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from sourcesum.errors import SourceSumError, UnknownNameError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
"""What a registered name (ranker, dataset) looks like: ASCII letters, digits and ``_``."""

T = TypeVar("T")


class RegistryError(SourceSumError, TypeError):
    """A class or object a registry refuses (its name, type or a registry's own check)."""


@dataclass(frozen=True)
class PluginFailure:
    """An entry point that could not be loaded, and why."""

    distribution: str
    group: str
    name: str
    value: str
    reason: str

    def __str__(self) -> str:
        return (
            f"plugin {self.distribution}: entry point {self.name} = {self.value} "
            f"(group {self.group}) failed to load: {self.reason}"
        )


def _origin(item: object) -> str:
    """``module.Qualname`` of a class, or of an object's class."""
    cls = item if isinstance(item, type) else type(item)
    return f"{cls.__module__}.{cls.__qualname__}"


def _distribution(point: EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "(unknown distribution)"


class Registry(Generic[T]):
    """Maps names to subclasses of ``base`` (or, ``instances``, to instances of it); ``register``
    is a decorator; ``check`` refuses an invalid entry (raising, with a message naming it);
    names match ``name_pattern``."""

    def __init__(
        self,
        kind: str,
        base: type,
        entry_point_group: str | None = None,
        check: Callable[[T], None] | None = None,
        instances: bool = False,
        name_pattern: re.Pattern[str] = NAME,
    ):
        self.kind = kind
        self.base = base
        self.entry_point_group = entry_point_group
        self.check = check
        self.instances = instances
        self.name_pattern = name_pattern
        self._classes: dict[str, T] = {}
        self._lazy: dict[str, str] = {}
        self._plugins_loaded = False
        self.failures: list[PluginFailure] = []

    def register_lazy(self, specs: Mapping[str, str]) -> None:
        """Declare ``name -> "module:Class"`` entries, imported on first :meth:`get`."""
        for name, spec in specs.items():
            module, _, attr = spec.partition(":")
            if not module or not attr:
                raise ValueError(f"lazy {self.kind} {name!r}: expected 'module:Class', got {spec!r}")
            self._lazy[name] = spec

    def _import_lazy(self, name: str) -> T:
        module, _, attr = self._lazy[name].partition(":")
        item: T = getattr(importlib.import_module(module), attr)
        if self._classes.get(name) is not item:  # the module did not register it
            self.register(item)
        if getattr(item, "name", None) != name:
            raise RegistryError(
                f"{self._lazy[name]} is named {getattr(item, 'name', None)!r}, declared as {name!r}"
            )
        return item

    def register(self, item: T) -> T:
        """Register ``item`` under ``item.name``; refuses other types, invalid and duplicate
        names (:class:`RegistryError`)."""
        what = getattr(item, "__name__", type(item).__name__)
        ok = (
            isinstance(item, self.base)
            if self.instances
            else isinstance(item, type) and issubclass(item, self.base)
        )
        if not ok:
            kind = "an instance" if self.instances else "a subclass"
            raise RegistryError(f"{item!r} is not {kind} of {self.base.__name__}")
        name = getattr(item, "name", None)
        if not isinstance(name, str) or not self.name_pattern.fullmatch(name):
            raise RegistryError(
                f"{what}.name must match {self.name_pattern.pattern} (ASCII, so no name can pass for "
                f"another), got {name!r}"
            )
        existing = self._classes.get(name)
        if existing is not None and existing is not item:
            raise RegistryError(f"{self.kind} name {name!r} is taken by {_origin(existing)}")
        declared = self._lazy.get(name)
        if declared is not None and not self.instances and declared.replace(":", ".") != _origin(item):
            raise RegistryError(f"{self.kind} name {name!r} is taken by {declared.replace(':', '.')}")
        if self.check is not None:
            self.check(item)
        self._classes[name] = item
        return item

    def _load_plugins(self) -> None:
        if self._plugins_loaded or self.entry_point_group is None:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points  # slow to import: only when plugins load

        for point in entry_points(group=self.entry_point_group):
            try:
                loaded = point.load()
                if self.instances or isinstance(loaded, type):
                    self.register(loaded)
            except Exception as exc:  # noqa: BLE001 - one broken plugin must not stop the others
                failure = PluginFailure(
                    _distribution(point),
                    self.entry_point_group,
                    point.name,
                    point.value,
                    f"{type(exc).__name__}: {exc}",
                )
                self.failures.append(failure)
                print(f"warning: {failure}; commands that do not need it go on", file=sys.stderr)

    def get(self, name: str) -> T:
        """The class registered as ``name``; :class:`UnknownNameError` lists valid names.
        Plugins are loaded only for a name not registered or declared so far."""
        if not self.known(name):
            self._load_plugins()
        if name in self._classes:
            return self._classes[name]
        if name in self._lazy:
            return self._import_lazy(name)
        failed = [f for f in self.failures if f.name == name]
        if failed:
            raise SourceSumError(f"{self.kind} {name!r} is unavailable: {failed[0]}")
        try:
            return self._classes[name]
        except KeyError:
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}; registered: {', '.join(self.names())} (see `sourcesum list`)"
            ) from None

    def find(self, name: str) -> T | None:
        """The entry registered as ``name``, or None."""
        return self.get(name) if name in self else None

    def values(self) -> list[T]:
        """Every entry (lazy ones imported): the declared built-ins in declaration order, then
        the others in the order registered."""
        self._load_plugins()
        order = [*self._lazy, *(name for name in self._classes if name not in self._lazy)]
        return [self.get(name) for name in order]

    def unregister(self, name: str) -> None:
        """Forget a class registered (not lazily declared) as ``name``: for tests and
        interactive sessions that register a class for a while."""
        self._classes.pop(name, None)

    def names(self) -> list[str]:
        """Every registered name, without importing lazy entries."""
        self._load_plugins()
        return sorted(set(self._classes) | set(self._lazy))

    def known(self, name: str) -> bool:
        """``name`` is registered or declared so far (plugins not loaded for it)."""
        return name in self._classes or name in self._lazy

    def names_so_far(self) -> list[str]:
        """The names registered or declared so far, plugins not loaded (for a ``check`` that
        compares a newcomer with the names already taken)."""
        return sorted(set(self._classes) | set(self._lazy))

    def __contains__(self, name: str) -> bool:
        if not self.known(name):
            self._load_plugins()
        return self.known(name)

    def items(self) -> list[tuple[str, T]]:
        """``(name, class)`` for every entry (imports the lazy ones)."""
        return [(name, self.get(name)) for name in self.names()]
