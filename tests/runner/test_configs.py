"""Configurations (sourcesum.runner.configs): known without an instance (parameters, label and
keys as an instance has them), canonical forms of computed parameters, equal values one
configuration, string parameters without control characters, and bad protocol arguments refused
before training."""

from __future__ import annotations

import pytest
from sourcesum.errors import ParameterError, RankerError
from sourcesum.rankers import BUILTIN_RANKERS, Ranker, create_ranker, register
from sourcesum.runner.configs import Configuration


def test_equal_values_are_one_configuration():
    a, b = create_ranker("bm25", k1="1"), create_ranker("bm25", k1=1.0)
    assert a.get_params() == b.get_params() and a.get_params()["k1"] == 1.0
    assert isinstance(create_ranker("bm25", k1=1).k1, float)
    assert create_ranker("lexrank", threshold="none").threshold is None
    # one configuration, one key: the class computes it from either spelling
    assert Configuration.of("bm25", {"k1": "1"}).entry_key("synth_alpha_sys", "sha") == Configuration.of(
        "bm25", {"k1": 1.0}
    ).entry_key("synth_alpha_sys", "sha")
    assert Configuration.of("bm25", {"k1": "1"}).params == a.get_params()


_PROMPT = "Rate how much the sentence contributes to the summary.\nSummary: {summary}\nSentence: {sentence}\n"


def _configurations() -> list:
    """Every built-in with its defaults, then non-default parameter sets whose canonical form is
    computed (dtype resolved, feature groups ordered, bases completed, a template pinned)."""
    cases = [
        # llm_judge's default template is the paper's prompt file (published data)
        pytest.param(name, {}, id=name, marks=[pytest.mark.real_data] if name == "llm_judge" else [])
        for name in BUILTIN_RANKERS
    ]
    cases += [
        pytest.param("random", {"seed": "3"}, id="random-seed-text"),
        pytest.param("bm25", {"k1": "1", "variant": "plus"}, id="bm25-k1-int"),
        pytest.param("lexrank", {"threshold": "none"}, id="lexrank-none"),
        pytest.param("rouge1", {"use_stemmer": "off"}, id="rouge1-bool-text"),
        pytest.param("pmi", {"dtype": "auto"}, id="lm-dtype-auto"),
        pytest.param("perplexity_gain", {"dtype": "auto", "device": "cpu"}, id="lm-dtype-auto-cpu"),
        pytest.param("attention", {"dtype": "bfloat16", "batch_size": 2}, id="lm-runtime-batch"),
        pytest.param("fusion", {"rankers": "tfidf, bm25", "method": "rrf"}, id="fusion-bases-order"),
        pytest.param(
            "fusion",
            {"rankers": '[{"ranker": "bm25", "params": {"k1": 1}}, "random"]'},
            id="fusion-bases-json",
        ),
        pytest.param("learned", {"features": "length,position"}, id="learned-features-order"),
        pytest.param("learned", {"features": " length "}, id="learned-features-spaces"),
        pytest.param(
            "learned",
            {"model": "lambdamart", "trees": "50", "protocol": "kfold", "folds": 3},
            id="learned-lambdamart-kfold",
        ),
        pytest.param("llm_judge", {"mode": "listwise"}, id="llm-listwise"),
        pytest.param("llm_judge", {"mode": "listwise", "dtype": "auto"}, id="llm-dtype-auto"),
        pytest.param("llm_judge", {"template": "{tmp}/prompt.txt"}, id="llm-template-file"),
        pytest.param(
            "llm_judge",
            {"mode": "listwise", "backend": "openai", "base_url": "http://127.0.0.1:9/v1", "dtype": "auto"},
            id="llm-openai",
        ),
    ]
    return cases


@pytest.mark.parametrize("name,params", _configurations())
def test_a_configuration_is_known_without_an_instance(name, params, tmp_path):
    """``Configuration.of`` (class and parameters only) gives the parameters, label and keys an
    instance has, so the board and the store never build a ranker."""
    (tmp_path / "prompt.txt").write_text(_PROMPT)
    params = {k: v.replace("{tmp}", str(tmp_path)) if isinstance(v, str) else v for k, v in params.items()}
    config = Configuration.of(name, params)
    ranker = create_ranker(name, **params)
    assert config.params == ranker.get_params() and config.label == ranker.label
    # parameters left out of the key at their defaults (e.g. the LM rankers' backend) are absent
    unkeyed = {k for k in getattr(type(ranker), "unkeyed_defaults", {}) if k not in config.params}
    assert set(config.params) | unkeyed == set(ranker.parameters()) - set(type(ranker).runtime_params)
    assert "auto" != config.params.get("dtype", "") or params.get("backend") == "openai"
    same = Configuration.of_ranker(ranker)
    for split in ("synth_alpha_sys", "synth_beta_ref"):
        assert config.key_version(split) == same.key_version(split)
        assert config.entry_key(split, "sha") == same.entry_key(split, "sha")
    # canonical parameters are a fixed point: the stored params give the same configuration
    again = Configuration.of(name, config.params)
    assert again.params == config.params and again.label == config.label


