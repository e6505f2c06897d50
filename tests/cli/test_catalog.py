"""``sourcesum list``: every ranker parameter with its choices, default and runtime flag."""

from __future__ import annotations

import json

from support.cli import run_cli


def test_list_shows_every_parameter(capsys):
    code, out, _ = run_cli(capsys, "list", "--json")
    assert code == 0
    rankers = {r["name"]: r for r in json.loads(out)["rankers"]}
    bm25 = {p["name"]: p for p in rankers["bm25"]["parameters"]}
    assert bm25["variant"]["choices"] == ["okapi", "plus", "l"] and bm25["k1"]["default"] == 1.5
    assert {p["name"] for p in rankers["embedding"]["parameters"] if p["runtime"]} == {"device", "batch_size"}
