"""llm_judge: scales and the reading rule, the rating tree against brute-force enumeration, the
local backend against naive forward passes (tiny Llama built from a config), prompts, listwise
parsing, counted fallbacks, the CLI report (on a synthetic split), the request cache in the
workspace, and configurations canonicalised without an instance.

The paper's presets (v1, v2, the default template) read its published prompt files: the test
that renders them is ``real_data``; the others use a hand-written template (:data:`TEMPLATE`)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
import torch
from helpers import make_pair, tiny_llama, tiny_tokenizer
from sourcesum.data import load_split
from sourcesum.data.sourcesum import read_prompt
from sourcesum.errors import ParameterError, RankerError, SourceSumError
from sourcesum.rankers import RANKERS, create_ranker
from sourcesum.rankers.llm.backends.local import LocalBackend, candidate_tokens, common_prefix_length
from sourcesum.rankers.llm.backends.openai_compat import server_rating
from sourcesum.rankers.llm.prompts import NATIVE_SCALES, Template, canonical_template, load_template
from sourcesum.rankers.llm.ranker import LLMJudgeRanker, parse_ranking
from sourcesum.rankers.llm.request_cache import RequestCache, request_key
from sourcesum.rankers.llm.scale import Scale
from sourcesum.rankers.llm.scoring import Diagnostics, Dist, Rating, rating_distributions
from sourcesum.rankers.lm.loading import register_loaded
from sourcesum.runner.configs import Configuration

DOC = [
    "The council voted to build a bridge over the river.",
    "It rained all week.",
    "The bridge will cost forty million dollars.",
]
SUMMARY = "A new bridge costing forty million dollars was approved."
TEMPLATE = (
    "Rate from {lo} to {hi} how much the sentence contributes to the summary.\n\n"
    "Summary: {summary}\nSentence: {sentence}\nRating: "
)
"""A pointwise template of the paper's shape (the summary before the sentence), without its text."""


# -- scales and the reading rule -----------------------------------------------------------------


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


# -- the rating tree ---------------------------------------------------------------------------

TOKENS = ["0", "1", "5", "7", "10", "00", " 3", "\n", ".", ".5", "x", " "]


def _toy_dist(path: tuple) -> list[tuple[str, float, str]]:
    """A deterministic pseudo-random next-token distribution over TOKENS for each path."""
    seed = int(hashlib.sha256("|".join(path).encode()).hexdigest()[:8], 16)
    weights = np.random.default_rng(seed).random(len(TOKENS)) ** 3
    weights /= weights.sum()
    return [(t, float(w), t) for t, w in zip(TOKENS, weights, strict=True)]


def _brute_force(scale: Scale, depth: int) -> tuple[dict[str, float], float]:
    """P(rating) by enumerating every token sequence until the reading rule stops."""
    ratings: dict[str, float] = {}
    invalid = 0.0
    stack = [((), "", 1.0)]
    while stack:
        path, text, mass = stack.pop()
        assert len(path) <= depth
        for token, prob, _ in _toy_dist(path):
            read, stopped = scale.extend(text, token, first=not path)
            if stopped:
                if scale.value(read) is None:
                    invalid += mass * prob
                else:
                    ratings[read] = ratings.get(read, 0.0) + mass * prob
            else:
                stack.append((path + (token,), read, mass * prob))
    return ratings, invalid


@pytest.mark.parametrize("spec", ["0-9", "0-100", "1-5", "0-1.00"])
def test_rating_tree_equals_brute_force_enumeration(spec):
    scale = Scale.parse(spec)
    expected, invalid = _brute_force(scale, depth=8)
    [got] = rating_distributions(scale, 1, lambda nodes: [Dist(_toy_dist(p)) for _, p in nodes], min_prob=0.0)
    assert set(got.ratings) == set(expected)
    for key, value in expected.items():
        assert got.ratings[key] == pytest.approx(value, rel=1e-12)
    assert got.invalid == pytest.approx(invalid, rel=1e-12)
    assert got.valid + got.invalid == pytest.approx(1.0)
    mean = sum(p * scale.ratings[r] for r, p in expected.items()) / sum(expected.values())
    assert got.expected(scale) == pytest.approx(mean, rel=1e-12)


