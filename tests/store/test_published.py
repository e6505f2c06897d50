"""The paper's published outputs (sourcesum.store.published): pinned in the manifest, located
and verified like the data, prompts as verified templates, NaN scores replaced and counted.

Real data: every test that reads a published file is marked ``real_data`` (the manifest is
committed, so its check runs everywhere)."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from sourcesum import paths
from sourcesum.data import dataset, load_split
from sourcesum.data.sources import locate, read_verified
from sourcesum.errors import DataError, UnknownNameError
from sourcesum.store import published
from sourcesum.store.published import load_published, published_file, published_methods, read_prompt

CELLS = [(m, s) for m in published_methods() for s in m.reported]


def test_manifest_pins_thirty_outputs_and_two_prompts():
    source = published.source()
    assert source.name == "sourcesum-published" == dataset("sourcesum").published_source
    files = source.files
    assert len(CELLS) == 30 == sum(f.endswith(".json") for f in files)
    assert {f"{s}__{m.key}.json" for m, s in CELLS} == {f for f in files if f.endswith(".json")}
    assert {f for f in files if not f.endswith(".json")} == {"gpt_prompt_v1.txt", "gpt_prompt_v2.txt"}
    info = published_file("xsum_pegasus__perplexity.json")
    assert info.url.startswith("https://raw.githubusercontent.com/suhara/sourcesum/ba7043a")
    assert info.url.endswith("/outputs/xsum_pegasus__perplexity.json")
    assert info.env_var == "SOURCESUM_PUBLISHED_DIR" and info.download_dir == paths.DATA_ROOT / "published"
    assert published_file("gpt_prompt_v2.txt").url.endswith("/data/gpt_prompt_v2.txt")
    with pytest.raises(UnknownNameError, match="no published file 'nosuch.json'"):
        published_file("nosuch.json")
    # every split a method reports is a board split of SourceSum
    assert {s for _, s in CELLS} == set(dataset("sourcesum").board_splits())


@pytest.mark.real_data
def test_nan_scores_are_replaced_and_counted():
    for method, split in CELLS:
        output = load_published(split, method.key)
        rows = json.loads(output.path.read_bytes())
        flags = [[math.isnan(a[method.key]) for a in row["annotations"]] for row in rows]
        assert output.nan_replaced == sum(map(sum, flags))
        assert output.all_nan_pairs == sum(all(f) for f in flags)
        assert all(math.isfinite(x) for v in output.entry.scores.values() for x in v)
        assert output.entry.ranker == method.ranker == f"published:{method.key}"
        assert output.entry.complete and output.entry.data_sha256 == load_split(split).sha256
    attention = load_published("cnn_pegasus", "attention")
    assert attention.all_nan_pairs > 100  # the paper's cross-attention: whole pairs of NaN
    with pytest.raises(UnknownNameError, match="published no attention output for split 'xsum_reference'"):
        load_published("xsum_reference", "attention")


@pytest.mark.real_data
def test_prompts_are_verified_templates():
    v1, v2 = read_prompt("v1"), read_prompt("v2")
    assert "{summary}" in v2 and "{sentence}" in v2 and "0 to 100" in v2 and v1 != v2


@pytest.mark.real_data
def test_located_like_the_data(tmp_path, monkeypatch):
    shared = paths.env_dir("SOURCESUM_PUBLISHED_DIR")
    assert shared is not None
    info = published_file("xsum_pegasus__rouge1.json")
    assert locate(info) == shared / info.file  # 1. $SOURCESUM_PUBLISHED_DIR
    monkeypatch.setenv("SOURCESUM_PUBLISHED_DIR", str(tmp_path / "empty"))
    with pytest.raises(DataError, match="SOURCESUM_PUBLISHED_DIR=.* has no xsum_pegasus__rouge1.json"):
        locate(info)
    monkeypatch.delenv("SOURCESUM_PUBLISHED_DIR")
    # a download folder of its own, and the pinned file served from the shared copy
    here = dataclasses.replace(info, download_dir=tmp_path / "published")
    served = dataclasses.replace(here, url=(shared / info.file).as_uri())
    path = locate(served)  # 3. the pinned download, into the download folder
    assert (
        path == tmp_path / "published" / info.file and path.read_bytes() == (shared / info.file).read_bytes()
    )
    assert locate(here) == path  # 2. an earlier download (no URL needed)
    path.write_bytes(path.read_bytes().replace(b"0.", b"1.", 1))
    with pytest.raises(DataError, match=r"sha256 .* for published file xsum_pegasus__rouge1.json"):
        read_verified(here)
