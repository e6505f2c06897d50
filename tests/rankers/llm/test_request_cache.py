"""The request cache (sourcesum.rankers.llm.request_cache): persists and merges, and lives in the
workspace."""

from __future__ import annotations

import pytest
from sourcesum.errors import RankerError, SourceSumError
from sourcesum.rankers import create_ranker
from sourcesum.rankers.llm.request_cache import RequestCache, request_key
from support.judge import DOC, SUMMARY
from support.pairs import make_pair


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
