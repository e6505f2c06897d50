"""Datasets (sourcesum.data.datasets): the synthetic datasets load with each annotator's votes;
split names and their datasets; a dataset's load checks what it declares (pairs, corpus, ids,
labels covering the sentences) and downloads its pinned files when no copy is local; plugin
datasets are checked before use (split names, labels outside the relevance policy, a failing
parser). Runs on the synthetic datasets (synthnews, synthclaims in tests/fixtures/synthetic)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from sourcesum.data import (
    DATASETS,
    Dataset,
    Judgment,
    ParsedSplit,
    Source,
    SplitSpec,
    corpus_splits,
    dataset,
    dataset_of,
    load_split,
    resolve_split_names,
    sources,
    split_names,
    split_spec,
)
from sourcesum.data.sourcesum import parse_sourcesum_rows, read_rows
from sourcesum.errors import DataError, UnknownNameError
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.util.hashing import sha256_bytes
from support.cli import run_cli
from support.data import SOURCESUM_BOARD, SYNTHETIC, pinned_file, raw_rows

NEWS_BOARD = ["synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"]


# -- the synthetic datasets ------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*NEWS_BOARD, "synth_alpha_sys_all"])
def test_synthnews_splits_load_with_each_annotators_votes(name):
    split = load_split(name)
    spec = split_spec(name)
    rows = raw_rows(name)
    assert len(split) == spec.pairs == len(rows) and split.dataset == "synthnews"
    assert split.min_relevant == 2 and split.sha256 == pinned_file(name).sha256
    assert split.sha256 == sha256_bytes((SYNTHETIC / f"{name}.json").read_bytes())
    for pair, judgment, row in zip(split.pairs, split.judgments, rows, strict=True):
        votes = [a["label"] for a in row["annotations"]]
        assert pair.id == row["id"] and pair.split == name and pair.corpus == spec.corpus
        assert pair.sentences == tuple(a["sentence"] for a in row["annotations"])
        assert pair.summary == row["gen_summary"] and pair.reference_summary == row["ref_summary"]
        assert [list(v) for v in judgment.votes] == votes and pair.n_sentences == len(votes)
        assert judgment.graded.tolist() == [sum(v) for v in votes]
        assert judgment.soft.tolist() == [sum(v) / len(v) for v in votes]
        assert split.binary(pair.id).tolist() == [float(sum(v) >= 2) for v in votes]
        if spec.board:  # every pair of a board split has a sentence with a vote
            assert judgment.graded.sum() >= 1


def test_binary_threshold_is_a_parameter():
    split = load_split("synth_alpha_sys")
    one_vote = sum(j.binary(1).sum() for j in split.judgments)
    two_votes = sum(j.binary(split.min_relevant).sum() for j in split.judgments)
    assert one_vote == sum((j.graded >= 1).sum() for j in split.judgments) == 8
    assert two_votes == sum(split.binary(p.id).sum() for p in split) == 5


def test_the_two_splits_of_a_corpus_share_their_documents():
    keys = {name: [p.document_key for p in load_split(name)] for name in NEWS_BOARD}
    assert keys["synth_alpha_sys"] == keys["synth_alpha_ref"] and len(set(keys["synth_alpha_sys"])) == 3
    assert keys["synth_beta_sys"] == keys["synth_beta_ref"] and len(set(keys["synth_beta_sys"])) == 3
    assert not set(keys["synth_alpha_sys"]) & set(keys["synth_beta_sys"])
    for name in NEWS_BOARD:  # resampling clusters default to the document
        assert list(load_split(name).clusters) == keys[name]


def test_the_unfiltered_split_holds_pairs_without_sources():
    split = load_split("synth_alpha_sys_all")
    assert len(split) == 5
    assert sum(1 for p in split if split.binary(p.id).sum() == 0) == 1
    assert min(p.n_sentences for p in split) == 1
    assert [p.id for p in split][:3] == [p.id for p in load_split("synth_alpha_sys")]


def _claims() -> list[dict]:
    text = (SYNTHETIC / "synth_claims.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_synthclaims_graded_is_the_number_of_supporting_sets():
    split = load_split("synth_claims")
    assert (
        split.dataset == "synthclaims" and split.min_relevant == dataset("synthclaims").binary_threshold == 1
    )
    for pair, judgment, claim in zip(split.pairs, split.judgments, _claims(), strict=True):
        assert pair.id == claim["id"] and pair.summary == claim["claim"]
        assert pair.sentences == tuple(claim["page"]) and judgment.votes is None
        graded = [sum(i in s for s in claim["supporting"]) for i in range(len(claim["page"]))]
        assert judgment.graded.tolist() == graded
        assert split.binary(pair.id).tolist() == [float(g >= 1) for g in graded]
    # by hand, from make_files.py
    assert split.graded("claim-0").tolist() == [0, 2, 2, 0, 1]
    assert split.binary("claim-0").tolist() == [0, 1, 1, 0, 1]
    assert split.graded("claim-2").tolist() == [1, 2, 0, 0]
    assert split.graded("claim-3").tolist() == [0, 0]


def test_a_claim_without_support_is_undefined_for_ndcg_and_ap():
    split = load_split("synth_claims")
    lead = {p.id: [-float(i) for i in range(p.n_sentences)] for p in split}
    result = evaluate_split(split, lead, "lead", [NDCG, AP])
    for measure in (NDCG, AP):
        values = result.per_pair[measure.name]
        assert np.isnan(values["claim-3"]) and values.drop("claim-3").notna().all()
        assert result.mean(measure) == pytest.approx(values.drop("claim-3").mean())
    assert result.summary()["undefined"] == {"ndcg": 1, "map": 1}
    # claim-1: the one supporting sentence is second (lead ranks it 2nd of 3)
    assert result.per_pair.loc["claim-1", AP.name] == pytest.approx(0.5)


# -- datasets and split names ----------------------------------------------------------------------


def test_split_names_and_their_datasets():
    assert dataset("synthnews").board_splits() == NEWS_BOARD
    assert dataset("sourcesum").board_splits() == SOURCESUM_BOARD
    names = split_names()
    assert names.index("synth_alpha_sys") < names.index("synth_beta_ref") < names.index("synth_alpha_sys_all")
    assert "synth_alpha_sys_all" not in split_names(include_all=False)
    assert "synth_claims" in split_names(include_all=False)
    assert (
        dataset_of("synth_beta_ref").name == "synthnews" and dataset_of("synth_claims").name == "synthclaims"
    )
    assert dataset_of("xsum_pegasus").name == "sourcesum"
    assert corpus_splits(NEWS_BOARD) == {
        "alpha": ["synth_alpha_sys", "synth_alpha_ref"],
        "beta": ["synth_beta_sys", "synth_beta_ref"],
    }


def test_resolve_split_names_expands_all_and_dataset_names():
    assert resolve_split_names("synthnews") == NEWS_BOARD
    assert resolve_split_names("synthclaims") == ["synth_claims"]
    assert resolve_split_names(" synthnews , synth_alpha_sys_all") == [*NEWS_BOARD, "synth_alpha_sys_all"]
    # first appearance wins, no duplicates
    assert resolve_split_names("synth_beta_ref,synthnews") == ["synth_beta_ref", *NEWS_BOARD[:3]]
    assert resolve_split_names("all") == SOURCESUM_BOARD  # 'all' = sourcesum's board
    assert resolve_split_names("all,cnn_pegasus_all") == [*SOURCESUM_BOARD, "cnn_pegasus_all"]
    assert resolve_split_names("all", default_dataset="synthnews") == NEWS_BOARD
    assert resolve_split_names("synth_claims,synthclaims") == ["synth_claims"]


def test_unknown_split_names_the_choices():
    with pytest.raises(UnknownNameError, match=r"unknown split 'synth'; choose from .*synth_alpha_sys"):
        resolve_split_names("synth")
    with pytest.raises(UnknownNameError, match="xsum_pegasus"):
        resolve_split_names("xsum")
    with pytest.raises(UnknownNameError, match="unknown split 'nope'"):
        load_split("nope")


class _Clash(Dataset):
    """A second dataset declaring synthclaims' split name."""

    name = "clash_test"
    title = "Clash"
    splits: ClassVar[tuple[SplitSpec, ...]] = (
        SplitSpec("synth_claims", "Clash", 4, "", ("synth_claims.jsonl",), board=True),
    )


