"""Rating scales: which answer strings are ratings, and how an answer is read into one.

A scale ``"LO-HI"`` (e.g. ``0-9``, ``0-100``, ``1-5``, ``0-1.00``) allows the numbers from LO to
HI written in decimal without sign or leading zeros, with up to as many fractional digits as HI
is written with (``0-1.00``: ``0``, ``0.5``, ``0.75``, ``1``, ``1.0``; a trailing ``.`` as in
``1.`` is allowed when fractional digits are). *Continuation characters* are the digits, plus
``.`` on a scale with fractional digits.

**Reading rule** (the same for every backend): the answer is read token by token from its first
token (whose leading whitespace is ignored), one character at a time, as long as the text read so
far stays a prefix of some valid rating; reading stops at the first character that would leave
that set (or at a non-continuation character). The rating is the text read, if it is a valid
rating; otherwise the answer has no rating. So on ``0-9`` the answer is its first digit (``"7"``,
``"7\\n"`` and ``"75"`` all read 7) and a *single-token* scale needs only the first token's
distribution; on ``0-100``, ``"100"`` reads 100 and ``"1000"`` reads 100.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cached_property

from sourcesum.errors import ParameterError

_MAX_RATINGS = 20_000
_SPEC = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class Scale:
    """The ratings LO..HI in steps of ``10**-decimals`` (see the module doc)."""

    lo: Decimal
    hi: Decimal
    decimals: int

    @classmethod
    def parse(cls, spec: str) -> Scale:
        """``"LO-HI"``; the number of fractional digits of HI sets the precision."""
        match = _SPEC.match(spec)
        if not match:
            raise ParameterError(f"scale {spec!r}: expected LO-HI, e.g. 0-9, 0-100 or 0-1.00")
        try:
            lo, hi = Decimal(match.group(1)), Decimal(match.group(2))
        except InvalidOperation:  # pragma: no cover - the regex admits only decimals
            raise ParameterError(f"scale {spec!r}: not two numbers") from None
        decimals = len(match.group(2).partition(".")[2])
        if lo >= hi:
            raise ParameterError(f"scale {spec!r}: LO must be below HI")
        count = (hi - lo) * 10**decimals + 1
        if count > _MAX_RATINGS:
            raise ParameterError(f"scale {spec!r}: {count} ratings, at most {_MAX_RATINGS} supported")
        return cls(lo, hi, decimals)

    @property
    def continuation(self) -> str:
        return "0123456789." if self.decimals else "0123456789"

    @property
    def lo_text(self) -> str:
        """LO as written in a prompt (``0``, ``1``, ``0.5``)."""
        return _plain(self.lo)

    @property
    def hi_text(self) -> str:
        return _plain(self.hi)

    @cached_property
    def ratings(self) -> dict[str, float]:
        """Every valid rating string and its value."""
        out: dict[str, float] = {}
        step = Decimal(1).scaleb(-self.decimals)
        value = self.lo
        while value <= self.hi:
            whole, _, frac = f"{value:.{self.decimals}f}".partition(".")
            if not frac.strip("0"):
                out[whole] = float(value)
                if self.decimals:
                    out[whole + "."] = float(value)
            for width in range(1, self.decimals + 1):
                if not frac[width:].strip("0"):
                    out[f"{whole}.{frac[:width]}"] = float(value)
            value += step
        return out

    @cached_property
    def prefixes(self) -> frozenset[str]:
        """Every proper prefix of a valid rating (including the empty string)."""
        return frozenset(r[:i] for r in self.ratings for i in range(len(r)))

    @property
    def single_token(self) -> bool:
        """True when every rating is one character, so the first token decides it."""
        return all(len(r) == 1 for r in self.ratings)

    def extendable(self, text: str) -> bool:
        """Whether ``text`` is a proper prefix of some rating (reading may continue)."""
        return text in self.prefixes

    def read(self, text: str, first: bool = True) -> tuple[str, bool]:
        """Read ``text`` (a token, or an answer) from an empty prefix; see :meth:`extend`."""
        return self.extend("", text, first)

    def extend(self, prefix: str, token: str, first: bool = False) -> tuple[str, bool]:
        """``(text read, stopped)`` after reading ``token`` on top of ``prefix`` by the reading
        rule: ``stopped`` is True when reading ended inside the token or cannot continue after
        it. ``first`` strips the token's leading whitespace (the answer's first token)."""
        if first:
            token = token.lstrip()
        read = prefix
        if not token:
            return read, True  # nothing to read (e.g. a whitespace-only first token)
        for char in token:
            candidate = read + char
            if char in self.continuation and (candidate in self.prefixes or candidate in self.ratings):
                read = candidate
                continue
            return read, True
        return read, not self.extendable(read)

    def value(self, text: str) -> float | None:
        """The rating's value, or None when ``text`` is not a valid rating."""
        return self.ratings.get(text)

    def parse_answer(self, answer: str) -> float | None:
        """The value of a whole generated answer by the reading rule (None: no rating)."""
        read, _ = self.read(answer)
        return self.value(read)


def _plain(value: Decimal) -> str:
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