def test_pruning_is_counted_and_bounded():
    scale = Scale.parse("0-100")
    oracle = lambda nodes: [Dist(_toy_dist(p)) for _, p in nodes]  # noqa: E731
    [exact] = rating_distributions(scale, 1, oracle, min_prob=0.0)
    [pruned] = rating_distributions(scale, 1, oracle, min_prob=0.05)
    assert pruned.pruned > 0 and pruned.nodes < exact.nodes
    assert pruned.valid + pruned.invalid + pruned.pruned == pytest.approx(1.0)
    bound = pruned.pruned / pruned.valid * 100
    assert abs(pruned.expected(scale) - exact.expected(scale)) <= bound


def test_server_rating_single_token_is_exact_and_multi_token_counts_stand_ins():
    nine = Scale.parse("0-9")
    record = {
        "positions": [
            ["7", [["7", math.log(0.5)], ["3", math.log(0.3)], ["The", math.log(0.2)]]],
            ["\n", [["\n", 0.0]]],
        ]
    }
    rating = server_rating(record, nine, 1e-4)
    assert rating.expected(nine) == pytest.approx((0.5 * 7 + 0.3 * 3) / 0.8)
    assert rating.approximate == 0 and rating.invalid == pytest.approx(0.2)
    hundred = Scale.parse("0-100")
    record = {
        "positions": [
            ["8", [["8", math.log(0.6)], ["9", math.log(0.4)]]],
            ["5", [["5", math.log(0.5)], ["0", math.log(0.5)]]],
            ["\n", [["\n", 0.0]]],
        ]
    }
    rating = server_rating(record, hundred, 0.0)
    # "9" is off the greedy path: it borrows depth 1's candidates (95, 90) and is counted.
    assert rating.ratings == pytest.approx({"85": 0.3, "80": 0.3, "95": 0.2, "90": 0.2})
    assert rating.approximate == pytest.approx(0.4)
    assert server_rating({"positions": None}, hundred, 0.0) is None


def test_diagnostics_count_every_fallback():
    scale, diag = Scale.parse("0-9"), Diagnostics()
    assert diag.score(scale, Rating(ratings={"4": 0.5, "6": 0.5}), None) == 5.0
    assert diag.score(scale, Rating(invalid=1.0), "6 out of 9") == 6.0
    assert diag.score(scale, None, "I think 5") == 0.0  # not a rating by the reading rule
    report = diag.report()
    assert report["expected"] == 1 and report["greedy_fallback"] == 1 and report["unrated"] == 1
    assert report["sentences"] == 3 and report["mean_valid_mass"] == 0.5
    assert diag.rate(scale, Rating(invalid=1.0), "no") is None  # unrated: the ranker decides
    assert diag.report()["unrated"] == 2


def test_a_local_pair_with_no_rated_sentence_is_an_error_not_zeros(monkeypatch, template_file):
    """All sentences unrated: a RankerError naming the ranker and the pair (LO for all would be
    stored as if rated); some rated: LO for the others, as before."""
    ratings = {
        "all": [Rating(invalid=1.0)] * 3,
        "some": [Rating(invalid=1.0), Rating(ratings={"6": 1.0})] * 2,
    }

    def rate(self, prompts, scale, min_prob, pair_id):
        return ratings[pair_id][: len(prompts)]

    monkeypatch.setattr(LocalBackend, "rate", rate)
    ranker = create_ranker(
        "llm_judge", model="tiny-judge", chat=False, device="cpu", template=str(template_file)
    )
    with pytest.raises(RankerError, match=r"llm_judge\(.*\) failed on pair all: none of its 3 sentences"):
        ranker.score_batch([make_pair(DOC, SUMMARY, pair_id="all")])
    assert ranker.report()["unrated"] == 3
    assert ranker.score_batch([make_pair(DOC, SUMMARY, pair_id="some")]) == [[0.0, 6.0, 0.0]]
    assert ranker.report()["unrated"] == 2


def test_local_provenance_is_the_weights_identity(tiny_judge):
    """backend=local records what the LM rankers record for the same model name."""
    from sourcesum.rankers.lm.weights import DEFAULT_LM, weights_identity

    judge = create_ranker("llm_judge", model="tiny-judge", chat=False, device="cpu", mode="listwise")
    assert (
        judge.provenance() == weights_identity("tiny-judge") and "in-memory" in judge.provenance()["weights"]
    )
    default = create_ranker("llm_judge", mode="listwise", device="cpu").provenance()
    assert default == weights_identity(DEFAULT_LM) and "sha256" in default["weights"]


# -- prompts ------------------------------------------------------------------------------------


