"""llm_judge (sourcesum.rankers.llm.ranker): listwise parsing, counted fallbacks (a pair with no
rated sentence is an error), the weights' identity as provenance, the CLI report (on a synthetic
split), the resolved dtype in the key, and batching within the judge's tolerance."""

from __future__ import annotations

import pytest
from sourcesum.data import load_split
from sourcesum.errors import RankerError
from sourcesum.rankers import RANKERS, create_ranker
from sourcesum.rankers.llm.ranker import parse_ranking
from sourcesum.rankers.llm.scoring import Rating
from sourcesum.runner.configs import Configuration
from support.judge import DOC, SUMMARY, TEMPLATE, load_tiny_judge
from support.pairs import make_pair


def test_a_local_pair_with_no_rated_sentence_is_an_error_not_zeros(monkeypatch, template_file):
    """All sentences unrated: a RankerError naming the ranker and the pair (LO for all would be
    stored as if rated); some rated: LO for the others, as before."""
    ratings = {
        "all": [Rating(invalid=1.0)] * 3,
        "some": [Rating(invalid=1.0), Rating(ratings={"6": 1.0})] * 2,
    }

    def rate(self, prompts, scale, min_prob, pair_id):
        return ratings[pair_id][: len(prompts)]

    monkeypatch.setattr("sourcesum.rankers.llm.backends.local.LocalBackend.rate", rate)
    ranker = create_ranker(
        "llm_judge", model="tiny-judge", chat=False, device="cpu", template=str(template_file)
    )
    with pytest.raises(RankerError, match=r"llm_judge\(.*\) failed on pair all: none of its 3 sentences"):
        ranker.score_batch([make_pair(DOC, SUMMARY, pair_id="all")])
    assert ranker.report()["unrated"] == 3
    assert ranker.score_batch([make_pair(DOC, SUMMARY, pair_id="some")]) == [[0.0, 6.0, 0.0]]
    assert ranker.report()["unrated"] == 2


@pytest.fixture(scope="module")
def tiny_judge():
    """(model, tokenizer) of the tiny judge, registered as ``tiny-judge`` (tests/support/judge.py)."""
    return load_tiny_judge()


def test_local_provenance_is_the_weights_identity(tiny_judge):
    """backend=local records what the LM rankers record for the same model name."""
    from sourcesum.rankers.lm.weights import DEFAULT_LM, weights_identity

    judge = create_ranker("llm_judge", model="tiny-judge", chat=False, device="cpu", mode="listwise")
    assert (
        judge.provenance() == weights_identity("tiny-judge") and "in-memory" in judge.provenance()["weights"]
    )
    default = create_ranker("llm_judge", mode="listwise", device="cpu").provenance()
    assert default == weights_identity(DEFAULT_LM) and "sha256" in default["weights"]


def test_parse_ranking():
    assert parse_ranking("[3] > [1] > [2]", 3) == [2, 0, 1]
    assert parse_ranking("3, 3, 7, 1", 3) == [2, 0]
    assert parse_ranking("none of them", 3) == []


@pytest.fixture(scope="module")
def template_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("template") / "pointwise.txt"
    path.write_text(TEMPLATE)
    return path


def test_ranker_scores_report_and_listwise_fallback(tiny_judge, template_file, scores_dir):
    pair = make_pair(DOC, SUMMARY)
    ranker = create_ranker(
        "llm_judge", model="tiny-judge", chat=False, device="cpu", template=str(template_file)
    )
    scores = ranker.score(pair)
    assert len(scores) == 3 and len(set(scores)) == 3 and all(0 <= s <= 9 for s in scores)
    report = ranker.report()
    assert report["sentences"] == 3 and report["expected"] == 3 and 0 < report["mean_valid_mass"] <= 1
    assert ranker.report() == {}  # counters restart after each report
    listwise = create_ranker("llm_judge", mode="listwise", model="tiny-judge", chat=False, device="cpu")
    scores = listwise.score(pair)
    report = listwise.report()
    assert report["pairs"] == 1
    assert sum(report.get(k, 0) for k in ("parsed_full", "parsed_partial", "listwise_fallback")) == 1
    if report.get("listwise_fallback"):
        assert scores == [0.0, 0.0, 0.0]


def test_cli_run_prints_the_report(tiny_judge, template_file, scores_dir, capsys):
    from sourcesum.cli import main

    args = [
        "run",
        "--ranker",
        "llm_judge",
        "-p",
        "llm_judge.model=tiny-judge",
        "-p",
        "llm_judge.chat=false",
        "-p",
        "llm_judge.device=cpu",
        "-p",
        f"llm_judge.template={template_file}",
        "--split",
        "synth_alpha_sys",
        "--no-progress",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    label = Configuration.of(
        "llm_judge", {"model": "tiny-judge", "chat": False, "template": str(template_file)}
    ).label
    assert label.startswith("llm_judge(chat=False, model=tiny-judge, template=")
    assert f"note: {label} in this run: " in out and "unrated=" not in out
    sentences = int(out.split("sentences=")[1].split(",")[0])
    assert sentences == sum(p.n_sentences for p in load_split("synth_alpha_sys"))
    assert main(args) == 0  # cached now: nothing computed, so no report
    assert "note: llm_judge" not in capsys.readouterr().out


@pytest.mark.parametrize("native", [True, False])
def test_local_judge_keys_the_resolved_dtype_never_auto(monkeypatch, native):
    from sourcesum.rankers.lm import dtypes as models

    monkeypatch.setattr(models, "cpu_has_native_bf16", lambda: native)
    expected = "bfloat16" if native else "float32"
    judge = create_ranker("llm_judge", mode="listwise", dtype="auto", device="cpu")
    assert judge.get_params()["dtype"] == expected
    config = Configuration.of("llm_judge", {"mode": "listwise", "dtype": "auto", "device": "cpu"})
    assert config.params == judge.get_params()
    # the default configuration (the paper's v2 prompt), without an instance nor its prompt file
    default = Configuration.of("llm_judge", {"dtype": "auto", "device": "cpu"})
    assert default.params["dtype"] == expected and default.params["template"] == "auto"
    assert ("dtype=bfloat16" in default.label) is native
    served = create_ranker(
        "llm_judge", mode="listwise", backend="openai", base_url="http://127.0.0.1:1/v1", dtype="auto"
    )
    assert served.get_params()["dtype"] == "auto"  # a server picks its own precision
    served_config = Configuration.of(
        "llm_judge", {"backend": "openai", "base_url": "http://127.0.0.1:1/v1", "dtype": "auto"}
    )
    assert served_config.params["dtype"] == "auto"


def test_local_judge_scores_do_not_depend_on_batching_beyond_its_tolerance(tiny_judge, template_file):
    """Pairs scored in one batch (sharing the backend's prefix cache across calls) and one at a
    time, each by a fresh ranker: equal within the declared ``reproduction_tolerance``."""
    pairs = [
        make_pair(DOC, SUMMARY, pair_id="a"),
        make_pair(DOC[::-1], "It rained all week, and the bridge vote went ahead.", pair_id="b"),
        make_pair(DOC[:2], "The council voted.", pair_id="c"),
    ]

    def judge():
        return create_ranker(
            "llm_judge", model="tiny-judge", chat=False, device="cpu", template=str(template_file)
        )

    together = judge().score_batch(pairs)
    alone = [judge().score_batch([pair])[0] for pair in pairs]
    difference = max(
        abs(x - y) for a, b in zip(together, alone, strict=True) for x, y in zip(a, b, strict=True)
    )
    tolerance = RANKERS.get("llm_judge").reproduction_tolerance
    assert difference <= tolerance, difference
