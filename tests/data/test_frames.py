"""A split as tables (sourcesum.data.frames): the Hugging Face dataset holds every pair of the
verified split with typed features and the same sentences and labels; the DataFrame holds one row
per sentence; without ``datasets`` installed the call is one line naming the install. The other
way: a plugin dataset whose pinned file is such a Parquet file loads it back from the verified
bytes, equal to the split it came from, and an edited copy is refused."""

from __future__ import annotations

import functools
import io
import sys
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from sourcesum.data import DATASETS, Dataset, ParsedSplit, Source, SplitSpec, dataset, load_split
from sourcesum.data import datasets as registry
from sourcesum.data.frames import (
    PAIR_COLUMNS,
    SENTENCE_COLUMNS,
    hf_dataset_from_bytes,
    hf_features,
    parsed_from_hf,
    to_dataframe,
    to_hf_dataset,
)
from sourcesum.errors import DataError, SourceSumError
from sourcesum.util.hashing import sha256_bytes


@pytest.mark.parametrize("name", ["synth_alpha_sys", "synth_claims"])
def test_a_split_as_a_hugging_face_dataset_holds_every_pair_and_label(name):
    split = load_split(name)
    hf = to_hf_dataset(split)
    assert str(hf.split) == name and hf.num_rows == len(split)
    assert list(hf.features) == list(PAIR_COLUMNS) and hf.features == hf_features()
    import datasets  # here, not at collection: half a second to import

    assert hf.features["graded"] == datasets.List(datasets.Value("float64"))
    assert hf.features["binary"] == datasets.List(datasets.Value("int8"))
    assert split.sha256 in hf.info.description
    for row, pair, judgment in zip(hf, split.pairs, split.judgments, strict=True):
        assert row["id"] == pair.id and row["document_key"] == pair.document_key
        assert row["sentences"] == list(pair.sentences) and row["summary"] == pair.summary
        assert row["graded"] == judgment.graded.tolist() and row["soft"] == judgment.soft.tolist()
        assert row["binary"] == split.binary(pair.id).astype(int).tolist()
        assert row["votes"] == (None if judgment.votes is None else [list(v) for v in judgment.votes])
    assert [row["cluster"] for row in hf] == list(split.clusters)


def test_votes_are_the_annotators_raw_labels_where_the_dataset_has_them():
    news, claims = to_hf_dataset(load_split("synth_alpha_sys")), to_hf_dataset(load_split("synth_claims"))
    first = news[0]
    assert first["votes"] is not None and [sum(v) for v in first["votes"]] == first["graded"]
    assert all(row["votes"] is None for row in claims)


def test_a_split_as_a_dataframe_has_one_row_per_sentence():
    split = load_split("synth_beta_ref")
    frame = to_dataframe(split)
    assert list(frame.columns) == list(SENTENCE_COLUMNS)
    assert len(frame) == sum(p.n_sentences for p in split)
    assert frame["binary"].dtype == np.int8 and frame["sentence_index"].dtype == np.int64
    for pair in split:
        rows = frame[frame["pair_id"] == pair.id]
        assert rows["sentence"].tolist() == list(pair.sentences)
        assert rows["sentence_index"].tolist() == list(range(pair.n_sentences))
        assert rows["graded"].tolist() == split.graded(pair.id).tolist()
        assert rows["binary"].tolist() == split.binary(pair.id).astype(int).tolist()
    assert set(frame["split"]) == {"synth_beta_ref"}


def test_without_datasets_installed_the_error_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets raises ImportError
    with pytest.raises(SourceSumError, match=r"pip install 'sourcesum-bench\[hf\]'"):
        to_hf_dataset(load_split("synth_alpha_sys"))
    assert len(to_dataframe(load_split("synth_alpha_sys"))) > 0  # pandas alone still works


# -- the other way: a plugin dataset reading the Hugging Face layout -----------------------------


@functools.cache
def parquet(name: str = "synth_alpha_sys") -> bytes:
    """Split ``name`` as a Parquet file, built when a test first needs it (not at collection:
    it imports datasets and pyarrow)."""
    buffer = io.BytesIO()
    to_hf_dataset(load_split(name)).to_parquet(buffer)
    return buffer.getvalue()