@pytest.mark.real_data  # the paper's prompt files
def test_presets_render_the_papers_prompts_byte_for_byte():
    for version in ("v1", "v2"):
        template, spec = load_template(version, listwise=False)
        rendered = template.render("SUMMARY", Scale.parse(NATIVE_SCALES[version]), sentence="SENTENCE")
        assert rendered.replace("SUMMARY", "{summary}").replace("SENTENCE", "{sentence}") == read_prompt(
            version
        )
        assert spec == version and "Suhara" in template.source
    template, _ = load_template("v2", listwise=False)
    text = template.render("S {sentence}", Scale.parse("0-9"), sentence="X")
    assert "from 0 to 9,  0 with" in text and "and 9 with" in text and "Summary: S {sentence}\n" in text


def test_user_template_file_is_pinned_by_content(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("Rate {sentence} for {summary} from {lo} to {hi}: ")
    template, spec = load_template(str(path), listwise=False)
    assert spec.startswith(f"{path}#sha256=")
    assert template.render("S", Scale.parse("1-5"), sentence="X") == "Rate X for S from 1 to 5: "
    ranker = create_ranker("llm_judge", template=str(path))
    assert ranker.get_params()["template"] == spec
    path.write_text("Rate {sentence} for {summary}, changed: ")
    with pytest.raises(ParameterError, match="has changed"):
        create_ranker("llm_judge", template=spec)
    (tmp_path / "bad.txt").write_text("no placeholders")
    with pytest.raises(ParameterError, match="needs"):
        create_ranker("llm_judge", template=str(tmp_path / "bad.txt"))
    with pytest.raises(ParameterError, match="does not fit"):
        create_ranker("llm_judge", mode="listwise", template="v2")
    with pytest.raises(ParameterError, match="base_url"):
        create_ranker("llm_judge", backend="openai", template=str(path))


def test_canonicalize_pins_template_files_without_an_instance(tmp_path, monkeypatch):
    """The canonical template (hence label and key) comes from the class: presets and auto by
    name (no prompt file read), a file pinned by the sha256 of its content, ``~`` expanded."""
    path = tmp_path / "t.txt"
    path.write_text(TEMPLATE)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    made = create_ranker("llm_judge", template=str(path)).get_params()

    def no_instances(*args, **kwargs):
        raise AssertionError("llm_judge was instantiated")

    monkeypatch.setattr(LLMJudgeRanker, "__new__", no_instances)
    config = Configuration.of("llm_judge", {"template": str(path)})
    assert config.params == made and config.params["template"] == f"{path}#sha256={digest}"
    assert f"template={path}#sha256={digest}" in config.label
    for name in ("auto", "v1", "v2", "listwise"):  # no prompt file is read: works without data
        assert canonical_template(name) == name
        assert Configuration.of("llm_judge", {"template": name}).params["template"] == name
    monkeypatch.setenv("HOME", str(tmp_path))
    assert canonical_template("~/t.txt") == f"{path}#sha256={digest}"
    assert canonical_template("~/t.txt#sha256=0123") == f"{path}#sha256=0123"  # pinned: as given
    before = config.entry_key("synth_alpha_sys", "0" * 64)
    path.write_text(TEMPLATE + "Answer: ")
    changed = Configuration.of("llm_judge", {"template": str(path)})
    assert changed.params["template"] != config.params["template"]  # new content, new key
    assert changed.entry_key("synth_alpha_sys", "0" * 64) != before
    with pytest.raises(ParameterError, match="not a preset"):
        Configuration.of("llm_judge", {"template": str(tmp_path / "missing.txt")})


def test_parse_ranking():
    assert parse_ranking("[3] > [1] > [2]", 3) == [2, 0, 1]
    assert parse_ranking("3, 3, 7, 1", 3) == [2, 0]
    assert parse_ranking("none of them", 3) == []


# -- the local backend on a tiny model ------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_judge():
    tokenizer = tiny_tokenizer()
    tokenizer.chat_template = (
        "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} {% endfor %}[assistant]"
    )
    model = tiny_llama(tokenizer)
    with torch.no_grad():  # make digit tokens likely, so the rating tree is deep and varied
        digits = candidate_tokens(tokenizer, "0123456789", False)[0]
        model.lm_head.weight[digits] *= 40
    register_loaded("tiny-judge", model, tokenizer)
    return model, tokenizer


def _naive_dist(model, ids, table):
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids])).logits[0, -1]
    return LocalBackend._dist(logits, table)


