"""Measures as a table: one registration per family, read by every part of the harness.

A :class:`Family` registers, once, everything the harness needs to compute and show a measure:
its batch kernel (:mod:`sourcesum.evaluation.metrics`), which relevance it reads (graded or binary),
whether it takes a cut-off ``@k``, its options (e.g. nDCG's ``gain``), its expectation over
tie orderings, its display name (column headers, plot legend, site), its JSON key, and what its
default tie rule is called in the Ties table. A :class:`Measure` is a value: a family, an
optional cut-off and the options that differ from the family's defaults; its canonical name
(``nDCG``, ``nDCG@10``, ``nDCG(gain=exponential)``, ``AP(ties=expected)``) is what CLIs, JSON
and per-pair tables use, and :func:`parse_measure` reads it back.

Ties: ``nDCG``, ``P@k``, ``R@k`` and ``RR`` are expectations over uniform random orderings of
tied scores. ``AP`` is scikit-learn's ``average_precision_score`` (a tie block enters at once,
every relevant item of the block getting the precision at the block's end), the paper's
measure and not an expectation; ``AP(ties=expected)`` is the exact expected AP over random
orderings of ties. ``Spearman`` uses tie-averaged (fractional) ranks.

Adding a measure is one :func:`register_measure` call (see ``Hits`` in the tests).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from sourcesum.errors import UnknownNameError
from sourcesum.evaluation import metrics
from sourcesum.evaluation.metrics import Ranking
from sourcesum.evaluation.qrels import Relevance
from sourcesum.registry import Registry, RegistryError

Cutoff = Literal["none", "optional", "required"]
Kernel = Callable[["Measure", Ranking, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Family:
    """One registered measure family (see the module docstring).

    ``display`` maps a measure to its column name (default: its canonical name); ``key`` is the
    base of its JSON key (default: the family name in lower case; :attr:`Measure.json_key` adds
    the cut-off and options), ``json_key`` a function that replaces that rule (its result is
    brought to the same style); ``expectation`` to the measure whose value is its expectation over tie
    orderings (default: the measure itself, for kernels that already average over ties; return
    None where there is none); ``tie_rule`` names the default tie rule when the measure is not
    its own expectation (Ties table)."""

    name: str
    kernel: Kernel
    relevance: Relevance
    doc: str
    cutoff: Cutoff = "none"
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Option -> allowed values, the first being the default."""
    display: Callable[[Measure], str] | None = None
    key: str | None = None
    json_key: Callable[[Measure], str] | None = None
    expectation: Callable[[Measure], Measure | None] | None = None
    tie_rule: str = "expected"


def _check_family(family: Family) -> None:
    """A family's name is unique in any case, and its options have word-like values."""
    taken = {name.lower(): name for name in MEASURES.names_so_far() if name != family.name}
    if family.name.lower() in taken:
        raise RegistryError(
            f"measure family {family.name!r} is already registered as {taken[family.name.lower()]!r}"
        )
    for option, values in family.options.items():
        if not values or not all(re.fullmatch(r"\w+", v) for v in values) or not re.fullmatch(r"\w+", option):
            raise RegistryError(f"measure family {family.name}: option {option!r} needs word-like values")


MEASURES: Registry[Family] = Registry(
    "measure family",
    Family,
    "sourcesum.measures",
    check=_check_family,
    instances=True,
    name_pattern=re.compile(r"[A-Za-z][A-Za-z0-9]*"),
)
"""Registered families by name, in registration order (plugins through the entry point group
``sourcesum.measures``, whose value names a :class:`Family`)."""
register_measure = MEASURES.register


def unregister_measure(name: str) -> None:
    """Remove a family (tests that register one clean up with this)."""
    MEASURES.unregister(name)


