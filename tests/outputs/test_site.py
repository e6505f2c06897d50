"""The static site's files (sourcesum.outputs.site), written by ``sourcesum site`` from a small
temporary store and a declaration on the synthetic dataset ``synthnews``: every page, built
deterministically, loading nothing from outside its folder, embedding exactly the explorer data
of its split, in script elements JSON cannot close."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sourcesum.board import view_of
from sourcesum.board.explorer import explorer_data
from sourcesum.cli import main
from sourcesum.evaluation.measures import DEFAULT_MEASURES
from sourcesum.outputs.site import INDEX_FILE, PLOT_FILE, build_site, embed_json, explorer_file
from support.boards import declaration
from support.site import cli_site


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """The synthetic site: lead, random and bm25 ranked, oracle as reference, on synthnews's four
    board splits (tests/support/site.py)."""
    return cli_site(tmp_path_factory.mktemp("site"), declaration(), "synthnews")


def embedded(page: Path) -> dict:
    """The JSON an explorer page embeds."""
    html = page.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert match is not None, page.name
    return json.loads(match.group(1))


def test_cli_writes_every_page(built):
    out, board, _ = built
    names = {p.name for p in out.iterdir()}
    assert {INDEX_FILE, PLOT_FILE, "CITATION.cff"} <= names
    assert {explorer_file(s.name) for s in board.splits} <= names
    assert [s.name for s in board.splits] == [
        "synth_alpha_sys",
        "synth_alpha_ref",
        "synth_beta_sys",
        "synth_beta_ref",
    ]
    assert (out / PLOT_FILE).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    index = (out / INDEX_FILE).read_text(encoding="utf-8")
    assert "<h1>SynthNews leaderboard</h1>" in index and 'id="published-rows"' not in index


def test_build_is_deterministic_and_refuses_a_file_as_output(built, tmp_path, capsys):
    out, board, selection = built
    again = tmp_path / "again"
    build_site(view_of(board), {s.name: explorer_data(board, s.name) for s in board.splits}, again)
    for path in out.iterdir():
        assert (again / path.name).read_bytes() == path.read_bytes(), path.name
    target = tmp_path / "a-file"
    target.write_text("x")
    assert main(["site", "-o", str(target)] + selection) == 2
    assert f"{target} exists and is not a folder" in capsys.readouterr().err


def test_embedded_json_cannot_close_its_script_element():
    data = {"text": "</script><script>alert(1)</script> & <!-- x -->", "n": [1.5, None]}
    text = embed_json(data)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == data


def test_pages_load_nothing_from_outside_the_folder(built):
    out, _, _ = built
    for page in out.glob("*.html"):
        html = page.read_text(encoding="utf-8")
        for reference in re.findall(r'(?:src|href)="([^"#]*)', html):
            if reference not in ("data:,", ""):  # the empty inline favicon; links within the page
                assert "//" not in reference and (out / reference).is_file(), (page.name, reference)


def test_explorer_pages_embed_the_default_measures_of_the_board(built):
    """`sourcesum site` renders the board's default measures; each page embeds exactly
    explorer_data of its split."""
    out, board, _ = built
    assert tuple(board.measures) == tuple(DEFAULT_MEASURES)
    for split in board.splits:
        data = embedded(out / explorer_file(split.name))
        assert data == explorer_data(board, split.name)
        assert data["measures"] == [{"key": "ndcg", "name": "NDCG"}, {"key": "map", "name": "MAP"}]
        assert all(set(pair["values"]) == {"ndcg", "map"} for pair in data["pairs"])


def test_a_board_with_a_probe_row_shows_the_committed_layer_curve(built, tmp_path, monkeypatch):
    """The probe's layer curve is copied beside the index and shown there on a board with a
    ``probe`` row (when the checkout has the figure); a board without one shows none."""
    import dataclasses

    from sourcesum.outputs import site

    _, board, _ = built
    explorers = {s.name: explorer_data(board, s.name) for s in board.splits}
    figure = tmp_path / "probe-layers.png"
    figure.write_bytes(b"\x89PNG\r\n\x1a\nthe curve")
    monkeypatch.setattr(site, "LAYER_CURVE_PATH", figure)
    view = view_of(board)
    without = tmp_path / "without"
    build_site(view, explorers, without)
    assert not (without / site.LAYER_CURVE_FILE).exists()
    assert 'id="probe-layers"' not in (without / INDEX_FILE).read_text(encoding="utf-8")
    probed = dataclasses.replace(
        view, ranked=(dataclasses.replace(view.ranked[0], ranker="probe"), *view.ranked[1:])
    )
    out = tmp_path / "with"
    build_site(probed, explorers, out)
    assert (out / site.LAYER_CURVE_FILE).read_bytes() == figure.read_bytes()
    index = (out / INDEX_FILE).read_text(encoding="utf-8")
    assert 'id="probe-layers"' in index and f'<img src="{site.LAYER_CURVE_FILE}"' in index
    monkeypatch.setattr(site, "LAYER_CURVE_PATH", tmp_path / "absent.png")  # a checkout without it
    bare = tmp_path / "bare"
    build_site(probed, explorers, bare)
    assert not (bare / site.LAYER_CURVE_FILE).exists()
