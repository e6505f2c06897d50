"""Typed ranker parameters (sourcesum.params): spellings parsed by type, bad values naming the
parameter, and a plugin's types taken from its annotations and defaults."""

from __future__ import annotations

from typing import Literal

import pytest
from sourcesum.errors import ParameterError
from sourcesum.rankers import Ranker, create_ranker


@pytest.mark.parametrize(
    "text,value",
    [
        ("False", False),
        ("no", False),
        ("OFF", False),
        ("0", False),
        ("true", True),
        ("Yes", True),
        ("on", True),
        ("1", True),
    ],
)
def test_boolean_spellings_parse_by_type(text, value):
    ranker = create_ranker("rouge1", use_stemmer=text)
    assert ranker.use_stemmer is value
    assert ranker.label == ("rouge1" if value else "rouge1(use_stemmer=False)")


@pytest.mark.parametrize(
    "name,param,value,fragment",
    [
        ("rouge1", "use_stemmer", "maybe", "rouge1.use_stemmer=maybe: expected a boolean"),
        ("bm25", "variant", "foo", "bm25.variant=foo: expected one of okapi, plus, l"),
        ("bm25", "k1", "abc", "bm25.k1=abc: expected a number >= 0"),
        ("bm25", "b", "1.5", "bm25.b=1.5: expected a number >= 0 and <= 1"),
        ("tfidf", "idf", "foo", "tfidf.idf=foo: expected one of split, document"),
        ("rouge1", "measure", "foo", "rouge1.measure=foo: expected one of fmeasure"),
        ("random", "seed", "1.5", "random.seed=1.5: expected an integer"),
        ("random", "sede", "1", "ranker 'random' has no parameter 'sede'; it accepts seed"),
    ],
)
def test_bad_parameter_values_name_the_parameter(name, param, value, fragment):
    with pytest.raises(ParameterError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        create_ranker(name, **{param: value})


class _SimplePlugin(Ranker):
    """A plugin written the simple way: types come from annotations and defaults."""

    name = "simple_plugin_test"

    def __init__(
        self,
        flag: bool = True,
        count: int = 2,
        mode: Literal["a", "b"] = "a",
        anything=None,
        ratio: float | None = None,
    ):
        self.flag, self.count, self.mode, self.anything, self.ratio = flag, count, mode, anything, ratio

    def score(self, pair):
        return [0.0] * pair.n_sentences


def test_plugin_parameter_types_come_from_annotations_and_defaults():
    values = _SimplePlugin.canonical_params(
        {"flag": "off", "count": "3", "mode": "b", "anything": "[1, 2]", "ratio": "none"}
    )
    assert values == {"flag": False, "count": 3, "mode": "b", "anything": [1, 2], "ratio": None}
    assert _SimplePlugin.canonical_params({"anything": "plain text"}) == {"anything": "plain text"}
    with pytest.raises(ParameterError, match="simple_plugin_test.mode=c: expected one of a, b"):
        _SimplePlugin.canonical_params({"mode": "c"})
    with pytest.raises(ParameterError, match="simple_plugin_test.count=x: expected an integer"):
        _SimplePlugin.canonical_params({"count": "x"})
    full = _SimplePlugin.full_params({"count": "3"})
    assert full == {"flag": True, "count": 3, "mode": "a", "anything": None, "ratio": None}
    assert _SimplePlugin.label_for(full) == "simple_plugin_test(count=3)"
    assert full == _SimplePlugin(count=3).get_params()
