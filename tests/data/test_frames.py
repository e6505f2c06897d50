"""A split as tables (sourcesum.data.frames): the Hugging Face dataset holds every pair of the
verified split with typed features and the same sentences and labels; the DataFrame holds one row
per sentence; without ``datasets`` installed the call is one line naming the install."""

from __future__ import annotations

import sys

import datasets
import numpy as np
import pytest
from sourcesum.data import load_split
from sourcesum.data.frames import PAIR_COLUMNS, SENTENCE_COLUMNS, hf_features, to_dataframe, to_hf_dataset
from sourcesum.errors import SourceSumError


@pytest.mark.parametrize("name", ["synth_alpha_sys", "synth_claims"])
def test_a_split_as_a_hugging_face_dataset_holds_every_pair_and_label(name):
    split = load_split(name)
    hf = to_hf_dataset(split)
    assert str(hf.split) == name and hf.num_rows == len(split)
    assert list(hf.features) == list(PAIR_COLUMNS) and hf.features == hf_features()
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
