"""Servers for the tests: a real OpenAI-compatible server (llama-cpp-python serving a GGUF on
127.0.0.1; the one way to start one, :func:`start_llama_server`), a fault-injecting proxy to put
between it and the client, and scripted stand-ins (no model) answering chosen bytes."""

from __future__ import annotations

import http.client
import itertools
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MODEL_ALIAS = "SmolLM2-135M-Instruct"


REQUIRED = bool(os.environ.get("CI")) or os.environ.get("SOURCESUM_REQUIRE_LLM_SERVER", "") not in ("", "0")
"""The real-server tests must run here (.ci/run): a missing server fails them instead of
skipping them."""


def need_llm_server(*modules: str) -> None:
    """Skip the calling test (fail it where :data:`REQUIRED`) unless llama-cpp-python's server and
    ``modules`` import: one reason, which ``pytest -ra`` reports once for the group (support/skips.py)."""
    import importlib

    missing = []
    for name in ("llama_cpp.server", "openai", *modules):
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name.partition(".")[0])
    if not missing:
        return
    import pytest

    reason = (
        f"real llama.cpp server tests: {', '.join(missing)} not installed (bash scripts/setup.sh "
        "--extras all adds the llm-server extra, compiling llama.cpp: 8 to 30 minutes on 2 cores)"
    )
    if REQUIRED:
        pytest.fail(f"{reason}; required here: $CI or $SOURCESUM_REQUIRE_LLM_SERVER is set")
    from support.skips import skip_group

    skip_group(reason, __file__)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    process: subprocess.Popen
    base_url: str
    log: Path
    start_seconds: float

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


