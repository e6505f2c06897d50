"""QMSum evidence (``sourcesum.data.qmsum``): the manifest pins both repositories, the error a
missing copy gives, and (``real_data``: ``$SOURCESUM_QMSUM_DIR`` or ``data/qmsum``) the real
splits: sizes, the matching report, three hand-checked meetings, clusters and documents, the CLI.

The real-data tests skip when the QMSum files have no local copy (or the SourceSum data, which
tests/conftest.py checks for every ``real_data`` test), and fail under ``SOURCESUM_REQUIRE_DATA=1``."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np
import pytest
from sourcesum import paths
from sourcesum.cli import main
from sourcesum.data import dataset, datasets, load_split, manifest
from sourcesum.data.qmsum import matching_report
from support.data import dataset_missing, skip_or_fail_without


@pytest.fixture(autouse=True)
def _needs_qmsum(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("real_data") is not None:
        skip_or_fail_without(dataset_missing("qmsum", "SOURCESUM_QMSUM_DIR"))


def test_the_manifest_pins_both_repositories_by_commit_and_sha256():
    sources = manifest()["sources"]
    assert sources["qmsum-evidence"]["repository"] == "etri/QMSum_SummaryEvidence"
    assert sources["qmsum-evidence"]["commit"] == "5847d36a12a8b48a69ac7cae4c5c34358cc0e1d3"
    assert sources["qmsum"]["repository"] == "Yale-LILY/QMSum"
    assert sources["qmsum"]["commit"] == "83d7768c1f2b4dfeb091385d3dc7e239b8e5bb7e"
    assert len(sources["qmsum-evidence"]["files"]) == len(sources["qmsum"]["files"]) == 35 + 35 + 161
    qmsum = dataset("qmsum")
    spec = qmsum.split_spec("qmsum_test")
    assert len(spec.files) == 70
    pinned = {p.file: p for p in qmsum.pinned_files(spec)}
    assert pinned["evidence/test/Bed003.json"].url == (
        "https://raw.githubusercontent.com/etri/QMSum_SummaryEvidence/"
        "5847d36a12a8b48a69ac7cae4c5c34358cc0e1d3/test/Bed003.json"
    )
    assert pinned["qmsum/data/ALL/test/Bed003.json"].url == (
        "https://raw.githubusercontent.com/Yale-LILY/QMSum/"
        "83d7768c1f2b4dfeb091385d3dc7e239b8e5bb7e/data/ALL/test/Bed003.json"
    )
    assert {p.env_var for p in pinned.values()} == {"SOURCESUM_QMSUM_DIR"}
    assert {p.download_dir for p in pinned.values()} == {paths.DATA_ROOT / "qmsum"}


def _no_download(*args, **kwargs):
    raise urllib.error.URLError("no network in this test")


def test_a_missing_copy_is_one_error_line_naming_the_file_and_the_variable(
    tmp_path, monkeypatch, capsys, scores_dir
):
    monkeypatch.setattr(datasets, "_LOADED", {})
    monkeypatch.setattr(urllib.request, "urlopen", _no_download)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("SOURCESUM_QMSUM_DIR", str(empty))
    assert main(["run", "--ranker", "bm25", "--split", "qmsum_test", "--no-progress"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert f"SOURCESUM_QMSUM_DIR={empty} has no evidence/test/Bed003.json" in err[0]
    monkeypatch.delenv("SOURCESUM_QMSUM_DIR")
    monkeypatch.setattr(paths, "DATA_ROOT", tmp_path / "data")
    assert main(["run", "--ranker", "bm25", "--split", "qmsum_test", "--no-progress"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: cannot download file evidence/test/Bed003.json (split qmsum_test) ")
    assert "set SOURCESUM_QMSUM_DIR to a folder holding" in err[0]


# -- the real data -------------------------------------------------------------------------------


@pytest.mark.real_data
@pytest.mark.parametrize(
    "name,pairs,meetings", [("qmsum_test", 721, 35), ("qmsum_val", 740, 35), ("qmsum_train", 3548, 161)]
)
def test_real_splits_sizes_clusters_and_documents(name, pairs, meetings):
    split = load_split(name)
    assert len(split) == pairs == dataset("qmsum").split_spec(name).pairs
    assert len(set(split.clusters)) == meetings
    for pair, cluster in zip(split.pairs, split.clusters, strict=True):
        assert cluster == f"qmsum-meeting-{pair.original_id}" and pair.id.startswith(pair.original_id + "_q")
        assert pair.query and pair.summary and pair.n_sentences >= 1
    # the summary sentences of one query share its span: one document, several pairs
    by_query: dict[str, set[str]] = {}
    for pair in split:
        by_query.setdefault(pair.id.rsplit("_s", 1)[0], set()).add(pair.document_key)
    assert all(len(keys) == 1 for keys in by_query.values())


@pytest.mark.real_data
def test_the_matching_report_on_the_test_split():
    report = matching_report("qmsum_test")
    assert (report["meetings"], report["queries"], report["pairs"]) == (35, 244, 721)
    assert report["candidates"] == {
        "total": 65811,
        "median": 47,
        "min": 4,
        "max": 641,
        "labels": {"CES": 1447, "PES": 398, "none": 63966},
    }
    evidence = report["evidence"]
    assert evidence["total"] == 2173 and evidence["ces"] == 1651
    assert evidence["not_located"] == 0 and evidence["repeated_in_turn"] == 1
    assert evidence["outside_span"] == 198 and evidence["outside_span_ces"] == 134
    assert evidence["inside_span"] == 1975 and evidence["no_candidate"] == 0
    assert evidence["one_candidate"] == 1921 and evidence["several_candidates"] == 54
    assert evidence["one_candidate_share"] == pytest.approx(1921 / 1975)
    assert report["undefined"] == {
        "no_evidence": 2,
        "all_evidence_outside_span": 35,
        "no_relevant_candidate": 37,
        "no_ces_candidate": 39,
    }
    # the split's judgments agree with the report
    split = load_split("qmsum_test")
    assert sum(1 for p in split if split.graded(p.id).sum() == 0) == 37
    assert sum(1 for p in split if split.binary(p.id).sum() == 0) == 39
    # and the board states the report's figures
    qmsum = dataset("qmsum")
    assert qmsum.label_notes(qmsum.split_spec("qmsum_test")) == (
        "In QMSum test, 198 of the 2,173 evidence sentences (134 of them CES) lie outside the "
        "query's relevant span and cannot be ranked; 1,921 of the 1,975 inside it (97.3%) overlap "
        "exactly one candidate, 54 several."
    )


@pytest.mark.real_data
def test_hand_checked_meetings():
    split = load_split("qmsum_test")

    def labelled(pair_id: str) -> dict[str, float]:
        pair, graded = split.by_id[pair_id], split.graded(pair_id)
        return {pair.sentences[i]: graded[i] for i in np.flatnonzero(graded)}

    # Bed003 (ICSI), "What was said about hiring?", span 944-960: 8 CES and 1 PES in turns 948
    # and 950, split finer than our sentences; the PES ("Jerry however suggested ...") shares a
    # candidate with a CES, so that candidate is CES.
    pair = split.by_id["Bed003_q5_s0"]
    assert pair.query == "What was said about hiring?"
    assert pair.sentences[:3] == ("You know .", "So .", "Unless it boots up with networking .")
    assert labelled("Bed003_q5_s0") == {
        "The other thing um {disfmarker} I will {disfmarker} oh yeah , OK , I have to report "
        "{vocalsound} um , data collection .": 2,
        "We interviewed Fey ,": 2,
        "She 's willing to do it , meaning be the wizard for the data collection , also {vocalsound} "
        "maybe transcribe a little bit , if she has to , but also recruiting subjects , organizing "
        "them , and so forth .": 2,
        "Jerry however suggested that we should uh have a trial run with her , see whether she can "
        "actually do all the uh spontaneous , eloquent and creativeness that we uh expect of the "
        "wizard .": 2,
        "And I talked to Liz about this and it looks as if Friday afternoon will be the time when we "
        "have a first trial run for the data .": 2,
    }
    assert "So that looks good ." in pair.sentences  # between two CES, not evidence
    # Bed003 q0: the evidence lies in turns 743-756, outside QMSum's span 137-150
    assert split.graded("Bed003_q0_s0").sum() == 0 and split.graded("Bed003_q0_s1").sum() == 0

    # ES2004c (AMI), two spans [64, 64] and [197, 202], concatenated: turn 64 comes first; two
    # CES halves of one sentence of ours
    pair = split.by_id["ES2004c_q2_s0"]
    assert pair.sentences[0] == "Um , findings , I've got my nice little picture there ."
    assert pair.sentences[2].startswith("Um , my second part of my findings")  # turn 197
    assert labelled("ES2004c_q2_s0") == {
        "This is uh the chip called the T_A_ double one eight three five which is what's used in "
        "pretty much every remote control 'cause it sends out standard signals , based on your "
        "input and um it's pretty much used for all all T_V_ remotes at the moment .": 2
    }

    # covid_4 (committee, untokenized), span 213-214: "Mr." does not end a sentence; one CES
    pair = split.by_id["covid_4_q11_s0"]
    assert pair.sentences[:3] == (
        "We'll continue.",
        "The next question will go to Mr. Yurdiga.",
        "Thank you, Mr. Chair.",
    )
    assert pair.n_sentences == 12
    assert split.graded("covid_4_q11_s0").tolist() == [0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0]
    assert pair.sentences[5] == "The oil and gas industry is under severe strain."
    assert pair.sentences[10].startswith("Mr. Chair, 48 days after the finance minister")
    assert pair.document.startswith("The Acting Chair (Mr. Bruce Stanton): We'll continue.")


@pytest.mark.real_data
def test_list_shows_qmsum_and_bm25_runs(capsys, scores_dir):
    assert main(["list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    qmsum = {d["name"]: d for d in listing["datasets"]}["qmsum"]
    assert qmsum["board_splits"] == ["qmsum_test"]
    assert [s["name"] for s in qmsum["splits"]] == ["qmsum_test", "qmsum_val", "qmsum_train"]
    assert [s["name"] for s in qmsum["sources"]] == ["qmsum-evidence", "qmsum"]
    code = main(
        ["run", "--ranker", "bm25", "--split", "qmsum_test", "--limit", "5", "--json", "--no-progress"]
    )
    out = capsys.readouterr().out
    assert code == 0
    (result,) = json.loads(out)["results"]
    # the first 5 pairs (Bed003 q0-q2): 4 have all their evidence outside the span
    assert result["pairs"] == 5 and result["undefined"] == {"ndcg": 4, "map": 4}
    assert 0 < result["ndcg"] <= 1
