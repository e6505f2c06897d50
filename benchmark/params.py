"""Typed, declarative ranker parameters: parse, validate and canonicalise before any work.

A ranker's parameters are its ``__init__`` keyword arguments (the default comes from the
signature, the one source of truth). Each may be declared with a :class:`Param` giving its type,
allowed values or range and one line of doc; an undeclared parameter (a plugin written the simple
way) gets its type from the annotation (``bool``, ``int``, ``float``, ``str``, ``X | None``,
``Literal[...]``), else from the default's type, else it is parsed as JSON as before.

Values from the command line arrive as text and are parsed by type: booleans accept
true/false/1/0/yes/no/on/off in any case; ``none``/``null`` means None where None is allowed.
Values are canonicalised (``k1=1`` and ``k1=1.0`` are one float), so equal configurations share
one cache key and one leaderboard row.
"""

from __future__ import annotations

import inspect
import json
import math
import types
import typing
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union

from sourcesum.errors import ParameterError

JSON = "json"
"""The type of an undeclared parameter with no usable annotation or default: parsed as JSON."""

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}
_SCALARS: dict[str, type] = {"bool": bool, "int": int, "float": float, "str": str}


@dataclass(frozen=True)
class Param:
    """One declared parameter: ``type`` (bool, int, float, str or :data:`JSON`), whether None is
    allowed, allowed ``choices`` or an inclusive ``[min, max]`` range, and one line of ``doc``."""

    type: Any = JSON
    doc: str = ""
    choices: tuple[Any, ...] | None = None
    min: float | None = None
    max: float | None = None
    optional: bool = False
    multiline: bool = False
    """A string that may hold line breaks and tabs (a prompt template); other control characters
    are refused in every string."""
    registry: Any = None
    """An object whose ``names()`` are the accepted values, read when a value is checked (a
    :class:`~sourcesum.registry.Registry`, to which plugins may add); instead of ``choices``."""
    unscorable_policy: bool = False
    """The parameter decides only what happens to pairs the ranker cannot score as asked (e.g. a
    pair longer than a model's window), and its default stops the run on any such pair. So a
    complete entry under the default holds the scores any other value would give on its split
    (see :meth:`sourcesum.rankers.base.Ranker.same_scores_when_complete`)."""
    training_protocol: bool = False
    """The value names the training protocol the ranker is fitted under (e.g. ``cross-corpus``).
    The transfer summary takes rows that differ only here for one method where both protocols fit
    on the board pairs of one dataset outside the scored corpus
    (:meth:`sourcesum.runner.protocols.Protocol.outside_source`)."""

    @property
    def allowed(self) -> tuple[Any, ...] | None:
        """The accepted values (``choices``, or the ``registry``'s names now), None: any."""
        return tuple(self.registry.names()) if self.registry is not None else self.choices

    @property
    def accepts(self) -> str:
        """What the parameter accepts, in words (used in error messages and ``sourcesum list``)."""
        if self.allowed is not None:
            text = "one of " + ", ".join(str(c) for c in self.allowed)
        elif self.type is bool:
            text = "a boolean (true/false, 1/0, yes/no, on/off)"
        elif self.type in (int, float):
            kind = "an integer" if self.type is int else "a number"
            bounds = [
                f">= {self.min:g}" if self.min is not None else "",
                f"<= {self.max:g}" if self.max is not None else "",
            ]
            text = " ".join([kind, " and ".join(b for b in bounds if b)]).strip()
        elif self.type is str:
            text = "a string"
        else:
            text = "a JSON value"
        return text + (" or none" if self.optional else "")

    @property
    def type_name(self) -> str:
        return JSON if self.type == JSON else str(self.type.__name__)

    def coerce(self, value: Any, where: str) -> Any:
        """``value`` (text from the command line, or a Python value) parsed, validated and
        canonicalised; :class:`ParameterError` naming ``where`` and what is accepted otherwise."""
        if isinstance(value, str) and self.type is not str:
            value = self._parse_text(value, where)
        elif isinstance(value, str) and self.optional and value.strip().lower() in ("none", "null"):
            value = None
        if value is None:
            if self.optional:
                return None
            raise self._error(value, where)
        value = self._check_type(value, where)
        allowed = self.allowed
        if allowed is not None and value not in allowed:
            raise self._error(value, where)
        if self.type in (int, float) and (
            (self.min is not None and value < self.min) or (self.max is not None and value > self.max)
        ):
            raise self._error(value, where)
        return value

    def _parse_text(self, text: str, where: str) -> Any:
        lowered = text.strip().lower()
        if self.optional and lowered in ("none", "null"):
            return None
        if self.type is bool:
            if lowered in _TRUE:
                return True
            if lowered in _FALSE:
                return False
            raise self._error(text, where)
        if self.type is int:
            try:
                return int(text.strip())
            except ValueError:
                raise self._error(text, where) from None
        if self.type is float:
            try:
                return float(text.strip())
            except ValueError:
                raise self._error(text, where) from None
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return text

    def _check_type(self, value: Any, where: str) -> Any:
        if self.type is bool:
            if not isinstance(value, bool):
                raise self._error(value, where)
        elif self.type is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._error(value, where)
        elif self.type is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self._error(value, where)
            try:
                value = float(value)
            except OverflowError:
                raise self._error(value, where) from None
            if not math.isfinite(value):
                raise self._error(value, where)
            value = value + 0.0  # -0.0 and 0.0 are one value, one key
        elif self.type is str and not isinstance(value, str):
            raise self._error(value, where)
        _check_no_control(value, where, "\n\t" if self.multiline else "")
        return value

    def _error(self, value: Any, where: str) -> ParameterError:
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        return ParameterError(f"parameter {where}={shown!s}: expected {self.accepts}")