class HubNews(Dataset):
    """A plugin dataset shipped in the Hugging Face layout: one pinned Parquet file per split."""

    name = "hubnews"
    title = "HubNews"
    splits: ClassVar[tuple[SplitSpec, ...]] = (
        SplitSpec("hub_alpha_sys", "Hub Alpha-Sys", 3, "alpha", ("hub_alpha_sys.parquet",), board=True),
    )
    binary_threshold = 2
    max_graded = 3

    def sources(self) -> dict[str, Source]:
        return {
            "hub": Source(
                name="hub",
                repository="me/hubnews",
                commit="v1",
                url_template="https://example.invalid/{commit}/{path}",
                license="CC0-1.0",
                files={
                    "hub_alpha_sys.parquet": {
                        "path": "hub_alpha_sys.parquet",
                        "sha256": sha256_bytes(parquet()),
                    }
                },
                env_var="SOURCESUM_HUBNEWS_DIR",
                download_dir="hubnews",
            )
        }

    def parse(self, spec: SplitSpec, files: dict[str, tuple[Path, bytes]]) -> ParsedSplit:
        path, payload = files[spec.files[0]]
        return parsed_from_hf(hf_dataset_from_bytes(path, payload), spec.name, path)


@pytest.fixture
def hubnews(tmp_path, monkeypatch):
    """HubNews registered, its file written where ``$SOURCESUM_HUBNEWS_DIR`` points."""
    (tmp_path / "hub_alpha_sys.parquet").write_bytes(parquet())
    monkeypatch.setenv("SOURCESUM_HUBNEWS_DIR", str(tmp_path))
    monkeypatch.setattr(registry, "_LOADED", {})
    DATASETS.register(HubNews)
    dataset.cache_clear()
    yield tmp_path / "hub_alpha_sys.parquet"
    DATASETS.unregister("hubnews")
    dataset.cache_clear()


def test_a_plugin_dataset_reads_the_hugging_face_layout_from_verified_bytes(hubnews):
    original, back = load_split("synth_alpha_sys"), load_split("hub_alpha_sys")
    assert back.sha256 == sha256_bytes(parquet()) and len(back) == len(original)
    for a, b in zip(original, back, strict=True):
        assert (a.id, a.sentences, a.summary, a.document, a.corpus, a.model) == (
            b.id,
            b.sentences,
            b.summary,
            b.document,
            b.corpus,
            b.model,
        )
        assert b.split == "hub_alpha_sys"
        assert np.array_equal(original.graded(a.id), back.graded(b.id))
        assert np.array_equal(original.binary(a.id), back.binary(b.id))
        assert original.judgment(a.id).votes == back.judgment(b.id).votes
    assert back.clusters == original.clusters


def test_an_edited_or_malformed_file_in_the_hugging_face_layout_is_refused(hubnews, monkeypatch):
    edited = parquet("synth_beta_sys")  # a valid Parquet file, but not the pinned one
    hubnews.write_bytes(edited)
    monkeypatch.setattr(registry, "_LOADED", {})
    with pytest.raises(DataError, match="sha256 .* does not match"):
        load_split("hub_alpha_sys")
    with pytest.raises(DataError, match=r"x.parquet: not a Parquet file"):
        hf_dataset_from_bytes(Path("x.parquet"), b"not parquet")
    rows = [
        {"id": "p1", "sentences": ["a", "b"], "graded": [1.0], "soft": [0.5], "summary": "s", "document": "d"}
    ]
    with pytest.raises(
        DataError, match=r"f.parquet: row 1 \(pair p1\): 2 sentences but labels of lengths \[1, 2\]"
    ):
        parsed_from_hf(rows, "hub_alpha_sys", Path("f.parquet"))
    with pytest.raises(
        DataError, match=r"row 1 \(pair p1\): not a pair in the Hugging Face layout \(KeyError\('summary'\)\)"
    ):
        parsed_from_hf(
            [{"id": "p1", "sentences": [], "graded": [], "soft": []}], "hub_alpha_sys", Path("f.parquet")
        )
