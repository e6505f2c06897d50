"""Loading, verification, download and validation of the real SourceSum files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sourcesum import data
from sourcesum.errors import DataError, UnknownNameError


@pytest.mark.parametrize(
    "name,pairs",
    [("xsum_pegasus", 119), ("xsum_reference", 119), ("cnn_pegasus", 468), ("cnn_reference", 505)],
)
def test_main_splits_load_with_votes(name, pairs):
    split = data.load_split(name)
    assert len(split) == pairs
    for pair in split:
        assert pair.n_sentences == len(pair.votes) >= 3
        assert pair.graded.tolist() == [sum(v) for v in pair.votes]
        assert pair.binary().tolist() == [float(sum(v) >= 2) for v in pair.votes]
        assert pair.binary().sum() >= 1  # the filtered splits always have a source sentence


def test_binary_threshold_is_a_parameter():
    split = data.load_split("xsum_pegasus")
    one_vote = sum(p.binary(1).sum() for p in split)
    two_votes = sum(p.binary(2).sum() for p in split)
    assert one_vote == sum((p.graded >= 1).sum() for p in split) > two_votes


def test_xsum_splits_share_documents_cnn_pairs_share_documents():
    pegasus = {p.document_key for p in data.load_split("xsum_pegasus")}
    reference = {p.document_key for p in data.load_split("xsum_reference")}
    assert pegasus == reference and len(pegasus) == 119
    assert len({p.document_key for p in data.load_split("cnn_pegasus")}) == 191


def test_all_splits_include_pairs_without_sources():
    split = data.load_split("xsum_pegasus_all")
    assert len(split) == 598
    assert sum(1 for p in split if p.binary().sum() == 0) == 24
    assert min(p.n_sentences for p in split) == 1


def test_unknown_split_names_the_choices():
    with pytest.raises(UnknownNameError, match="xsum_pegasus"):
        data.resolve_split_names("xsum")
    assert data.resolve_split_names("all,cnn_pegasus_all") == data.main_splits() + ["cnn_pegasus_all"]


def test_checksum_mismatch_names_the_file(tmp_path, monkeypatch, data_dir):
    copy = tmp_path / "xsum_pegasus.json"
    copy.write_bytes(data_dir.joinpath("xsum_pegasus.json").read_bytes().replace(b"Dan Roan", b"Dan Roam", 1))
    monkeypatch.setenv("SOURCESUM_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match=r"xsum_pegasus.json: sha256 .* does not match"):
        data.read_verified("xsum_pegasus")


def test_the_bytes_parsed_are_the_bytes_verified(tmp_path, monkeypatch, data_dir):
    """No cache sits between verification and parsing: an edit made after a first load is
    caught on the next load (the old ``datasets`` Arrow cache let such an edit through)."""
    copy = tmp_path / "xsum_pegasus.json"
    copy.write_bytes(data_dir.joinpath("xsum_pegasus.json").read_bytes())
    monkeypatch.setenv("SOURCESUM_DATA_DIR", str(tmp_path))
    path, payload = data.read_verified("xsum_pegasus")
    assert path == copy and payload == copy.read_bytes()
    rows = json.loads(payload)
    rows[0]["annotations"][0]["label"] = [1, 1, 1]
    copy.write_text(json.dumps(rows))
    data.load_split.cache_clear()
    try:
        with pytest.raises(DataError, match="does not match the pinned"):
            data.load_split("xsum_pegasus")
    finally:
        data.load_split.cache_clear()


def test_missing_file_in_data_dir_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCESUM_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match="has no xsum_pegasus.json"):
        data.locate("xsum_pegasus")


def test_download_verifies_and_saves_atomically(tmp_path, data_dir):
    info = data.split_info("xsum_reference")
    source = data_dir / info.file
    path = data.download(info, tmp_path, url=source.as_uri())
    assert path.read_bytes() == source.read_bytes()
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_bytes(source.read_bytes()[:-10])
    with pytest.raises(DataError, match="nothing was saved"):
        data.download(info, tmp_path / "out", url=corrupt.as_uri())
    assert not (tmp_path / "out").exists()
    with pytest.raises(DataError, match="SOURCESUM_DATA_DIR"):
        data.download(info, tmp_path / "out", url=(tmp_path / "absent.json").as_uri())


def test_download_is_used_when_no_local_copy(tmp_path, monkeypatch, data_dir):
    monkeypatch.delenv("SOURCESUM_DATA_DIR")
    monkeypatch.setattr(data.paths, "DOWNLOAD_DIR", tmp_path)
    real = data.split_info

    def pointing_at_local_copy(name):
        info = real(name)
        return data.SplitInfo(**{**info.__dict__, "url": (data_dir / info.file).as_uri()})

    monkeypatch.setattr(data, "split_info", pointing_at_local_copy)
    path = data.locate("xsum_pegasus")
    assert path == tmp_path / "xsum_pegasus.json" and path.is_file()
    assert data.locate("xsum_pegasus") == path  # second call uses the copy


def _rows(data_dir: Path):
    return json.loads((data_dir / "xsum_pegasus.json").read_text())[:3]


@pytest.mark.parametrize(
    "corrupt,message",
    [
        (lambda r: r["annotations"].reverse(), "annotations out of order"),
        (lambda r: r["annotations"][1].update(label=[1, 2]), "sentence 1 has labels"),
        (lambda r: r["annotations"][0].update(sentence=" "), "sentence 0 has no text"),
        (lambda r: r.update(gen_summary=""), "missing or empty field 'gen_summary'"),
    ],
)
def test_schema_errors_name_file_and_pair(data_dir, corrupt, message):
    rows = _rows(data_dir)
    corrupt(rows[1])
    with pytest.raises(DataError, match=rf"bad.json: pair {rows[1]['id']}: {message}"):
        data.parse_rows(rows, "xsum_pegasus", Path("bad.json"))


def test_duplicate_ids_are_rejected(data_dir):
    rows = _rows(data_dir)
    rows[2]["id"] = rows[0]["id"]
    with pytest.raises(DataError, match="duplicate id"):
        data.parse_rows(rows, "xsum_pegasus", Path("dup.json"))
