"""WiCE (``sourcesum.data.wice``): the parser on small inline files, the error a missing copy
gives, and (``real_data``: ``$SOURCESUM_WICE_DIR`` or ``data/wice``) the real splits: sizes,
candidates, relevance of hand-checked claims, undefined claims, clusters, the CLI, and the
evaluation of the longest candidate list.

The real-data tests skip when the WiCE files have no local copy (or the SourceSum data, which
tests/conftest.py checks for every ``real_data`` test), and fail under ``SOURCESUM_REQUIRE_DATA=1``.
"""

from __future__ import annotations

import json
import statistics
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from sourcesum import paths
from sourcesum.cli import main
from sourcesum.data import dataset, datasets, load_split, manifest
from sourcesum.data.wice import DEV_FILE, TEST_FILE, parse_wice_lines
from sourcesum.errors import DataError
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import parse_measures
from sourcesum.util.hashing import sha256_bytes
from support.data import dataset_missing, skip_or_fail_without


@pytest.fixture(autouse=True)
def _needs_wice(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("real_data") is not None:
        skip_or_fail_without(dataset_missing("wice", "SOURCESUM_WICE_DIR"))


def _line(claim_id: str, evidence: list[str], sets: list[list[int]], label: str = "supported") -> str:
    return json.dumps(
        {
            "label": label,
            "supporting_sentences": sets,
            "claim": f"claim {claim_id}",
            "evidence": evidence,
            "meta": {"id": claim_id},
        }
    )


# -- the parser on inline files ---------------------------------------------------------------------


def test_candidates_are_the_evidence_as_is_and_sets_count_as_listed():
    page = ["(meta data) TITLE: A page", "", "First.", "Second.", "Third."]
    payload = "\n".join(
        [
            _line("c1", page, [[2, 3], [3], [3]]),  # a set listed twice counts twice
            _line("c2", page, [[]], label="not_supported"),  # no supporting sentence
            _line("c3", ["Other page."], [[], [0]], label="not_supported"),  # label ignored
        ]
    ).encode()
    parsed = parse_wice_lines(payload, "wice_test", Path("x.jsonl"))
    first, second, third = parsed.pairs
    assert first.sentences == tuple(page) and first.sentences[1] == ""  # empty candidate kept
    assert first.summary == "claim c1" and first.document == "\n".join(page) and first.query == ""
    assert parsed.judgments[0].graded.tolist() == [0, 0, 1, 3, 0]
    assert parsed.judgments[0].soft.tolist() == [0, 0, 1 / 3, 1, 0]
    assert parsed.judgments[1].graded.tolist() == [0] * 5
    assert parsed.judgments[2].graded.tolist() == [1] and parsed.judgments[2].soft.tolist() == [1]
    # the cluster is the cited page: the same evidence, the same cluster
    assert parsed.clusters[0] == parsed.clusters[1] != parsed.clusters[2]
    assert first.document_key == second.document_key


@pytest.mark.parametrize(
    "line,message",
    [
        (_line("c1", ["a"], [[1]]), r"x.jsonl:1: pair c1: supporting sentence 1 is not one of its 1"),
        (_line("c1", [], [[]]), r"x.jsonl:1: pair c1: 'evidence' is not a non-empty list"),
        (
            json.dumps({"claim": "c", "evidence": ["a"], "supporting_sentences": [[]]}),
            r"x.jsonl:1: no meta.id",
        ),
        ("{not json", r"x.jsonl:1: not a JSON object"),
    ],
)
def test_malformed_lines_name_the_file_line_and_pair(line, message):
    with pytest.raises(DataError, match=message):
        parse_wice_lines(line.encode(), "wice_test", Path("x.jsonl"))


def test_the_manifest_pins_both_files_by_commit_and_sha256():
    entry = manifest()["sources"]["wice"]
    assert entry["repository"] == "ryokamoi/wice"
    assert entry["commit"] == "ddeb6c183665e2a20c5f03c5aa07f03888b9870f"
    assert set(entry["files"]) == {TEST_FILE, DEV_FILE}
    info = dataset("wice").pinned_files(dataset("wice").split_spec("wice_test"))[0]
    assert info.url == (
        "https://raw.githubusercontent.com/ryokamoi/wice/ddeb6c183665e2a20c5f03c5aa07f03888b9870f/"
        + TEST_FILE
    )
    assert info.env_var == "SOURCESUM_WICE_DIR" and info.download_dir == paths.DATA_ROOT / "wice"


def _no_download(*args, **kwargs):
    raise urllib.error.URLError("no network in this test")


def test_a_missing_copy_is_one_error_line_naming_the_file_and_the_variable(
    tmp_path, monkeypatch, capsys, scores_dir
):
    monkeypatch.setattr(datasets, "_LOADED", {})
    monkeypatch.setattr(urllib.request, "urlopen", _no_download)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("SOURCESUM_WICE_DIR", str(empty))
    assert main(["run", "--ranker", "bm25", "--split", "wice_test", "--no-progress"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert f"SOURCESUM_WICE_DIR={empty} has no {TEST_FILE}" in err[0]
    # unset, with no data/wice copy and no network: the download fails, naming both again
    monkeypatch.delenv("SOURCESUM_WICE_DIR")
    monkeypatch.setattr(paths, "DATA_ROOT", tmp_path / "data")
    assert main(["run", "--ranker", "bm25", "--split", "wice_test", "--no-progress"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: cannot download file {TEST_FILE} (split wice_test) ")
    assert "set SOURCESUM_WICE_DIR to a folder holding" in err[0]


# -- the real data -------------------------------------------------------------------------------


@pytest.mark.real_data
@pytest.mark.parametrize(
    "name,pairs,median,longest,empty,titled,undefined,pages",
    [("wice_test", 358, 77, 2417, 10, 358, 30, 355), ("wice_dev", 349, 83, 1131, 12, 347, 30, 349)],
)
def test_real_splits_sizes_candidates_undefined_and_clusters(
    name, pairs, median, longest, empty, titled, undefined, pages
):
    split = load_split(name)
    spec = dataset("wice").split_spec(name)
    assert len(split) == pairs == spec.pairs
    assert split.sha256 == manifest()["sources"]["wice"]["files"][spec.files[0]]["sha256"]
    assert sha256_bytes(split.path.read_bytes()) == split.sha256
    sizes = [p.n_sentences for p in split]
    assert statistics.median(sizes) == median and max(sizes) == longest
    assert sum(s == "" for p in split for s in p.sentences) == empty
    # the page's meta data lines are candidates too (two dev pages start otherwise)
    assert sum(p.sentences[0].startswith("(meta data) TITLE:") for p in split) == titled
    assert sum(1 for p in split if split.binary(p.id).sum() == 0) == undefined
    assert len(set(split.clusters)) == pages
    assert len({p.document_key for p in split}) == pages  # one page, one document
    assert all(p.corpus == "wice" and p.query == "" for p in split)


@pytest.mark.real_data
def test_hand_checked_claims():
    split = load_split("wice_test")
    # line 1: one supporting set, indices read off the file
    pair = split.by_id["test00561"]
    assert pair.n_sentences == 43
    assert pair.sentences[0] == "(meta data) TITLE: Irene Hervey - Hollywood Star Walk - Los Angeles Times"
    assert pair.sentences[5] == "July 11, 1909" and pair.summary.startswith("Irene Hervey (born Beulah")
    assert np.flatnonzero(split.graded("test00561")).tolist() == [5, 6, 7, 8, 11, 19, 20, 21, 25]
    assert set(split.graded("test00561").tolist()) == {0.0, 1.0}
    # five sets: [[49, 50], [1, 49, 50], [1, 49, 50], [38, 39, 49, 50], [1, 38, 39, 49, 50]]
    pair = split.by_id["test00965"]
    assert pair.sentences[0] == "(meta data) TITLE: " and pair.sentences[2] == ""
    graded = split.graded("test00965")
    assert {i: graded[i] for i in np.flatnonzero(graded)} == {1: 3, 38: 2, 39: 2, 49: 5, 50: 5}
    assert split.judgment("test00965").soft[49] == 1.0 and split.judgment("test00965").soft[1] == 0.6
    # 'not_supported' with a set [[], [9]]: relevance comes from the sets alone
    assert np.flatnonzero(split.graded("test04499")).tolist() == [9]
    assert split.by_id["test04499"].sentences[9].startswith("On August 31, 2011, an exchange program")
    # [[]]: no relevant sentence
    assert split.graded("test02384").sum() == 0 and split.by_id["test02384"].n_sentences == 103
    # 130 sets, one sentence in 128 of them (the largest gain)
    assert split.graded("test01176").max() == 128


@pytest.mark.real_data
def test_the_longest_candidate_list_evaluates_in_milliseconds():
    split = load_split("wice_test").subset(["test03082"])
    assert split.pairs[0].n_sentences == 2417
    scores = {"test03082": np.random.default_rng(0).random(2417).tolist()}
    measures = parse_measures("nDCG,AP,nDCG@10,P@5,R@10,RR,Spearman")
    evaluate_split(split, scores, "random", measures)  # warm the qrels
    start = time.perf_counter()
    evaluation = evaluate_split(split, scores, "random", measures)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"{elapsed:.3f} s"  # about 15 ms on a busy 2-core machine
    assert all(np.isfinite(evaluation.values(m)).all() for m in measures)
    oracle = {"test03082": split.graded("test03082").tolist()}
    summary = evaluate_split(split, oracle, "oracle").summary()
    assert summary["ndcg"] == pytest.approx(1.0) and summary["map"] == 1.0


@pytest.mark.real_data
def test_list_shows_wice_and_bm25_runs_with_undefined_claims_counted(capsys, scores_dir):
    assert main(["list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    datasets_ = {d["name"]: d for d in listing["datasets"]}
    assert datasets_["wice"]["board_splits"] == ["wice_test"]
    assert [s["name"] for s in datasets_["wice"]["splits"]] == ["wice_test", "wice_dev"]
    assert datasets_["wice"]["sources"][0]["env_var"] == "SOURCESUM_WICE_DIR"
    code = main(
        ["run", "--ranker", "bm25", "--split", "wice_test", "--limit", "5", "--json", "--no-progress"]
    )
    out = capsys.readouterr().out
    assert code == 0
    (result,) = json.loads(out)["results"]
    assert result["split"] == "wice_test" and result["pairs"] == 5
    assert 0 < result["ndcg"] <= 1 and 0 < result["map"] <= 1
    # the claims with no supporting sentence: undefined, counted (all splits' pairs)
    split = load_split("wice_test")
    undefined = [p.id for p in split if split.graded(p.id).sum() == 0]
    chosen = ",".join([*undefined[:2], "test00561"])
    code = main(
        ["run", "--ranker", "bm25", "--split", "wice_test", "--pairs", chosen, "--json", "--no-progress"]
    )
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert code == 0 and result["undefined"] == {"ndcg": 2, "map": 2}
    assert result["undefined_reasons"]["ndcg"] == {"no relevant sentence": 2}