def _check_no_control(value: Any, where: str, allowed: str = "") -> None:
    """No string in ``value`` (a string, or JSON lists and objects of them) holds a control
    character other than ``allowed``: they would reach labels, tables and terminals."""
    if isinstance(value, str):
        control = next((c for c in value if unicodedata.category(c) == "Cc" and c not in allowed), None)
        if control is not None:
            raise ParameterError(
                f"parameter {where}: contains the control character {control!r}, which strings may not"
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_no_control(key, where, allowed)
            _check_no_control(item, where, allowed)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_no_control(item, where, allowed)


def infer_param(annotation: Any, default: Any) -> Param:
    """The :class:`Param` of an undeclared parameter, from its annotation, else its default
    (``inspect.Parameter.empty`` when it has none)."""
    optional = default is None
    annotation = _unwrap_optional(annotation)
    if annotation is not None:
        if annotation[1]:
            optional = True
        hint = annotation[0]
        if typing.get_origin(hint) is Literal:
            choices = typing.get_args(hint)
            return Param(type=type(choices[0]), choices=choices, optional=optional)
        if hint in (bool, int, float, str):
            return Param(type=hint, optional=optional)
    if isinstance(default, (bool, int, float, str)):
        return Param(type=type(default), optional=optional)
    return Param(type=JSON, optional=True)


def _unwrap_optional(annotation: Any) -> tuple[Any, bool] | None:
    """``(X, allows_none)`` for an annotation ``X`` or ``X | None``; None if unusable."""
    if annotation is inspect.Parameter.empty or annotation is None:
        return None
    if isinstance(annotation, str):
        parts = [p.strip() for p in annotation.split("|")]
        allows_none = "None" in parts
        rest = [p for p in parts if p != "None"]
        if len(rest) == 1 and rest[0] in _SCALARS:
            return _SCALARS[rest[0]], allows_none
        return None
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = typing.get_args(annotation)
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0], len(rest) < len(args)
        return None
    return annotation, False


def signature_params(cls: type, declared: Mapping[str, Param]) -> dict[str, tuple[Param, Any]]:
    """``name -> (Param, default)`` for every keyword parameter of ``cls.__init__`` (default
    ``inspect.Parameter.empty`` for a required one)."""
    try:
        hints = typing.get_type_hints(cls.__init__)  # type: ignore[misc]
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        hints = {}
    out: dict[str, tuple[Param, Any]] = {}
    for parameter in inspect.signature(cls.__init__).parameters.values():  # type: ignore[misc]
        if parameter.name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        spec = declared.get(parameter.name) or infer_param(
            hints.get(parameter.name, parameter.annotation), parameter.default
        )
        out[parameter.name] = (spec, parameter.default)
    return out
