"""Rating scales (sourcesum.rankers.llm.scale): ratings and the reading rule."""

from __future__ import annotations

import pytest
from sourcesum.errors import ParameterError
from sourcesum.rankers.llm.scale import Scale


def test_scale_ratings_and_reading_rule():
    s = Scale.parse("0-100")
    assert len(s.ratings) == 101 and s.value("100") == 100.0 and s.value("05") is None
    assert sorted(s.prefixes) == sorted([""] + [str(d) for d in range(1, 10)] + ["10"])
    assert s.read("1000") == ("100", True)
    assert s.read(" 7\n") == ("7", True)
    assert s.read("05")[0] == "0" and s.parse_answer("05") == 0.0
    assert s.parse_answer("Score: 7") is None and s.parse_answer("  ") is None
    assert not s.single_token and Scale.parse("0-9").single_token
    nine = Scale.parse("0-9")
    assert nine.read("75") == ("7", True) and nine.extend("", "7", first=True) == ("7", True)
    dec = Scale.parse("0-1.00")
    assert dec.value("0.75") == 0.75 and dec.value("1.") == 1.0 and dec.value("0.7") == pytest.approx(0.7)
    assert dec.value("1.5") is None and dec.read("0.756") == ("0.75", True)
    assert (dec.lo_text, dec.hi_text) == ("0", "1") and len(dec.ratings) == 116
    for bad in ("9-0", "a-b", "0-1000000"):
        with pytest.raises(ParameterError):
            Scale.parse(bad)
