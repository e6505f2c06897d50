"""``sourcesum show``: ``--list`` lists pair ids with their split, document and summary; a pair id
or ``--list``, one of them."""

from __future__ import annotations

import json

import pytest
from sourcesum.data import load_split
from support.cli import run_cli


def test_show_list_prints_pair_ids_with_split_document_and_summary(capsys):
    split = load_split("synth_alpha_sys")
    code, out, _ = run_cli(capsys, "show", "--list", split.name, "--width", "80")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["pair", "split", "document", "summary"]
    assert len(lines) == 1 + len(split) and all(len(line) <= 80 for line in lines)
    for line, pair in zip(lines[1:], split.pairs, strict=True):
        assert line.startswith(f"{pair.id}  ") and f"  {split.name}  " in line
        assert (
            " ".join(pair.sentences[0].split())[:10] in line and " ".join(pair.summary.split())[:10] in line
        )
    code, out, _ = run_cli(capsys, "show", "--list", "synthnews", "--json")
    listed = json.loads(out)
    assert code == 0 and listed["schema"] == "sourcesum-pairs/1"
    board = ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref")
    expected = [(p.id, name) for name in board for p in load_split(name).pairs]
    assert [(r["id"], r["split"]) for r in listed["pairs"]] == expected
    first = listed["pairs"][0]
    assert (
        first["summary"] == split.pairs[0].summary and first["first_sentence"] == split.pairs[0].sentences[0]
    )
    assert first["sentences"] == split.pairs[0].n_sentences


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["show"], "show: give a pair id (`sourcesum show --list [SPLIT]` lists them)"),
        (["show", "x__0", "--list", "synth_alpha_sys"], "give a pair id or --list, not both"),
        (["show", "--list", "nosuch"], "unknown split 'nosuch'"),
    ],
)
def test_show_without_or_with_both_is_one_error_line(capsys, argv, fragment):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1
