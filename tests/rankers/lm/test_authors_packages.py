"""``contextcite`` and ``at2`` against the authors' packages (``context-cite``, ``at2``: the
``crosscheck`` extra) on a tiny Llama: on the same model, masks, token ids and training targets,
the packages' own forward passes, aggregation and solver (``context-cite``), feature extractor,
attributor, estimator and loss (``at2``) give the rankers' targets, features, weights and
rankings. The scripts
``scripts/crosscheck_contextcite.py`` and ``scripts/crosscheck_at2.py`` run the same comparison
on SmolLM2-135M and 20 SourceSum pairs (figures on the performance page)."""

from __future__ import annotations

import importlib
import os
import runpy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sourcesum.rankers import create_ranker
from support.models import register_eager
from support.pairs import make_pair
from support.skips import skip_group

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts"
REQUIRED = os.environ.get("SOURCESUM_REQUIRE_AUTHORS_PACKAGES", "") not in ("", "0")
MODEL = "tiny-authors"
DOC = [
    "The council voted to build a bridge over the river.",
    "It rained all week.",
    "The bridge will cost forty million dollars.",
    "A bakery opened downtown.",
    "Officials expect the work to start next spring.",
]
SUMMARIES = ["A bridge was approved.", "Rain fell all week.", "Work on a costly bridge starts in spring."]


def crosscheck(script: str, package: str) -> dict[str, Any]:
    """The functions of ``scripts/<script>``, once ``package`` imports; else skipped (failed
    under ``SOURCESUM_REQUIRE_AUTHORS_PACKAGES=1``, as ``.ci/run`` sets).

    ``context_cite`` (which ``at2`` imports) calls ``nltk.download("punkt_tab")`` when imported;
    offline, NLTK prints the failure to the ``sys.stderr`` its ``download`` bound when NLTK was
    first imported, which is a closed ``capsys`` stream where an earlier test of the process
    imported NLTK under ``capsys``: the import then raised, depending on test order. The
    comparison reads none of NLTK's data, so the download is skipped here."""
    try:
        with pytest.MonkeyPatch.context() as patch:
            try:
                import nltk
            except ImportError:
                pass
            else:
                patch.setattr(nltk, "download", lambda *args, **kwargs: False)
            importlib.import_module(package)
    except ImportError as exc:
        reason = f"the authors' package {package} is not installed (the crosscheck extra): {exc}"
        if REQUIRED:
            pytest.fail(f"{reason}; required here: SOURCESUM_REQUIRE_AUTHORS_PACKAGES is set")
        skip_group(reason, __file__)
    return runpy.run_path(str(SCRIPTS / script), run_name="crosscheck")


@pytest.fixture(scope="module")
def tiny():
    register_eager(MODEL, seed=7)
    return [make_pair(DOC, s, pair_id=f"d__{i}") for i, s in enumerate(SUMMARIES)]


def test_contextcite_equals_the_context_cite_package(tiny):
    """The package's logit-probabilities of the summary under each of the ranker's masks, and
    its ``LassoRegression`` on them, give the ranker's targets and scores."""
    script = crosscheck("crosscheck_contextcite.py", "context_cite")
    ranker = create_ranker("contextcite", model=MODEL, ablations=24, alpha=1e-5, dtype="float32")
    report = script["compare"](ranker, tiny)
    assert report["same_ranking"] == len(tiny), report
    assert report["max_target_diff"] < 1e-4, report
    assert report["max_weight_diff"] < 1e-4 * max(1.0, report["max_abs_weight"]), report
    assert report["max_abs_weight"] > 0, "a lasso that zeroes every weight compares nothing"


def test_at2_equals_the_at2_package(tiny):
    """The package's attention weights (recomputed from hidden states) aggregated as its
    attributor does give the ranker's features; its estimator and Pearson loss under the
    trainer's recipe give the ranker's head weights (up to the loss's 1e-8) and rankings."""
    script = crosscheck("crosscheck_at2.py", "at2")
    ranker = create_ranker("at2", model=MODEL, batch=2, dtype="float32")
    targets = [np.random.default_rng(k).normal(size=len(DOC)) for k in range(len(tiny))]
    report = script["compare"](ranker, tiny, targets, 60)
    assert report["max_feature_diff"] < 1e-6 * report["max_abs_feature"], report
    assert report["max_weight_diff"] < 1e-4 * report["max_abs_weight"], report
    assert report["same_ranking"] == len(tiny), report
