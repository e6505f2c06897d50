"""llm_judge against scripted OpenAI-compatible servers (sourcesum.rankers.llm.backends.openai_compat;
the real ``openai`` client, chosen bytes, no model): a server rating read exactly, impossible
log-probabilities retried and never cached, an old cache's invalid responses requested again, a
pair with no rated sentence failing, an interruption stopping every request and retry at once,
and the server-reported model recorded as provenance.

Each test judges synthetic pairs with a hand-written prompt (:data:`TEMPLATE`), so no SourceSum
data is needed; the servers run on 127.0.0.1 (tests/support/servers.py)."""

from __future__ import annotations

import _thread
import importlib.util
import json
import math
import signal
import threading
import time
from pathlib import Path

import pytest
from sourcesum.data import load_split
from sourcesum.errors import RankerError
from sourcesum.rankers import create_ranker
from sourcesum.rankers.llm.backends.openai_compat import record_problem, server_rating
from sourcesum.rankers.llm.request_cache import RequestCache, request_key
from sourcesum.rankers.llm.scale import Scale
from sourcesum.runner.configs import Configuration
from support.pairs import make_pair
from support.servers import FakeServer, StalledServer, chat_completion

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("openai") is None, reason="the openai client is not installed (the llm extra)"
)


TEMPLATE = (
    "Rate from {lo} to {hi} how much the sentence contributes to the summary.\n\n"
    "Summary: {summary}\nSentence: {sentence}\nRating: "
)


SERVED = "fake-served-model"
"""The model id the scripted server reports on its responses."""


DOC = [
    "The council voted to build a bridge over the river.",
    "It rained all week.",
    "The bridge will cost forty million dollars.",
    "Residents were asked for their views.",
]


SUMMARY = "A new bridge costing forty million dollars was approved."


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("template") / "pointwise.txt"
    path.write_text(TEMPLATE)
    return str(path)


def sentence_of(body: dict) -> str:
    return body["messages"][0]["content"].split("Sentence: ")[1].split("\nRating")[0]


def rating_positions(sentence: str) -> list:
    """A valid distribution that depends on the sentence: two digits and some prose."""
    d = len(sentence) % 10
    return [(str(d), [(str(d), math.log(0.6)), (str((d + 3) % 10), math.log(0.3)), ("The", math.log(0.05))])]


def valid(n: int, body: dict) -> dict:
    sentence = sentence_of(body)
    return chat_completion(str(len(sentence) % 10), rating_positions(sentence), model=SERVED)