def test_a_split_name_declared_by_two_datasets_is_an_error():
    DATASETS.register(_Clash)
    try:
        clash = r"split 'synth_claims' is declared by datasets (clash_test and synthclaims|synthclaims and clash_test)"
        with pytest.raises(UnknownNameError, match=clash):
            dataset_of("synth_claims")
        with pytest.raises(UnknownNameError, match=clash):
            resolve_split_names("synthnews")  # any lookup of split names fails, not only the clash's
    finally:
        DATASETS._classes.pop("clash_test")
    assert dataset_of("synth_claims").name == "synthclaims"


class _PinnedNews(Dataset):
    """SourceSum-format files pinned at their real checksum, found in ``folder`` (``download_dir``),
    downloaded from ``url_template``; variable SOURCESUM_TEST_PINNED_DIR (unset)."""

    name = "pinned_news_test"
    title = "Pinned"
    binary_threshold = 2
    max_graded = 3

    def __init__(
        self, folder: Path, files: dict[str, bytes], url_template: str, pairs: int, corpus: str = "alpha"
    ):
        self.folder, self.pins, self.url_template = folder, files, url_template
        self.splits = (SplitSpec("pinned_split", "Pinned", pairs, corpus, tuple(files)),)

    def sources(self) -> dict[str, Source]:
        pins = {name: {"path": name, "sha256": sha256_bytes(data)} for name, data in self.pins.items()}
        return {
            "pinned": Source(
                "pinned",
                "tests",
                "fixture",
                self.url_template,
                "-",
                pins,
                "SOURCESUM_TEST_PINNED_DIR",
                str(self.folder),
            )
        }

    def parse(self, spec: SplitSpec, files: dict[str, tuple[Path, bytes]]) -> ParsedSplit:
        path, payload = files[spec.files[0]]
        return parse_sourcesum_rows(read_rows(path, payload), spec.name, path)


