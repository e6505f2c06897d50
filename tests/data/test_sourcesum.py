"""The SourceSum dataset (sourcesum.data.sourcesum): its JSON schema errors name the file and the
pair; and (``real_data``) the real splits load verified with their votes, share their documents
as the corpora do, include the pairs without sources, and an edited copy is refused; the held-out
splits are the unfiltered splits minus the main pairs."""

from __future__ import annotations

from pathlib import Path

import pytest
from sourcesum.data import dataset, load_split, manifest, split_spec
from sourcesum.data.sources import local_copy, read_verified
from sourcesum.data.sourcesum import parse_sourcesum_rows, read_rows
from sourcesum.errors import DataError
from sourcesum.util.hashing import sha256_bytes
from support.data import SOURCESUM_BOARD, pinned_file, raw_rows


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
    rows = raw_rows("synth_beta_sys")
    corrupt(rows[1])
    with pytest.raises(DataError, match=rf"bad.json: pair {rows[1]['id']}: {message}"):
        parse_sourcesum_rows(rows, "synth_beta_sys", Path("bad.json"))


def test_a_file_that_is_not_a_list_of_pairs_is_an_error():
    with pytest.raises(DataError, match="bad.json: cannot be read as a SourceSum JSON list"):
        read_rows(Path("bad.json"), b"[{")
    with pytest.raises(DataError, match="bad.json: expected a JSON list of objects"):
        read_rows(Path("bad.json"), b'{"id": 1}')


@pytest.mark.real_data
@pytest.mark.parametrize("name,pairs", list(zip(SOURCESUM_BOARD, [119, 119, 468, 505], strict=True)))
def test_board_splits_load_verified_with_votes(name, pairs):
    split = load_split(name)
    info = pinned_file(name)
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
    info = pinned_file("xsum_pegasus")
    original = local_copy(info)
    assert original is not None
    copy = tmp_path / "xsum_pegasus.json"
    copy.write_bytes(original.read_bytes().replace(b"Dan Roan", b"Dan Roam", 1))
    monkeypatch.setenv("SOURCESUM_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match=r"xsum_pegasus.json: sha256 .* does not match .* SOURCESUM_DATA_DIR"):
        read_verified(info)


@pytest.mark.real_data
@pytest.mark.parametrize("main", SOURCESUM_BOARD)
def test_a_held_out_split_is_the_unfiltered_split_minus_the_main_pairs(main):
    held, unfiltered, board = load_split(f"{main}_heldout"), load_split(f"{main}_all"), load_split(main)
    assert len(held) + len(board) == len(unfiltered)
    assert {p.id for p in held} == {p.id for p in unfiltered} - {p.id for p in board}
    by_id = {p.id: p for p in unfiltered}
    for pair in held:  # the same pair and labels as in the unfiltered file
        original = by_id[pair.id]
        assert (pair.sentences, pair.summary, pair.document_key) == (
            original.sentences,
            original.summary,
            original.document_key,
        )
        assert held.judgment(pair.id).votes == unfiltered.judgment(pair.id).votes
        assert pair.split == held.name
    documents = {p.document_key for p in board}
    outside = sum(p.document_key not in documents for p in held)
    # XSum: none of the held-out documents is in a main pair; CNN/DM: 13 and 14 pairs are outside
    assert (len(held), outside) == {
        "xsum_pegasus": (479, 479),
        "xsum_reference": (479, 479),
        "cnn_pegasus": (36, 13),
        "cnn_reference": (80, 14),
    }[main]
    assert held.name not in dataset("sourcesum").board_splits()


@pytest.mark.real_data
def test_the_two_xsum_held_out_splits_share_their_documents():
    pegasus, reference = load_split("xsum_pegasus_heldout"), load_split("xsum_reference_heldout")
    assert {p.document_key for p in pegasus} == {p.document_key for p in reference}