@dataclass(frozen=True)
class Measure:
    """A measure: a registered ``family``, an optional cut-off ``k`` and the non-default
    ``options`` as sorted ``(name, value)`` pairs. Build one with :meth:`of` or
    :func:`parse_measure`."""

    family: str
    k: int | None = None
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, family: str, k: int | None = None, **options: str) -> Measure:
        """The measure ``family@k(options)``, options at their defaults dropped."""
        spec = _family(family)
        defaults = {name: values[0] for name, values in spec.options.items()}
        kept = tuple(sorted((n, v) for n, v in options.items() if defaults.get(n) != v))
        return cls(spec.name, k, kept)

    @property
    def spec(self) -> Family:
        return _family(self.family)

    def option(self, name: str) -> str:
        """The value of option ``name`` (its default unless set)."""
        return dict(self.options).get(name, self.spec.options[name][0])

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``nDCG@10``, ``nDCG(gain=exponential)``, ``AP(ties=expected)``."""
        text = self.family if self.k is None else f"{self.family}@{self.k}"
        if self.options:
            text += "(" + ",".join(f"{n}={v}" for n, v in self.options) + ")"
        return text

    def __str__(self) -> str:
        return self.name

    @property
    def relevance(self) -> Relevance:
        return self.spec.relevance

    @property
    def display_name(self) -> str:
        """Column header, plot legend and site label (e.g. ``NDCG``, ``MAP``)."""
        return self.spec.display(self) if self.spec.display else self.name

    @property
    def json_key(self) -> str:
        """Key of the measure in JSON and CSV (:func:`key_style`): the family's key, then
        ``at_<k>`` and ``<option>_<value>`` per non-default option, joined by ``_``: ``ndcg``,
        ``map``, ``ndcg_at_10``, ``map_ties_expected``, ``ndcg_at_5_gain_exponential``,
        ``p_at_3``, ``spearman``."""
        if self.spec.json_key is not None:
            return key_style(self.spec.json_key(self))
        parts = [self.spec.key or self.family]
        parts += [f"at_{self.k}"] if self.k is not None else []
        parts += [f"{name}_{value}" for name, value in self.options]
        return key_style("_".join(parts))

    @property
    def expectation(self) -> Measure | None:
        """The measure whose value is this one's expectation over uniform random orderings of
        tied scores (None if the family has none)."""
        return self.spec.expectation(self) if self.spec.expectation else self

    @property
    def default_tie_rule(self) -> str:
        """What the measure's own tie rule is, in words (``expected`` when it is its own
        expectation)."""
        return "expected" if self.expectation == self else self.spec.tie_rule

    def compute(self, ranking: Ranking, relevance: np.ndarray) -> np.ndarray:
        """Per-row values for a ranked batch and the matching (padded) relevance array."""
        return self.spec.kernel(self, ranking, relevance)


def key_style(text: str) -> str:
    """The one style of measure keys: lower case, each run of other characters than letters and
    digits one ``_`` (``nDCG@10`` -> ``ndcg_10``)."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _family(name: str) -> Family:
    family = MEASURES.find(name)
    if family is None:
        raise UnknownNameError(
            f"unknown measure family {name!r}; use one of {', '.join(f.name for f in MEASURES.values())}"
        )
    return family


def _need_k(measure: Measure) -> int:
    if measure.k is None:
        raise UnknownNameError(f"{measure.family} needs a cutoff, e.g. {measure.family}@3")
    return measure.k


def _plain(measure: Measure) -> bool:
    return measure.k is None and not measure.options


