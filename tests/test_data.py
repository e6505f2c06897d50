"""The data layer: pairs, judgments and splits; datasets and split names; pinned files (locate,
verify, download) and validation. Unit tests run on the synthetic datasets (synthnews,
synthclaims in tests/fixtures/synthetic); the real SourceSum splits are checked at the end
(``real_data``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from helpers import make_pair
from sourcesum.data import (
    DATASETS,
    Dataset,
    Judgment,
    ParsedSplit,
    Source,
    Split,
    SplitSpec,
    corpus_splits,
    dataset,
    dataset_of,
    load_split,
    manifest,
    resolve_split_names,
    sources,
    split_names,
    split_spec,
)
from sourcesum.data.sources import download, local_copy, locate, read_verified
from sourcesum.data.sourcesum import parse_sourcesum_rows, read_rows
from sourcesum.errors import DataError, LabelAccessError, RankerError, UnknownNameError
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.evaluation.qrels import Qrels
from sourcesum.util.hashing import sha256_bytes
from synthetic_datasets import HERE as SYNTHETIC

NEWS_BOARD = ["synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref"]
SOURCESUM_BOARD = ["xsum_pegasus", "xsum_reference", "cnn_pegasus", "cnn_reference"]


def _raw_rows(name: str) -> list[dict]:
    """The rows of a synthnews split, read straight from its fixture file."""
    return json.loads((SYNTHETIC / f"{name}.json").read_text(encoding="utf-8"))


def _pinned(name: str):
    """The pinned file of the one-file split ``name``."""
    files = dataset_of(name).pinned_files(split_spec(name))
    assert len(files) == 1
    return files[0]


# -- pairs and judgments ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["votes", "graded", "binary"])
def test_a_pair_has_no_labels(name):
    pair = make_pair(["One.", "Two."], "Sum.", pair_id="hand__7")
    with pytest.raises(LabelAccessError, match=rf"pair hand__7: .*\(read \.{name}\)"):
        getattr(pair, name)
    assert issubclass(LabelAccessError, RankerError)  # the runner reports it naming the ranker
    with pytest.raises(AttributeError, match="no attribute 'sentence_count'"):
        pair.sentence_count  # noqa: B018  (an ordinary missing attribute stays an AttributeError)
    assert pair.n_sentences == 2 and pair.sentences == ("One.", "Two.")


def test_judgment_from_votes_gives_graded_soft_and_binary():
    votes = [(1, 1, 1), (1, 0), (0, 0, 0), (1,)]  # vote counts may differ across sentences
    judgment = Judgment.from_votes(votes)
    assert judgment.graded.tolist() == [3.0, 1.0, 0.0, 1.0]
    assert judgment.soft.tolist() == [1.0, 0.5, 0.0, 1.0]
    assert judgment.votes == ((1, 1, 1), (1, 0), (0, 0, 0), (1,))
    assert judgment.binary(2).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert judgment.binary(1).tolist() == [1.0, 1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="read-only"):
        judgment.graded[0] = 5.0
    plain = Judgment.of([2, 0], [1.0, 0.0])
    assert plain.votes is None and plain.graded.dtype == float and plain.binary(1).tolist() == [1.0, 0.0]


def test_a_split_needs_one_judgment_per_pair():
    pairs = (make_pair(["a.", "b."], "s.", "p0"), make_pair(["c."], "t.", "p1"))
    with pytest.raises(ValueError, match="2 pairs but 1 judgments"):
        Split("s", "hand", "S", Path("<s>"), "sha", pairs, (Judgment.from_votes([(1,), (0,)]),), 2)
    with pytest.raises(ValueError, match="2 pairs but 1 clusters"):
        Split(
            "s",
            "hand",
            "S",
            Path("<s>"),
            "sha",
            pairs,
            (Judgment.from_votes([(1,), (0,)]), Judgment.from_votes([(1,)])),
            2,
            ("c",),
        )


def test_subset_keeps_judgments_and_clusters_aligned():
    split = load_split("synth_alpha_sys_all")
    ids = [split.pairs[4].id, split.pairs[1].id, "not-in-the-split"]
    part = split.subset(ids)
    assert [p.id for p in part] == [split.pairs[1].id, split.pairs[4].id]  # file order kept
    assert part.judgments == (split.judgments[1], split.judgments[4])
    assert part.clusters == (split.clusters[1], split.clusters[4])
    assert (part.name, part.sha256, part.min_relevant) == (split.name, split.sha256, split.min_relevant)
    for pair in part:
        assert part.judgment(pair.id) is split.judgment(pair.id)
        assert part.graded(pair.id).tolist() == split.graded(pair.id).tolist()
    qrels = Qrels.of_split(part)
    assert qrels is not Qrels.of_split(split) and qrels.pair_ids == tuple(p.id for p in part)
    assert qrels.row(1, "graded").tolist() == split.judgments[4].graded.tolist()
    assert split.subset({p.id: None for p in split}) is split  # a mapping of every id: the split


# -- the synthetic datasets ------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*NEWS_BOARD, "synth_alpha_sys_all"])
def test_synthnews_splits_load_with_each_annotators_votes(name):
    split = load_split(name)
    spec = split_spec(name)
    rows = _raw_rows(name)
    assert len(split) == spec.pairs == len(rows) and split.dataset == "synthnews"
    assert split.min_relevant == 2 and split.sha256 == _pinned(name).sha256
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


# -- pinned files: locate, verify, download --------------------------------------------------------


def test_the_manifest_pins_sourcesums_files_by_commit_and_sha256():
    entry = manifest()["sources"]["sourcesum"]
    for name in [*SOURCESUM_BOARD, "xsum_pegasus_all"]:
        info = _pinned(name)
        pin = entry["files"][f"{name}.json"]
        assert info.sha256 == pin["sha256"] == dataset("sourcesum").data_sha256(split_spec(name))
        assert info.url == entry["url_template"].format(commit=entry["commit"], path=pin["path"])
        assert info.env_var == "SOURCESUM_DATA_DIR" and entry["commit"] in info.url
    assert "sourcesum-published" in manifest()["sources"]


def _copy(tmp_path: Path, monkeypatch, name: str, edit: tuple[bytes, bytes] | None = None) -> Path:
    """A copy of synthetic file ``name`` (``edit``: ``(old, new)`` replaced once), found through
    $SOURCESUM_SYNTHETIC_DIR."""
    payload = (SYNTHETIC / name).read_bytes()
    if edit is not None:
        assert edit[0] in payload
        payload = payload.replace(*edit, 1)
    copy = tmp_path / name
    copy.write_bytes(payload)
    monkeypatch.setenv("SOURCESUM_SYNTHETIC_DIR", str(tmp_path))
    return copy


def test_checksum_mismatch_names_the_file(tmp_path, monkeypatch):
    copy = _copy(tmp_path, monkeypatch, "synth_alpha_sys.json", (b"parks budget", b"parks budgex"))
    with pytest.raises(
        DataError, match=rf"{copy}: sha256 .* does not match the pinned .* SOURCESUM_SYNTHETIC_DIR"
    ):
        read_verified(_pinned("synth_alpha_sys"))
    ds = dataset("synthnews")
    with pytest.raises(DataError, match=r"synth_alpha_sys.json: sha256 .* does not match"):
        ds.load(split_spec("synth_alpha_sys"))


def test_the_bytes_parsed_are_the_bytes_verified(tmp_path, monkeypatch):
    """No cache sits between verification and parsing: an edit made after a first load is
    caught on the next load (the old ``datasets`` Arrow cache let such an edit through)."""
    copy = _copy(tmp_path, monkeypatch, "synth_alpha_sys.json")
    path, payload = read_verified(_pinned("synth_alpha_sys"))
    assert path == copy and payload == copy.read_bytes()
    ds, spec = dataset("synthnews"), split_spec("synth_alpha_sys")
    assert ds.load(spec).path == copy
    rows = json.loads(payload)
    rows[0]["annotations"][3]["label"] = [1, 1, 1]
    copy.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="does not match the pinned"):
        ds.load(spec)


@pytest.mark.parametrize(
    "split,variable",
    [("synth_alpha_sys", "SOURCESUM_SYNTHETIC_DIR"), ("xsum_pegasus", "SOURCESUM_DATA_DIR")],
)
def test_missing_file_in_the_sources_folder_is_an_error(tmp_path, monkeypatch, split, variable):
    monkeypatch.setenv(variable, str(tmp_path))
    info = _pinned(split)
    assert local_copy(info) is None
    with pytest.raises(DataError, match=rf"{variable}={tmp_path} has no {split}.json"):
        locate(info)


def test_download_verifies_and_saves_atomically(tmp_path):
    info = _pinned("synth_alpha_ref")
    source = SYNTHETIC / info.file
    path = download(info, tmp_path, url=source.as_uri())
    assert path == tmp_path / "synth_alpha_ref.json" and path.read_bytes() == source.read_bytes()
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_bytes(source.read_bytes()[:-10])
    with pytest.raises(DataError, match="nothing was saved"):
        download(info, tmp_path / "out", url=corrupt.as_uri())
    assert not (tmp_path / "out").exists()
    with pytest.raises(DataError, match="cannot download .* set SOURCESUM_SYNTHETIC_DIR"):
        download(info, tmp_path / "out", url=(tmp_path / "absent.json").as_uri())


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


@pytest.mark.parametrize(
    "corrupt,message",
    [
        (lambda r: r["annotations"].reverse(), "annotations out of order"),
        (lambda r: r["annotations"][1].update(label=[1, 2]), "sentence 1 has labels"),
        (lambda r: r["annotations"][1].update(label=[]), "sentence 1 has labels"),
        (lambda r: r["annotations"][0].update(sentence=" "), "sentence 0 has no text"),
        (lambda r: r.update(gen_summary=""), "missing or empty field 'gen_summary'"),
        (lambda r: r.pop("annotations"), "missing or empty field 'annotations'"),
    ],
)
def test_schema_errors_name_file_and_pair(corrupt, message):
    rows = _raw_rows("synth_beta_sys")
    corrupt(rows[1])
    with pytest.raises(DataError, match=rf"bad.json: pair {rows[1]['id']}: {message}"):
        parse_sourcesum_rows(rows, "synth_beta_sys", Path("bad.json"))


def test_a_file_that_is_not_a_list_of_pairs_is_an_error():
    with pytest.raises(DataError, match="bad.json: cannot be read as a SourceSum JSON list"):
        read_rows(Path("bad.json"), b"[{")
    with pytest.raises(DataError, match="bad.json: expected a JSON list of objects"):
        read_rows(Path("bad.json"), b'{"id": 1}')


def test_duplicate_ids_are_rejected(tmp_path):
    rows = _raw_rows("synth_alpha_sys")
    rows[2]["id"] = rows[0]["id"]
    ds, spec = _pinned_rows(tmp_path, rows)
    with pytest.raises(DataError, match=rf"rows.json: pair {rows[0]['id']}: duplicate id"):
        ds.load(spec)


def test_load_checks_the_declared_pairs_and_corpus(tmp_path):
    rows = _raw_rows("synth_alpha_sys")
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

    rows = _raw_rows("synth_alpha_sys")
    payload = json.dumps(rows).encode("utf-8")
    (tmp_path / "rows.json").write_bytes(payload)
    ds = ShortLabels(tmp_path, {"rows.json": payload}, "file:///nowhere/{path}", 3)
    with pytest.raises(DataError, match=rf"pair {rows[0]['id']}: labels do not cover its 5 sentences"):
        ds.load(ds.splits[0])


# -- the real SourceSum data -----------------------------------------------------------------------


@pytest.mark.real_data
@pytest.mark.parametrize("name,pairs", list(zip(SOURCESUM_BOARD, [119, 119, 468, 505], strict=True)))
def test_board_splits_load_verified_with_votes(name, pairs):
    split = load_split(name)
    info = _pinned(name)
    assert len(split) == pairs == split_spec(name).pairs
    assert (
        split.sha256 == info.sha256 == manifest()["sources"]["sourcesum"]["files"][f"{name}.json"]["sha256"]
    )
    assert sha256_bytes(split.path.read_bytes()) == info.sha256
    for pair, judgment in zip(split.pairs, split.judgments, strict=True):
        assert pair.n_sentences == len(judgment.votes) >= 3
        assert judgment.graded.tolist() == [sum(v) for v in judgment.votes]
        assert split.binary(pair.id).tolist() == [float(sum(v) >= 2) for v in judgment.votes]
        assert split.binary(pair.id).sum() >= 1  # the filtered splits always have a source sentence


@pytest.mark.real_data
def test_xsum_splits_share_documents_cnn_pairs_share_documents():
    pegasus = {p.document_key for p in load_split("xsum_pegasus")}
    reference = {p.document_key for p in load_split("xsum_reference")}
    assert pegasus == reference and len(pegasus) == 119
    assert len({p.document_key for p in load_split("cnn_pegasus")}) == 191


@pytest.mark.real_data
def test_all_splits_include_pairs_without_sources():
    split = load_split("xsum_pegasus_all")
    assert len(split) == 598
    assert sum(1 for p in split if split.binary(p.id).sum() == 0) == 24
    assert min(p.n_sentences for p in split) == 1


@pytest.mark.real_data
def test_an_edited_copy_of_a_real_split_is_refused(tmp_path, monkeypatch):
    info = _pinned("xsum_pegasus")
    original = local_copy(info)
    assert original is not None
    copy = tmp_path / "xsum_pegasus.json"
    copy.write_bytes(original.read_bytes().replace(b"Dan Roan", b"Dan Roam", 1))
    monkeypatch.setenv("SOURCESUM_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match=r"xsum_pegasus.json: sha256 .* does not match .* SOURCESUM_DATA_DIR"):
        read_verified(info)
