"""Pinned files (sourcesum.data.sources): the manifest pins SourceSum's files by commit and
sha256; a local copy is verified (the bytes parsed are the bytes verified) and a missing one named;
downloads are verified and saved atomically. A mismatch names the file as a file and the split
as a split; a plugin dataset under development may read unpinned files (``sha256 = None``) only
under ``SOURCESUM_ALLOW_UNPINNED=1``, with a warning, and every entry and board computed on them
records "unpinned"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import ClassVar

import pytest
from sourcesum import paths
from sourcesum.cli import main
from sourcesum.data import (
    DATASETS,
    Dataset,
    ParsedSplit,
    Source,
    SplitSpec,
    dataset,
    datasets,
    manifest,
    split_spec,
)
from sourcesum.data.sources import (
    UNPINNED_PREFIX,
    UnpinnedDataWarning,
    download,
    local_copy,
    locate,
    read_verified,
)
from sourcesum.data.sourcesum import parse_sourcesum_rows, read_rows
from sourcesum.errors import DataError
from sourcesum.util.hashing import sha256_bytes
from support.boards import declaration
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
    with pytest.raises(DataError, match=r"synth_alpha_sys.json: sha256 .* does not match") as caught:
        ds.load(split_spec("synth_alpha_sys"))
    # the file is named as a file, the split as a split
    assert "for file synth_alpha_sys.json (split synth_alpha_sys);" in str(caught.value)
    assert "for split synth_alpha_sys.json" not in str(caught.value)


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


# -- unpinned files while developing a dataset ----------------------------------------------------

DEV_SPLIT = "dev_news_split"


class DevNews(Dataset):
    """A plugin dataset under development: its one file is not pinned yet (``sha256: None``)."""

    name = "devnews"
    title = "DevNews"
    description = "A dataset whose file is not pinned yet."
    splits: ClassVar[tuple[SplitSpec, ...]] = (
        SplitSpec(DEV_SPLIT, "Dev", 3, "alpha", ("dev.json",), board=True),
    )
    binary_threshold = 2
    max_graded = 3

    def sources(self) -> dict[str, Source]:
        return {
            "dev": Source(
                name="dev",
                repository="me/devnews",
                commit="working-copy",
                url_template="https://example.invalid/{commit}/{path}",
                license="CC0-1.0",
                files={"dev.json": {"path": "dev.json", "sha256": None}},
                env_var="SOURCESUM_DEVNEWS_DIR",
                download_dir="devnews",
            )
        }

    def parse(self, spec: SplitSpec, files: dict[str, tuple[Path, bytes]]) -> ParsedSplit:
        path, payload = files[spec.files[0]]
        rows = read_rows(path, payload)
        for row in rows:
            row["id"] = "dev_" + row["id"]
        return parse_sourcesum_rows(rows, spec.name, path)


@pytest.fixture
def devnews(tmp_path, monkeypatch):
    """DevNews registered, its file a copy of a synthetic split in ``$SOURCESUM_DEVNEWS_DIR``."""
    folder = tmp_path / "devnews"
    folder.mkdir()
    shutil.copy(SYNTHETIC / "synth_alpha_sys.json", folder / "dev.json")
    monkeypatch.setenv("SOURCESUM_DEVNEWS_DIR", str(folder))
    monkeypatch.delenv("SOURCESUM_ALLOW_UNPINNED", raising=False)
    monkeypatch.setattr(datasets, "_LOADED", {})
    DATASETS.register(DevNews)
    dataset.cache_clear()
    yield folder / "dev.json"
    DATASETS.unregister("devnews")
    dataset.cache_clear()


def test_an_unpinned_file_is_read_only_when_allowed_and_with_a_warning(devnews, monkeypatch):
    ds = dataset("devnews")
    spec = ds.split_spec(DEV_SPLIT)
    with pytest.raises(
        DataError, match=r"dev.json: file dev.json \(split dev_news_split\) has no pinned sha256"
    ):
        ds.load(spec)
    with pytest.raises(DataError, match="SOURCESUM_ALLOW_UNPINNED=1"):
        ds.load(spec)
    monkeypatch.setenv("SOURCESUM_ALLOW_UNPINNED", "1")
    with pytest.warns(
        UnpinnedDataWarning, match="dataset devnews, split dev_news_split is read from unpinned"
    ):
        split = ds.load(spec)
    assert split.unpinned and split.sha256 == UNPINNED_PREFIX + sha256_bytes(devnews.read_bytes())
    assert ds.sources()["dev"].describe()["unpinned_files"] == 1
    # the checksum follows the bytes: an edit is another data checksum, so no entry carries over
    devnews.write_bytes(devnews.read_bytes().replace(b"parks budget", b"parks budgex", 1))
    with pytest.warns(UnpinnedDataWarning):
        edited = ds.load(spec)
    assert edited.unpinned and edited.sha256 != split.sha256
    # never downloaded: without a local copy it is an error naming the variable
    monkeypatch.delenv("SOURCESUM_DEVNEWS_DIR")
    monkeypatch.setattr(paths, "DATA_ROOT", devnews.parent / "data")
    with pytest.raises(
        DataError, match=r"no pinned sha256, so it is never downloaded; set SOURCESUM_DEVNEWS_DIR"
    ):
        locate(DevNews().pinned_files(spec)[0])


def test_entries_and_boards_made_from_unpinned_data_say_so(
    devnews, monkeypatch, scores_dir, tmp_path, capsys
):
    monkeypatch.setenv("SOURCESUM_ALLOW_UNPINNED", "1")
    with pytest.warns(UnpinnedDataWarning):
        assert main(["run", "--ranker", "lead,random", "--split", DEV_SPLIT, "--no-progress"]) == 0
    entries = sorted(scores_dir.glob(f"*/{DEV_SPLIT}.*.json"))
    assert len(entries) == 2
    for path in entries:
        assert json.loads(path.read_text())["data_sha256"].startswith(UNPINNED_PREFIX)
    board = tmp_path / "devnews.toml"
    board.write_text(declaration(rows=("lead", "random"), references=(), dataset="devnews"))
    out = tmp_path / "board.md"
    argv = ["leaderboard", "--declaration", str(board), "--scores-dir", str(scores_dir)]
    assert main([*argv, "-o", str(out)]) == 0  # the split loaded (and warned) once per process
    text = out.read_text()
    assert f"**Unpinned data**: `{DEV_SPLIT}` was read from local files without a pinned sha256" in text
    assert f"(**unpinned**: `{DEV_SPLIT}`)" in text and "(sha256-pinned)" not in text
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["unpinned_splits"] == [DEV_SPLIT]


def test_a_pinned_board_says_nothing_of_unpinned_data(scores_dir, tmp_path, capsys):
    assert main(["run", "--ranker", "lead,random", "--split", "synthnews", "--no-progress"]) == 0
    board = tmp_path / "board.toml"
    board.write_text(declaration(rows=("lead", "random"), references=()))
    argv = ["leaderboard", "--declaration", str(board), "--scores-dir", str(scores_dir), "--format", "json"]
    capsys.readouterr()
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["unpinned_splits"] == []


def test_no_committed_entry_is_computed_on_unpinned_data():
    """A committed entry could only be unpinned by saying so in its header: none is."""
    committed = paths.COMMITTED_SCORES_DIR
    headers = {}
    for path in sorted(committed.glob("*/*.json")):
        with path.open(encoding="utf-8") as handle:
            headers[path] = handle.read(8192)  # the header's fields come first
    assert headers and all('"data_sha256": "' in head for head in headers.values())
    marked = [
        str(p.relative_to(committed)) for p, h in headers.items() if f'"data_sha256": "{UNPINNED_PREFIX}' in h
    ]
    assert marked == []