register_measure(
    Family(
        "nDCG",
        lambda m, r, rel: metrics.ndcg_batch(r, rel, k=m.k, gain=m.option("gain")),  # type: ignore[arg-type]
        "graded",
        "tie-averaged nDCG, linear gain by default, ideal DCG over all sentences",
        cutoff="optional",
        options={"gain": ("linear", "exponential", "binary")},
        display=lambda m: "NDCG" if _plain(m) else m.name,
        key="ndcg",
    )
)
register_measure(
    Family(
        "AP",
        lambda m, r, rel: (
            metrics.expected_average_precision_batch(r, rel)
            if m.option("ties") == "expected"
            else metrics.average_precision_batch(r, rel)
        ),
        "binary",
        "average precision: block = scikit-learn's (the paper's), expected = over tie orderings",
        options={"ties": ("block", "expected")},
        display=lambda m: (
            "MAP" if _plain(m) else "MAP (ties expected)" if m.options == (("ties", "expected"),) else m.name
        ),
        key="map",
        expectation=lambda m: Measure.of("AP", ties="expected"),
        tie_rule="block, scikit-learn",
    )
)
register_measure(
    Family(
        "P",
        lambda m, r, rel: metrics.precision_at_k_batch(r, rel, _need_k(m)),
        "binary",
        "tie-averaged precision at k",
        cutoff="required",
    )
)
register_measure(
    Family(
        "R",
        lambda m, r, rel: metrics.recall_at_k_batch(r, rel, _need_k(m)),
        "binary",
        "tie-averaged recall at k",
        cutoff="required",
    )
)
register_measure(
    Family(
        "RR",
        lambda m, r, rel: metrics.reciprocal_rank_batch(r, rel),
        "binary",
        "tie-averaged reciprocal rank of the first relevant sentence",
    )
)
register_measure(
    Family(
        "Spearman",
        lambda m, r, rel: metrics.spearman_batch(r, rel),
        "graded",
        "Spearman correlation of scores and graded relevance (fractional ranks)",
        expectation=lambda m: None,
        tie_rule="fractional ranks",
    )
)

NDCG = Measure.of("nDCG")
AP = Measure.of("AP")
EXPECTED_AP = Measure.of("AP", ties="expected")
DEFAULT_MEASURES: tuple[Measure, ...] = (NDCG, AP)
"""The paper's two measures; results report ``nDCG`` as "ndcg" and ``AP`` (mean) as "map"."""

_NAME = re.compile(r"^(?P<family>[A-Za-z][A-Za-z0-9]*?)(@(?P<k>\d+))?(\((?P<options>[^()]*)\))?$")


def measure_forms() -> str:
    """Every family's accepted forms, for help texts and errors (e.g. ``nDCG[@k], AP,
    AP(ties=expected), P@k, ...``)."""
    forms = []
    for family in MEASURES.values():
        base = family.name + {"none": "", "optional": "[@k]", "required": "@k"}[family.cutoff]
        forms.append(base)
        for option, values in family.options.items():
            forms += [f"{family.name}({option}={value})" for value in values[1:]]
    return ", ".join(forms)


def parse_measure(text: str) -> Measure:
    """Parse a canonical name (``nDCG@5``, ``AP``, ``P@3``, ``nDCG(gain=exponential)``,
    ``AP(ties=expected)``...); family names are case-insensitive."""
    match = _NAME.match(text.strip())
    families = {family.name.lower(): family for family in MEASURES.values()}
    family = families.get(match.group("family").lower()) if match else None
    if match is None or family is None:
        raise UnknownNameError(f"unknown measure {text!r}; use one of {measure_forms()}")
    k = int(match.group("k")) if match.group("k") else None
    if k is not None and (family.cutoff == "none" or k < 1):
        with_k = ", ".join(f.name for f in MEASURES.values() if f.cutoff != "none")
        raise UnknownNameError(f"measure {text!r}: a cutoff applies to {with_k} only, k >= 1")
    if k is None and family.cutoff == "required":
        raise UnknownNameError(f"{family.name} needs a cutoff, e.g. {family.name}@3")
    options: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (match.group("options") or "").split(","))):
        name, _, value = part.partition("=")
        allowed = family.options.get(name)
        if allowed is None or value not in allowed:
            known = "; ".join(f"{o}: {', '.join(v)}" for o, v in family.options.items()) or "none"
            raise UnknownNameError(f"measure {text!r}: {family.name} options are {known}")
        options[name] = value
    return Measure.of(family.name, k, **options)


def parse_measures(spec: str) -> tuple[Measure, ...]:
    """Parse a comma-separated list of measure names (commas inside parentheses belong to the
    measure)."""
    parts, depth, current = [], 0, ""
    for char in spec:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return tuple(parse_measure(part) for part in parts if part.strip())