FAST_ECHO = r"""
import builtins, numpy
import llama_cpp.llama as _llama

TOP = 20

def _sorted(items, *, key=None, reverse=False):
    # llama-cpp-python sorts the whole vocabulary in Python for every position of an echoed
    # prompt (sorted(zip(logprobs, range(n_vocab)), reverse=True), 32 ms a token) and keeps the
    # first `logprobs` entries: the same entries (ties included) from numpy, for logprobs <= TOP.
    if key is None and reverse and type(items) is zip:
        try:
            _, (values, ids) = items.__reduce__()
            _, (array,), at = values.__reduce__()
            _, (span,), at_ids = ids.__reduce__()
        except Exception:
            return builtins.sorted(items, reverse=True)
        array = numpy.asarray(array)
        if at == 0 and at_ids == 0 and array.ndim == 1 and span == range(len(array)) and len(array) > TOP:
            floor = numpy.partition(array, len(array) - TOP)[len(array) - TOP]
            chosen = numpy.nonzero(array >= floor)[0]
            return builtins.sorted(((array[i], int(i)) for i in chosen), reverse=True)
        return builtins.sorted(zip(array, span), reverse=True)
    return builtins.sorted(items, key=key, reverse=reverse)

_llama.sorted = _sorted
import runpy
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""
"""The llama-cpp-python server with its per-token sort of the vocabulary done by numpy (see the
comment): the same responses, byte for byte, as long as requests ask for at most 20 logprobs
(tests/rankers/lm/test_server.py checks one against the unpatched server)."""


def start_llama_server(
    gguf: Path, log: Path, *, f32_cache: bool = False, fast_echo: bool = False, timeout: float = 300.0
) -> Server:
    """llama-cpp-python's server of ``gguf`` on a free port of 127.0.0.1; raises RuntimeError
    (with the log's tail) when it does not answer ``/v1/models`` within ``timeout`` seconds. One
    thread: the server segfaults on its first completion otherwise (measured); ``--logits_all``
    is needed for logprobs.

    ``f32_cache``: a float32 KV cache (``--type_k 0 --type_v 0``; llama.cpp's default float16
    cache moves prompt log-probs by up to 5e-3), for the F32 GGUF the LM rankers' server tests
    compare with the local engine. ``fast_echo``: the server run through :data:`FAST_ECHO`,
    its per-token sort of the vocabulary done by numpy (the same responses)."""
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    launcher = ["-c", FAST_ECHO] if fast_echo else ["-m", "llama_cpp.server"]
    command = [sys.executable, *launcher, "--model", str(gguf), "--model_alias", MODEL_ALIAS]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_threads_batch", "1"]
    command += ["--logits_all", "true", "--n_ctx", "2048"]
    if f32_cache:
        command += ["--type_k", "0", "--type_v", "0"]
    command += ["--verbose", "false"]
    start = time.monotonic()
    handle = open(log, "wb")
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}/v1"
    while time.monotonic() - start < timeout:
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                if response.status == 200:
                    return Server(process, base_url, log, time.monotonic() - start)
        except OSError:
            time.sleep(0.5)
    process.kill()
    process.wait()
    tail = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"llama-cpp-python server did not start (exit {process.returncode}): {tail}")


FAULTS = ("429", "500", "timeout", "malformed", "truncated")
INVALID = ("positive", "mass", "nan")
"""Impossible values the proxy writes into a forwarded chat completion's first position."""


@dataclass
class Proxy:
    """Forwards POSTs to ``upstream``; the n-th request gets ``plan(n)``: ``ok`` (forward),
    ``429`` / ``500`` / ``400`` / ``401`` (answered by the proxy, not forwarded), ``timeout`` (no answer
    for ``hang`` seconds, not forwarded), ``malformed`` (forwarded, then the body is replaced
    by JSON without choices), ``truncated`` (forwarded, body cut in half), ``strip`` (forwarded,
    logprobs removed), and in chat completions' first position (:data:`INVALID`): ``positive`` (a
    candidate's logprob set to 0.5), ``mass`` (every candidate's to log 0.5, so they sum above 1),
    ``nan`` (a candidate's to NaN)."""

    upstream: str
    plan: object = lambda n: "ok"
    hang: float = 3.0
    separate_repeats: bool = False
    """Forward one request at a time, and put a one-token request between two identical ones:
    llama-cpp-python re-evaluates only the last token of a prompt equal to the previous one,
    and its logprobs then differ from a full evaluation (measured: up to 0.15)."""
    counts: dict[str, int] = field(default_factory=dict)
    forwarded: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._n = itertools.count()
        self._lock = threading.Lock()
        self._upstream_lock = threading.Lock()
        self._last: bytes | None = None
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._reply(*proxy._forward("GET", self.path, b""))

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with proxy._lock:
                    n = next(proxy._n)
                fault = proxy.plan(n)
                with proxy._lock:
                    proxy.counts[fault] = proxy.counts.get(fault, 0) + 1
                if fault in ("429", "500", "400", "401"):
                    payload = json.dumps(
                        {"error": {"message": f"injected {fault}", "type": "injected"}}
                    ).encode()
                    headers = {"Retry-After": "0"} if fault == "429" else {}
                    return self._reply(int(fault), payload, headers)
                if fault == "timeout":
                    time.sleep(proxy.hang)
                    self.close_connection = True
                    return
                status, payload, _ = proxy._forward("POST", self.path, body)
                with proxy._lock:
                    proxy.forwarded.append(body.decode())
                if fault == "malformed":
                    payload = json.dumps({"object": "chat.completion", "note": "no choices"}).encode()
                elif fault == "truncated":
                    payload = payload[: len(payload) // 2]
                elif fault == "strip":
                    data = json.loads(payload)
                    for choice in data.get("choices", []):
                        choice["logprobs"] = None
                    payload = json.dumps(data).encode()
                elif fault in INVALID:
                    data = json.loads(payload)
                    candidates = data["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
                    if fault == "mass":
                        for candidate in candidates:
                            candidate["logprob"] = math.log(0.5)
                    else:
                        candidates[-1]["logprob"] = 0.5 if fault == "positive" else float("nan")
                    payload = json.dumps(data).encode()
                self._reply(status, payload)

            def _reply(self, status: int, payload: bytes, headers: dict | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def _forward(self, method: str, path: str, body: bytes) -> tuple[int, bytes, dict]:
        if not self.separate_repeats or method != "POST":
            return self._send(method, path, body)
        with self._upstream_lock:
            if body == self._last:
                separator = {"model": MODEL_ALIAS, "prompt": "\n", "max_tokens": 1, "temperature": 0}
                self._send("POST", "/v1/completions", json.dumps(separator).encode())
            self._last = body
            return self._send(method, path, body)

    def _send(self, method: str, path: str, body: bytes) -> tuple[int, bytes, dict]:
        target = self.upstream.split("//", 1)[1].split("/", 1)[0]
        host, port = target.split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=300)
        try:
            connection.request(method, path, body=body or None, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, response.read(), dict(response.getheaders())
        finally:
            connection.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- scripted stand-ins (no model): the real openai client against chosen bytes ------------------


def chat_completion(
    text: str,
    positions: list[tuple[str, list[tuple[str, float]]]] | None = None,
    model: str = "fake-served-model",
    usage: tuple[object, object] = (10, 1),
) -> dict:
    """A ``/chat/completions`` response body: ``positions`` are ``(greedy token, [(candidate,
    logprob), ...])``; the greedy token's own logprob is its candidate's (else -0.1)."""
    logprobs = None
    if positions is not None:
        content = []
        for token, candidates in positions:
            own = dict(candidates).get(token, -0.1)
            content.append(
                {
                    "token": token,
                    "logprob": own,
                    "bytes": None,
                    "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in candidates],
                }
            )
        logprobs = {"content": content}
    return {
        "id": "fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
                "logprobs": logprobs,
            }
        ],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": 0},
    }


class FakeServer:
    """An OpenAI-compatible endpoint on 127.0.0.1 whose ``n``-th POST gets ``answer(n, body)``:
    a dict (sent as JSON, NaN and Infinity written as Python does) or bytes (sent as they are).
    ``GET /v1/models`` lists ``models``. ``posts`` holds the request bodies, ``gets`` the GET
    paths, in arrival order."""

    def __init__(self, answer, models: tuple[str, ...] = ("fake-model",)) -> None:
        self.answer, self.models = answer, models
        self.posts: list[dict] = []
        self.gets: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                with server._lock:
                    server.gets.append(self.path)
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]
                self._reply(json.dumps({"object": "list", "data": data}).encode())

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with server._lock:
                    n = len(server.posts)
                    server.posts.append(body)
                payload = server.answer(n, body)
                self._reply(payload if isinstance(payload, bytes) else json.dumps(payload).encode())

            def _reply(self, payload: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class StalledServer:
    """Accepts connections and reads requests, never answers: ``posts`` counts the POST requests
    received (each a new connection: a request that never got an answer is never followed by
    another on its connection), with ``times`` their arrival (``time.monotonic()``)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.times: list[float] = []
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def posts(self) -> int:
        with self._lock:
            return len(self.times)

    def _accept(self) -> None:
        while not self._closed:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(connection)
            threading.Thread(target=self._read, args=(connection,), daemon=True).start()

    def _read(self, connection: socket.socket) -> None:
        seen, counted = b"", 0
        while True:
            try:
                chunk = connection.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            seen += chunk
            found = seen.count(b"POST /v1/")
            with self._lock:
                self.times.extend([time.monotonic()] * (found - counted))
            counted = found

    def close(self) -> None:
        self._closed = True
        self.sock.close()
        with self._lock:
            for connection in self._connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                connection.close()