def spoiled(kind: str, body: dict) -> dict | bytes:
    """The valid response with one impossible value of ``kind``."""
    response = valid(0, body)
    candidates = response["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    if kind == "positive":  # a log-probability above 0: a probability above 1
        candidates[1]["logprob"] = 0.7
    elif kind == "mass":  # each one a probability, together above 1
        candidates[0]["logprob"] = candidates[1]["logprob"] = math.log(0.6)
    elif kind == "chosen":  # the answer's own token
        response["choices"][0]["logprobs"]["content"][0]["logprob"] = 2.0
    elif kind == "nan":
        candidates[0]["logprob"] = float("nan")  # written as NaN, which Python's JSON reads
    elif kind == "overflow":  # parses as inf (exp() of it raised OverflowError before)
        candidates[0]["logprob"] = "@"
        return json.dumps(response).replace('"@"', "1e400").encode()
    elif kind == "usage":
        response["usage"]["prompt_tokens"] = -3
    else:
        raise AssertionError(kind)
    return response


KINDS = ("positive", "mass", "chosen", "nan", "overflow", "usage")


def judge(base_url: str, workspace: Path, template: str, **params):
    options = {
        "backend": "openai",
        "base_url": base_url,
        "model": "fake-model",
        "template": template,
        "timeout": 5.0,
        "backoff": 0.0,
        "max_retries": 2,
        "concurrency": 2,
        **params,
    }
    ranker = create_ranker("llm_judge", **options)
    ranker.use_workspace(workspace)
    return ranker


def cached_records(workspace: Path) -> list:
    folder = workspace / "llm_judge" / "requests"
    return [r for shard in sorted(folder.glob("*.json")) for r in json.loads(shard.read_text()).values()]


@pytest.fixture
def clean(template, tmp_path):
    """Scores of the pair from a server that answers every request validly."""
    server = FakeServer(valid)
    try:
        return judge(server.base_url, tmp_path / "clean", template).score_batch([make_pair(DOC, SUMMARY)])
    finally:
        server.close()


# -- 1 and 3: impossible values are a server error, checked before anything is stored ----------


def test_the_check_accepts_what_a_real_server_sends():
    assert record_problem(chat_record := {"text": "7", "positions": None, "usage": _usage()}) is None
    rounding = {"text": "7", "positions": [["7", [["7", 5e-5], ["3", -20.0]]]], "usage": _usage()}
    assert record_problem(rounding) is None  # float32 rounding of a near-certain token
    minus_inf = {"text": "7", "positions": [["7", [["7", -0.1], ["x", -math.inf]]]], "usage": _usage()}
    assert record_problem(minus_inf) is None  # probability 0
    assert record_problem({**chat_record, "model": 3}) is not None
    assert "sum to" in record_problem({**rounding, "positions": [["7", [["7", -0.1], ["7", -0.1]]]]})


def _usage() -> dict:
    return {"prompt_tokens": 10, "completion_tokens": 1}


@pytest.mark.parametrize("kind", KINDS)
def test_impossible_values_are_retried_and_never_cached(kind, template, clean, tmp_path):
    """Every request's first answer is spoiled, its retry valid: the scores equal a clean run's,
    each spoiled answer is counted as a retry, and the cache holds only the valid answers."""
    seen: set[str] = set()

    def answer(n: int, body: dict) -> dict | bytes:
        sentence = sentence_of(body)
        if sentence in seen:
            return valid(n, body)
        seen.add(sentence)
        return spoiled(kind, body)

    server = FakeServer(answer)
    try:
        ranker = judge(server.base_url, tmp_path / "w", template)
        scores = ranker.score_batch([make_pair(DOC, SUMMARY)])
    finally:
        server.close()
    assert scores == clean
    report = ranker.report()
    assert report["retries_invalid"] == len(DOC) and report["requests"] == len(DOC), report
    assert len(server.posts) == 2 * len(DOC)
    records = cached_records(tmp_path / "w")
    assert len(records) == len(DOC) and all(record_problem(r) is None for r in records)


@pytest.mark.parametrize("kind", KINDS)
def test_a_server_that_keeps_sending_impossible_values_fails_naming_the_request(kind, template, tmp_path):
    server = FakeServer(lambda n, body: spoiled(kind, body))
    pair = make_pair(DOC, SUMMARY, pair_id="hand__7")
    try:
        ranker = judge(server.base_url, tmp_path / "w", template, concurrency=1)
        with pytest.raises(RankerError) as caught:
            ranker.score_batch([pair])
    finally:
        server.close()
    message = str(caught.value)
    assert f"{server.base_url}/chat/completions" in message and "pair hand__7 sentence 1" in message
    assert "after 3 attempts" in message and "(invalid)" in message, message
    # the first request used up its retries; the run stopped there, and nothing was cached
    assert len(server.posts) == 3 and ranker.report()["retries_invalid"] == 3
    assert cached_records(tmp_path / "w") == []


def test_the_cli_fails_with_one_line_and_stores_nothing(template, scores_dir, capsys):
    from sourcesum.cli import main

    server = FakeServer(lambda n, body: spoiled("positive", body))
    try:
        code = main(_run_args(server.base_url, template, "llm_judge.max_retries=1"))
    finally:
        server.close()
    err = capsys.readouterr().err
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert "giving up on the request for pair alpha__" in errors[0] and "> 0" in errors[0]
    assert not list((scores_dir / "llm_judge").glob("*.json"))  # no entry, not even a partial one
    assert cached_records(scores_dir) == []


def _run_args(base_url: str, template: str, *params: str) -> list[str]:
    args = ["run", "--ranker", "llm_judge", "--split", "synth_alpha_sys", "--no-progress"]
    for param in (
        "llm_judge.backend=openai",
        f"llm_judge.base_url={base_url}",
        "llm_judge.model=fake-model",
        f"llm_judge.template={template}",
        "llm_judge.backoff=0",
        *params,
    ):
        args += ["-p", param]
    return args


@pytest.mark.parametrize("value", ["NaN", "Infinity", "800.0"])
def test_an_invalid_cached_response_is_requested_again(value, template, clean, tmp_path):
    """A cache written before responses were checked may hold an impossible value (NaN, an
    overflow, a positive logprob whose exp() overflows): that response is a miss, requested
    again and replaced, counted once in the report; never a failure on every rerun."""
    workspace = tmp_path / "w"
    server = FakeServer(valid)
    try:
        first = judge(server.base_url, workspace, template)
        backend = first.backend_impl()
        prompt = first.prompts(make_pair(DOC, SUMMARY))[1]
        key = request_key(backend.endpoint, backend.body(prompt, 3, logprobs=True))
        shard = workspace / "llm_judge" / "requests" / f"{key[:3]}.json"
        shard.parent.mkdir(parents=True)
        bad = {"text": "7", "positions": [["7", [["7", "@"]]]], "usage": _usage()}
        shard.write_text(json.dumps({key: bad}).replace('"@"', value))  # as json.dumps writes NaN
        assert record_problem(RequestCache(shard.parent).get(key)) is not None
        scores = first.score_batch([make_pair(DOC, SUMMARY)])
        report = first.report()
        again = judge(server.base_url, workspace, template)
        assert again.score_batch([make_pair(DOC, SUMMARY)]) == clean
    finally:
        server.close()
    assert scores == clean
    assert report["cache_invalid_refetched"] == 1 and report["requests"] == len(DOC), report
    assert len(server.posts) == len(DOC)  # the rerun: every answer from the cache
    assert again.report()["cache_hits"] == len(DOC)
    assert record_problem(RequestCache(shard.parent).get(key)) is None  # replaced


# -- 2: a pair with no rated sentence is an error, not zeros -------------------------------------


def prose(n: int, body: dict) -> dict:
    """No rating: prose only, in the distribution and in the answer."""
    return chat_completion(
        "I cannot say", [("I", [("I", math.log(0.7)), ("The", math.log(0.2))])], model=SERVED
    )


def test_a_pair_with_no_rated_sentence_fails_and_is_not_stored(template, scores_dir, capsys):
    from sourcesum.cli import main

    pairs = load_split("synth_alpha_sys").pairs
    victim = pairs[1]

    def answer(n: int, body: dict) -> dict:
        in_victim = victim.summary in body["messages"][0]["content"]
        return prose(n, body) if in_victim else valid(n, body)

    server = FakeServer(answer)
    try:
        code = main(_run_args(server.base_url, template))
    finally:
        server.close()
    err = capsys.readouterr().err
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    label = Configuration.of(
        "llm_judge",
        {"backend": "openai", "base_url": server.base_url, "model": "fake-model", "template": template},
    ).label
    assert f"ranker {label} failed on pair {victim.id}" in errors[0]
    assert "none of its" in errors[0] and "valid rating" in errors[0]
    for entry in (scores_dir / "llm_judge").glob("*.json"):  # a partial entry, if any: never the victim
        stored = json.loads(entry.read_text())["scores"]
        assert victim.id not in stored and stored
        assert all(len(set(s)) > 1 or len(s) == 1 for s in stored.values())


def test_a_pair_with_some_rated_sentences_keeps_the_lo_fallback(template, tmp_path):
    pair = make_pair(DOC, SUMMARY)

    def answer(n: int, body: dict) -> dict:
        return prose(n, body) if sentence_of(body) == DOC[1] else valid(n, body)

    server = FakeServer(answer)
    try:
        ranker = judge(server.base_url, tmp_path / "w", template)
        [scores] = ranker.score_batch([pair])
    finally:
        server.close()
    assert scores[1] == 0.0 and all(s > 0 for i, s in enumerate(scores) if i != 1)
    report = ranker.report()
    assert report["unrated"] == 1 and report["expected"] == len(DOC) - 1


# -- 4: an interruption stops requests and retries at once ---------------------------------------


@pytest.mark.parametrize("concurrency", [1, 3])
def test_an_interrupt_stops_every_request_and_retry_at_once(concurrency, template, tmp_path):
    """Against a server that never answers (each attempt would time out after 3 s and be
    retried 3 times), Ctrl-C once the first requests are in flight ends the call within 2 s, and
    no request is sent after it: not the queued ones, not the retries of those in flight."""
    stalled = StalledServer()
    pair = make_pair(DOC + ["One more.", "And another."], SUMMARY)
    options = {"timeout": 3.0, "max_retries": 3, "backoff": 0.05, "concurrency": concurrency}
    ranker = judge(stalled.base_url, tmp_path / "w", template, **options)
    interrupted: list[float] = []

    def interrupt() -> None:
        # once the first requests arrived (0.5 s after the call when idle; a loaded machine may
        # take longer to start the workers), or after 5 s, when the count below fails
        deadline = time.monotonic() + 5.0
        while stalled.posts < concurrency and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # what a worker would send next, it has had time to send
        interrupted.append(time.monotonic())
        _thread.interrupt_main()

    timer = threading.Timer(0.3, interrupt)
    # Python's own Ctrl-C handler, as in a terminal: a process started in the background by a
    # shell inherits SIGINT ignored, and interrupt_main() then does nothing
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            ranker.score_batch([pair])
        returned = time.monotonic()
        sent = stalled.posts
        time.sleep(3.5)  # past the first attempts' timeout: a retry would have been sent by now
        after = stalled.posts
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
        stalled.close()
    # within seconds (a second when idle; slack for a loaded machine), never the 3 s x 4 of retries
    assert interrupted and returned - interrupted[0] < 2.0, returned - interrupted[0]
    assert sent == concurrency  # only the first requests were ever in flight
    assert after == sent and all(t < interrupted[0] for t in stalled.times)


# -- 5: provenance -------------------------------------------------------------------------------


def test_provenance_is_the_model_the_server_reported(template, tmp_path):
    server = FakeServer(valid, models=("another-model", "fake-model"))
    try:
        before = judge(server.base_url, tmp_path / "w", template)
        # no response yet: /models, where the configured model is listed
        assert before.provenance() == {"server_model": "fake-model (reported by the server, unverified)"}
        assert len(server.gets) == 1 and server.posts == []
        before.score_batch([make_pair(DOC, SUMMARY)])
        reported = {"server_model": f"{SERVED} (reported by the server, unverified)"}
        assert before.provenance() == reported  # what the responses said
        cached = judge(server.base_url, tmp_path / "w", template)
        cached.score_batch([make_pair(DOC, SUMMARY)])  # answered from the cache: its records say so
        assert cached.provenance() == reported and len(server.gets) == 1
    finally:
        server.close()
    unlisted = FakeServer(valid, models=("a", "b"))
    try:  # several models, none the one asked for: no claim
        assert judge(unlisted.base_url, tmp_path / "x", template).provenance() == {}
    finally:
        unlisted.close()
    # a server that cannot be reached says nothing
    assert judge("http://127.0.0.1:1/v1", tmp_path / "y", template, timeout=1.0).provenance() == {}


def test_the_entry_header_records_the_server_model_and_a_resume_agrees(template, scores_dir, capsys):
    """The runner records the provenance when it creates an entry (before any request: from
    ``/models``) and checks it when it resumes one (then the cached responses say it)."""
    from sourcesum.cli import main

    server = FakeServer(valid, models=(SERVED, "fake-model"))
    try:
        assert main(_run_args(server.base_url, template) + ["--limit", "1"]) == 0
        [entry] = (scores_dir / "llm_judge").glob("*.json")
        header = json.loads(entry.read_text())
        reported = {"server_model": "fake-model (reported by the server, unverified)"}
        assert header["provenance"] == reported and len(header["scores"]) == 1
        assert main(_run_args(server.base_url, template)) == 0  # resumed: the same provenance
    finally:
        server.close()
    header = json.loads(entry.read_text())
    assert header["provenance"] == reported and len(header["scores"]) == 3


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