@pytest.mark.parametrize("chat", [False, True])
@pytest.mark.parametrize("spec", ["0-9", pytest.param("0-100", marks=pytest.mark.slow)])  # 0-100: 101 ratings
def test_local_backend_equals_naive_forward_passes(tiny_judge, chat, spec):
    model, tokenizer = tiny_judge
    scale = Scale.parse(spec)
    backend = LocalBackend("tiny-judge", "cpu", "float32", batch_size=2, chat=chat)
    template = Template(TEMPLATE, "test", listwise=False)
    prompts = [template.render(SUMMARY, scale, sentence=s) for s in DOC]
    got = backend.rate(prompts, scale, 0.0, "hand__0")
    rows = [backend.encode(p) for p in prompts]
    assert 0 < common_prefix_length(rows) < min(len(r) for r in rows)
    tables = {root: candidate_tokens(tokenizer, scale.continuation, root) for root in (True, False)}
    expected = rating_distributions(
        scale,
        len(rows),
        lambda nodes: [_naive_dist(model, rows[i] + list(path), tables[not path]) for i, path in nodes],
        0.0,
    )
    for g, e in zip(got, expected, strict=True):
        assert g.nodes == e.nodes and set(g.ratings) == set(e.ratings)
        for key in e.ratings:
            assert g.ratings[key] == pytest.approx(e.ratings[key], rel=1e-4, abs=1e-9)
        assert g.expected(scale) == pytest.approx(e.expected(scale), rel=1e-5)
    if spec == "0-100":
        assert max(g.nodes for g in got) > 2  # the tree went below the root
    # a second call reuses the previous prefix cache and gives the same distributions
    again = backend.rate(prompts, scale, 0.0, "hand__0")
    for a, g in zip(again, got, strict=True):
        assert a.ratings == pytest.approx(g.ratings, rel=1e-4, abs=1e-9)


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


# -- the request cache --------------------------------------------------------------------------


def test_request_cache_persists_and_merges(tmp_path):
    key_a, key_b = request_key("u", {"a": 1}), request_key("u", {"a": 2})
    assert key_a != key_b and key_a == request_key("u", {"a": 1})
    first, second = RequestCache(tmp_path), RequestCache(tmp_path)
    first.put(key_a, {"text": "7"})
    second.put(key_b, {"text": "8"})  # another writer: merged, not overwritten
    fresh = RequestCache(tmp_path)
    assert fresh.get(key_a) == {"text": "7"} and fresh.get(key_b) == {"text": "8"}
    shard = tmp_path / f"{key_a[:3]}.json"
    shard.write_text("{torn")
    with pytest.raises(SourceSumError, match="request-cache shard"):
        RequestCache(tmp_path).get(key_a)


def test_the_request_cache_lives_in_the_workspace(tmp_path, monkeypatch):
    """Server responses are cached under ``<workspace>/llm_judge/requests``: a judge given the same
    workspace answers from it without a request; another workspace has its own cache."""
    from sourcesum.rankers.llm.backends.openai_compat import OpenAIBackend

    sent = []

    def answer(self, body, label, stop):
        sent.append(body)
        return {"text": "[2] > [1] > [3]", "usage": {"prompt_tokens": 10, "completion_tokens": 5}}

    def judge(workspace):
        ranker = create_ranker(
            "llm_judge", mode="listwise", backend="openai", base_url="http://127.0.0.1:1/v1", max_retries=0
        )
        ranker.use_workspace(workspace)
        return ranker

    monkeypatch.setattr(OpenAIBackend, "_request", answer)
    pair = make_pair(DOC, SUMMARY)
    first = judge(tmp_path / "a")
    assert first.backend_impl().cache.root == tmp_path / "a" / "llm_judge" / "requests"
    assert first.score(pair) == [2.0, 3.0, 1.0] and len(sent) == 1
    assert first.report()["requests"] == 1
    assert [p.name for p in (tmp_path / "a" / "llm_judge" / "requests").iterdir()]  # a shard file

    def refuse(self, body, label, stop):
        raise RankerError("no server here")

    monkeypatch.setattr(OpenAIBackend, "_request", refuse)
    again = judge(tmp_path / "a")
    assert again.score(pair) == [2.0, 3.0, 1.0]  # from the cache: no request
    assert again.report() == {"cache_hits": 1, "pairs": 1, "parsed_full": 1}
    with pytest.raises(RankerError, match="no server here"):
        judge(tmp_path / "b").score(pair)
    # a new workspace means a new backend (the same one keeps it)
    backend = again.backend_impl()
    again.use_workspace(tmp_path / "a")
    assert again.backend_impl() is backend
    again.use_workspace(tmp_path / "b")
    assert again.backend_impl().cache.root == tmp_path / "b" / "llm_judge" / "requests"


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
