"""Pinned files (sourcesum.data.sources): the manifest pins SourceSum's files by commit and
sha256; a local copy is verified (the bytes parsed are the bytes verified) and a missing one named;
downloads are verified and saved atomically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sourcesum.data import dataset, manifest, split_spec
from sourcesum.data.sources import download, local_copy, locate, read_verified
from sourcesum.errors import DataError
from support.data import SOURCESUM_BOARD, SYNTHETIC, pinned_file


def test_the_manifest_pins_sourcesums_files_by_commit_and_sha256():
    entry = manifest()["sources"]["sourcesum"]
    for name in [*SOURCESUM_BOARD, "xsum_pegasus_all"]:
        info = pinned_file(name)
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
        read_verified(pinned_file("synth_alpha_sys"))
    ds = dataset("synthnews")
    with pytest.raises(DataError, match=r"synth_alpha_sys.json: sha256 .* does not match"):
        ds.load(split_spec("synth_alpha_sys"))


def test_the_bytes_parsed_are_the_bytes_verified(tmp_path, monkeypatch):
    """No cache sits between verification and parsing: an edit made after a first load is
    caught on the next load (the old ``datasets`` Arrow cache let such an edit through)."""
    copy = _copy(tmp_path, monkeypatch, "synth_alpha_sys.json")
    path, payload = read_verified(pinned_file("synth_alpha_sys"))
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
    info = pinned_file(split)
    assert local_copy(info) is None
    with pytest.raises(DataError, match=rf"{variable}={tmp_path} has no {split}.json"):
        locate(info)


def test_download_verifies_and_saves_atomically(tmp_path):
    info = pinned_file("synth_alpha_ref")
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