def test_canonical_forms_of_computed_parameters(tmp_path):
    reordered = Configuration.of("learned", {"features": "length,position"})
    assert reordered.params == Configuration.of("learned").params  # the default, "position,length"
    assert reordered.label == Configuration.of("learned").label
    assert "features=length," in Configuration.of("learned", {"features": " length "}).label
    assert Configuration.of("learned", {"features": ""}).params["features"] == ""
    assert Configuration.of("pmi", {"dtype": "auto", "device": "cpu"}).params["dtype"] in (
        "float32",
        "bfloat16",
    )
    fusion = Configuration.of("fusion", {"rankers": "tfidf,bm25"})
    assert [b["ranker"] for b in fusion.params["rankers"]] == ["bm25", "tfidf"]
    assert fusion.params == Configuration.of("fusion", {"rankers": "bm25,tfidf"}).params
    assert [b.label for b in fusion.bases] == ["bm25", "tfidf"]
    assert fusion.bases[0].params == Configuration.of("bm25").params  # every parameter, defaults included
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(_PROMPT)
    pinned = Configuration.of("llm_judge", {"template": str(prompt)}).params["template"]
    assert pinned.startswith(f"{prompt}#sha256=")
    prompt.write_text(_PROMPT + "Answer with a number.\n")  # other contents: another configuration
    assert Configuration.of("llm_judge", {"template": str(prompt)}).params["template"] != pinned
    with pytest.raises(ParameterError, match="has changed since these scores were computed"):
        create_ranker("llm_judge", template=pinned)


def test_labels_and_keys_never_build_a_ranker(monkeypatch):
    def refuse(cls, *args, **kwargs):
        raise AssertionError(f"{cls.__name__} was instantiated")

    monkeypatch.setattr(Ranker, "__new__", refuse)
    learned = Configuration.of("learned", {"rankers": "bm25,tfidf"})
    assert learned.label == "learned(model=logistic, protocol=cross-corpus, rankers=bm25+tfidf)"
    assert learned.protocol.name == "cross-corpus" and [b.ranker for b in learned.bases] == ["bm25", "tfidf"]
    # the key version follows the bases and the training data: other data, other key
    assert learned.key_version("synth_alpha_sys").startswith("1+")
    assert learned.entry_key("synth_alpha_sys", "a") != learned.entry_key("synth_alpha_sys", "b")
    fusion = Configuration.of("fusion", {"rankers": "bm25,tfidf"})
    assert fusion.key_version("synth_alpha_sys") != Configuration.of(
        "fusion", {"rankers": "bm25"}
    ).key_version("synth_alpha_sys")
    assert Configuration.of("random", {"seed": 3}).label == "random(seed=3)"
    with pytest.raises(AssertionError, match="instantiated"):
        create_ranker("random")


SPLIT = "synth_alpha_sys"


def test_string_parameters_reject_control_characters_and_names_are_ascii():
    with pytest.raises(ParameterError, match="control character"):
        Configuration.of("llm_judge", {"template": "x\n| fake | 1.0000 |", "dtype": "float32"})
    with pytest.raises(ParameterError, match="control character"):
        Configuration.of(
            "learned", {"rankers": [{"ranker": "bm25", "params": {}}], "protocol": "kfold\x1b[2J"}
        )
    assert Configuration.of("perplexity_gain", {"template": "Doc: {document}\n\nSum:{summary}"}).params[
        "template"
    ]

    class Homoglyph(Ranker):
        name = "bм25"

        def score(self, pair):
            return [0.0] * pair.n_sentences

    with pytest.raises(TypeError, match="must match"):
        register(Homoglyph)


def test_minus_zero_and_zero_are_one_configuration():
    assert Configuration.of("bm25", {"k1": "-0.0"}).entry_key(SPLIT, "x") == Configuration.of(
        "bm25", {"k1": 0}
    ).entry_key(SPLIT, "x")


def test_trained_rankers_with_bad_protocol_arguments_fail_before_training():
    with pytest.raises((RankerError, ParameterError)):
        Configuration.of("learned", {"folds": 1})
