"""The Hub dataset export (sourcesum.outputs.hub): ``datasets.load_dataset(folder)`` reads every
split back equal to the harness's (pair counts, sentences, relevance), one config per dataset
and a default one with every split; the card's YAML header gives configs, licenses, task
categories, citations, sources with their commits, and the sha256 of every file read and
written; a later export overwrites only its own files. ``real_data``: every split of the
built-in datasets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from sourcesum.data import dataset, load_split
from sourcesum.errors import SourceSumError
from sourcesum.outputs.hub import CARD_NAME, INDEX_NAME, export_hf, hub_licenses
from sourcesum.util.hashing import sha256_bytes
from support.data import dataset_missing, skip_or_fail_without

SYNTHETIC = ("synthnews", "synthclaims")


def header(folder: Path) -> dict:
    """The YAML header of the folder's dataset card."""
    text = (folder / CARD_NAME).read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def assert_round_trip(folder: Path, names: tuple[str, ...], cache: Path) -> None:
    """``load_dataset(folder)`` holds every split of ``names`` equal to the harness's; each
    dataset's config holds exactly its splits."""
    import datasets  # here, not at collection: half a second to import

    loaded = datasets.load_dataset(str(folder), cache_dir=str(cache))
    expected = [spec.name for name in names for spec in dataset(name).splits]
    assert list(loaded) == expected
    for name in expected:
        split, rows = load_split(name), loaded[name]
        assert rows.num_rows == len(split), name
        assert rows["id"] == [p.id for p in split]
        assert rows["sentences"] == [list(p.sentences) for p in split], name
        assert rows["graded"] == [j.graded.tolist() for j in split.judgments], name
        assert rows["binary"] == [split.binary(p.id).astype(int).tolist() for p in split], name
    for name in names:
        config = datasets.load_dataset(str(folder), name, cache_dir=str(cache))
        assert list(config) == [spec.name for spec in dataset(name).splits]


def test_load_dataset_reads_every_split_back_equal(tmp_path):
    folder = tmp_path / "hub"
    written = export_hf(SYNTHETIC, folder)
    assert written[-1] == folder / INDEX_NAME and folder / CARD_NAME in written
    assert folder / "synthnews" / "synth_alpha_sys.parquet" in written
    assert folder / "synthclaims" / "synth_claims.parquet" in written
    assert_round_trip(folder, SYNTHETIC, tmp_path / "cache")


def test_the_card_header_gives_configs_licenses_citations_commits_and_checksums(tmp_path):
    folder = tmp_path / "hub"
    export_hf(SYNTHETIC, folder)
    meta = header(folder)
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert list(configs) == ["default", *SYNTHETIC] and configs["default"]["default"] is True
    assert [f["split"] for f in configs["synthclaims"]["data_files"]] == ["synth_claims"]
    assert meta["license"] == ["apache-2.0"] and meta["task_categories"] == [
        "text-retrieval",
        "summarization",
    ]
    assert meta["size_categories"] == ["n<1K"] and meta["language"] == ["en"]
    block = meta["sourcesum"]
    assert block["exported_by"].startswith("sourcesum-bench ")
    news = block["datasets"]["synthnews"]
    assert news["license"] == "Apache-2.0" and news["citation"] == dataset("synthnews").citation
    assert news["sources"] == {
        "synthetic": {"repository": "sourcesum-bench/tests", "commit": "fixture", "license": "Apache-2.0"}
    }
    for name, info in news["splits"].items():
        split = load_split(name)
        assert info["pairs"] == len(split) and info["data_sha256"] == split.sha256
        assert info["parquet_sha256"] == sha256_bytes((folder / info["parquet"]).read_bytes())
        for file, pin in info["files"].items():  # the sha256 of every file the split was read from
            assert pin == {
                "sha256": dataset("synthnews").sources()["synthetic"].files[file]["sha256"],
                "source": "synthetic",
            }
    held_out = news["splits"]["synth_alpha_sys_heldout"]["files"]
    assert list(held_out) == ["synth_alpha_sys_all.json", "synth_alpha_sys.json"]
    body = (folder / CARD_NAME).read_text(encoding="utf-8")
    assert "## SynthNews (config `synthnews`)" in body and dataset("synthnews").citation in body


def test_a_second_export_overwrites_only_its_own_files(tmp_path):
    folder = tmp_path / "hub"
    export_hf(SYNTHETIC, folder)
    first = {p: p.read_bytes() for p in folder.rglob("*.parquet")}
    export_hf(["synthnews"], folder)  # same bytes for the same data; synthclaims's file removed
    assert {p: p.read_bytes() for p in folder.rglob("*.parquet")} == {
        p: b for p, b in first.items() if p.parent.name == "synthnews"
    }
    assert set(json.loads((folder / INDEX_NAME).read_text())["files"]) == {
        CARD_NAME,
        *(f"synthnews/{spec.name}.parquet" for spec in dataset("synthnews").splits),
    }
    foreign = tmp_path / "foreign"
    (foreign / "synthnews").mkdir(parents=True)
    (foreign / "synthnews" / "synth_alpha_sys.parquet").write_bytes(b"someone else's")
    with pytest.raises(SourceSumError, match="would overwrite 1 file"):
        export_hf(SYNTHETIC, foreign)
    assert (foreign / "synthnews" / "synth_alpha_sys.parquet").read_bytes() == b"someone else's"


def test_license_statements_map_to_hub_ids():
    wice = (
        "ODC-BY-1.0 (annotations); text: Wikipedia (CC BY-SA 4.0) and web pages (Common Crawl terms of use)"
    )
    assert hub_licenses(wice) == ["odc-by", "cc-by-sa-4.0"]
    assert hub_licenses("MIT") == ["mit"] and hub_licenses("research use only") == ["other"]


@pytest.mark.real_data
def test_the_real_datasets_round_trip(tmp_path):
    names = ("sourcesum", "wice", "qmsum")
    for name, variable in (("wice", "SOURCESUM_WICE_DIR"), ("qmsum", "SOURCESUM_QMSUM_DIR")):
        skip_or_fail_without(dataset_missing(name, variable))
    folder = tmp_path / "hub"
    export_hf(names, folder)
    assert_round_trip(folder, names, tmp_path / "cache")
    meta = header(folder)
    assert meta["license"] == ["apache-2.0", "odc-by", "cc-by-sa-4.0", "mit"]
    source = meta["sourcesum"]["datasets"]["sourcesum"]["sources"]["sourcesum"]
    assert (
        source["repository"] == "suhara/sourcesum"
        and source["commit"] == dataset("sourcesum").sources()["sourcesum"].commit
    )
    assert meta["sourcesum"]["datasets"]["sourcesum"]["splits"]["xsum_pegasus"]["pairs"] == 119