def _pinned_rows(tmp_path: Path, rows: list[dict], pairs: int | None = None, corpus: str = "alpha"):
    """A one-split dataset of ``rows`` written to ``tmp_path`` and pinned at their sha256."""
    payload = json.dumps(rows).encode("utf-8")
    (tmp_path / "rows.json").write_bytes(payload)
    ds = _PinnedNews(
        tmp_path,
        {"rows.json": payload},
        "file:///nowhere/{path}",
        len(rows) if pairs is None else pairs,
        corpus,
    )
    return ds, ds.splits[0]


def test_download_is_used_when_no_local_copy(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCESUM_TEST_PINNED_DIR", raising=False)
    payload = (SYNTHETIC / "synth_alpha_sys.json").read_bytes()
    folder = tmp_path / "downloads"
    ds = _PinnedNews(folder, {"synth_alpha_sys.json": payload}, SYNTHETIC.as_uri() + "/{path}", 3)
    spec = ds.splits[0]
    assert not ds.available(spec)
    split = ds.load(spec)
    assert split.path == folder / "synth_alpha_sys.json" and split.path.read_bytes() == payload
    assert ds.available(spec) and split.sha256 == sha256_bytes(payload) and len(split) == 3

    def no_network(*args, **kwargs):
        raise AssertionError("downloaded again")

    monkeypatch.setattr(sources, "download", no_network)
    assert ds.load(spec).path == split.path  # the second load uses the saved copy


def test_duplicate_ids_are_rejected(tmp_path):
    rows = raw_rows("synth_alpha_sys")
    rows[2]["id"] = rows[0]["id"]
    ds, spec = _pinned_rows(tmp_path, rows)
    with pytest.raises(DataError, match=rf"rows.json: pair {rows[0]['id']}: duplicate id"):
        ds.load(spec)


def test_load_checks_the_declared_pairs_and_corpus(tmp_path):
    rows = raw_rows("synth_alpha_sys")
    ds, spec = _pinned_rows(tmp_path, rows)
    assert [p.id for p in ds.load(spec)] == [r["id"] for r in rows]  # as declared: loads
    ds, spec = _pinned_rows(tmp_path, rows, pairs=4)
    with pytest.raises(DataError, match="rows.json: 3 pairs, dataset pinned_news_test declares 4"):
        ds.load(spec)
    ds, spec = _pinned_rows(tmp_path, rows, corpus="beta")
    with pytest.raises(DataError, match=rf"pair {rows[0]['id']} is from corpus 'alpha', not 'beta'"):
        ds.load(spec)


def test_load_checks_that_labels_cover_the_sentences(tmp_path):
    class ShortLabels(_PinnedNews):
        def parse(self, spec, files):
            parsed = super().parse(spec, files)
            first = Judgment.of(parsed.judgments[0].graded[:-1], parsed.judgments[0].soft[:-1])
            return ParsedSplit(parsed.pairs, (first, *parsed.judgments[1:]))

    rows = raw_rows("synth_alpha_sys")
    payload = json.dumps(rows).encode("utf-8")
    (tmp_path / "rows.json").write_bytes(payload)
    ds = ShortLabels(tmp_path, {"rows.json": payload}, "file:///nowhere/{path}", 3)
    with pytest.raises(DataError, match=rf"pair {rows[0]['id']}: labels do not cover its 5 sentences"):
        ds.load(ds.splits[0])


# -- names that cannot spoof ----------------------------------------------------------------


@pytest.mark.parametrize(
    "split_name", ["../escape", "wice", "all", "synthnews", "naïve", "a/b"], ids=lambda s: repr(s)
)
def test_a_split_name_that_is_not_a_plain_new_name_is_refused(split_name):
    from sourcesum.data import DATASETS, Dataset, SplitSpec

    class Sneaky(Dataset):
        name = "sneaky_test"
        title = "Sneaky"
        splits = (SplitSpec(split_name, "Sneaky", 1, "", ("x.json",), board=True),)

    with pytest.raises(TypeError, match="split name"):
        DATASETS.register(Sneaky)
    assert "sneaky_test" not in DATASETS


# -- plugin data is checked before use ------------------------------------------------------


def _label_dataset(graded: list[float], parse_error: Exception | None = None):
    import json

    from sourcesum.data import DATASETS, Dataset, Judgment, Pair, ParsedSplit, Source, SplitSpec
    from sourcesum.util.hashing import sha256_bytes

    payload = json.dumps({"graded": graded}).encode()

    class Labels(Dataset):
        name = "labels_test"
        title = "Labels"
        binary_threshold = 1
        max_graded = 4
        splits = (SplitSpec("labels_split", "Labels", 1, "", ("labels.json",), board=True),)

        def sources(self):
            return {
                "labels": Source(
                    name="labels",
                    repository="test",
                    commit="c",
                    url_template="https://example.invalid/{commit}/{path}",
                    license="none",
                    files={"labels.json": {"path": "labels.json", "sha256": sha256_bytes(payload)}},
                    env_var="SOURCESUM_LABELS_TEST_DIR",
                    download_dir="labels_test_downloads",
                    citation="",
                )
            }

        def parse(self, spec, files):
            if parse_error is not None:
                raise parse_error
            sentences = tuple(f"s{i}" for i in range(len(graded)))
            pair = Pair(
                id="p0", split=spec.name, sentences=sentences, summary="x", document=" ".join(sentences)
            )
            return ParsedSplit((pair,), (Judgment.of(graded, [min(1.0, abs(g)) for g in graded]),))

    DATASETS.register(Labels)
    return Labels, payload


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), -1.0, 1e9])
def test_labels_outside_the_relevance_policy_are_one_error_naming_dataset_file_and_pair(
    bad, tmp_path, monkeypatch, capsys, scores_dir
):
    from sourcesum.data import DATASETS
    from sourcesum.data import datasets as module

    cls, payload = _label_dataset([0.0, bad, 1.0])
    (tmp_path / "labels.json").write_bytes(payload)
    monkeypatch.setenv("SOURCESUM_LABELS_TEST_DIR", str(tmp_path))
    try:
        code, _, err = run_cli(capsys, "run", "--ranker", "lead", "--split", "labels_split", "--no-progress")
    finally:
        DATASETS.unregister(cls.name)
        module.dataset.cache_clear()
        module._LOADED.pop("labels_split", None)
    assert code == 2 and err.count("\n") == 1, err
    assert "labels.json" in err and "dataset labels_test, pair p0" in err and "relevance" in err
    assert not list(scores_dir.rglob("*.json"))


def test_a_dataset_parser_that_fails_is_one_error_naming_dataset_split_and_file(
    tmp_path, monkeypatch, capsys, scores_dir
):
    from sourcesum.data import DATASETS
    from sourcesum.data import datasets as module

    cls, payload = _label_dataset([0.0, 1.0], parse_error=KeyError("annotations"))
    (tmp_path / "labels.json").write_bytes(payload)
    monkeypatch.setenv("SOURCESUM_LABELS_TEST_DIR", str(tmp_path))
    try:
        code, _, err = run_cli(capsys, "run", "--ranker", "lead", "--split", "labels_split", "--no-progress")
    finally:
        DATASETS.unregister(cls.name)
        module.dataset.cache_clear()
    assert code == 2 and err.count("\n") == 1, err
    assert "dataset labels_test, split labels_split" in err and "labels.json" in err and "KeyError" in err
