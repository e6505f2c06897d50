"""The static site, rendered in a real headless Chromium (Selenium, the system's chromium and
chromedriver). A missing browser is a failure, never a skip: CI installs it (.ci/run).

The site is built once per module by the CLI from a small temporary store and declaration (lead,
random and bm25 ranked, oracle as reference, the paper's published ROUGE-1 output, on the four
main splits), the way `sourcesum
leaderboard` builds the declared board; expectations come from the same declared board.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from sourcesum import paths
from sourcesum.browser import first_render_ms, headless_chromium, horizontal_overflow, set_viewport
from sourcesum.cli import main
from sourcesum.data import load_split
from sourcesum.errors import SourceSumError
from sourcesum.leaderboard import collect_declared, read_declaration
from sourcesum.measures import NDCG
from sourcesum.render import _columns
from sourcesum.show import pair_view
from sourcesum.site import EXPLORER_BUDGET, INDEX_BUDGET, INDEX_FILE, build_site, embed_json, explorer_file
from sourcesum.store import ScoreStore

DECLARATION = """
[[rows]]
ranker = "lead"

[[rows]]
ranker = "random"

[[rows]]
ranker = "bm25"

[[references]]
ranker = "oracle"

[[published]]
method = "rouge1"
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """(site folder, leaderboard, CLI arguments that select it): the site written by
    ``sourcesum site`` from a temporary store (the committed one is swapped for an empty folder,
    the statistics memo goes to a temporary cache)."""
    root = tmp_path_factory.mktemp("site")
    scores, declaration, out = root / "scores", root / "leaderboard.toml", root / "site"
    declaration.write_text(DECLARATION)
    selection = ["--declaration", str(declaration), "--scores-dir", str(scores)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(paths, "COMMITTED_SCORES_DIR", root / "committed")
        patch.setenv("SOURCESUM_CACHE_DIR", str(root / "cache"))
        assert (
            main(
                [
                    "run",
                    "--ranker",
                    "lead,random,bm25,oracle",
                    "--split",
                    "all",
                    "--scores-dir",
                    str(scores),
                    "--no-progress",
                ]
            )
            == 0
        )
        assert main(["site", "-o", str(out)] + selection) == 0
        board = collect_declared(read_declaration(declaration), ScoreStore(scores, writable=False))
    return out, board, selection


@pytest.fixture(scope="module")
def browser():
    try:
        driver = headless_chromium(1280, 900)
    except SourceSumError as exc:
        pytest.fail(f"the site tests need a headless browser: {exc}")
    yield driver
    driver.quit()


def open_page(driver, path: Path, width: int = 1280, height: int = 900) -> None:
    set_viewport(driver, width, height)
    driver.get(path.as_uri())


def texts(driver, selector: str, attribute: str | None = None) -> list[str]:
    """Text (or an attribute) of every element matching ``selector``, in document order."""
    script = (
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(e => arguments[1] === null ? e.textContent : e.getAttribute(arguments[1]));"
    )
    return driver.execute_script(script, selector, attribute)


def test_cli_writes_every_page(built):
    out, board, _ = built
    names = {p.name for p in out.iterdir()}
    assert {INDEX_FILE, "plot.png", "CITATION.cff"} <= names
    assert {explorer_file(s.name) for s in board.splits} <= names
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_build_is_deterministic_and_refuses_a_file_as_output(built, tmp_path, capsys):
    out, board, selection = built
    again = tmp_path / "again"
    build_site(board, again)
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
            if reference != "data:,":  # the empty inline favicon
                assert "//" not in reference and (out / reference).is_file(), (page.name, reference)


@pytest.mark.slow  # drives headless Chromium
def test_every_leaderboard_row_and_value_is_on_the_page(built, browser):
    out, board, _ = built
    open_page(browser, out / INDEX_FILE)
    assert texts(browser, "#leaderboard tbody th") == [r.label for r in board.ranked_rows]
    assert texts(browser, "#reference-rows tbody th") == [r.label for r in board.reference_rows]
    assert texts(browser, "#published-rows tbody th") == [r.label for r in board.published_rows] != []
    assert texts(browser, "#human-table tbody th") == board.human.labels
    columns = _columns(board)
    tables = (
        ("leaderboard", board.ranked_rows),
        ("published-rows", board.published_rows),
        ("reference-rows", board.reference_rows),
    )
    for table, rows in tables:
        for position, row in enumerate(rows, start=1):
            cells = texts(browser, f"#{table} tbody tr:nth-child({position}) td", "data-v")
            assert len(cells) == len(columns)
            for cell, (_, split, measure) in zip(cells, columns, strict=True):
                expected = row.value(split, measure)
                assert (cell == "") if not math.isfinite(expected) else float(cell) == expected
    # Significance marks: one bold best per column among rankers and published rows, daggers
    # where the test says "not worse".
    competing = "#leaderboard td {0}, #published-rows td {0}"
    assert len(texts(browser, competing.format("strong"))) == len(board.best)
    daggers = len(texts(browser, competing.format(".dagger")))
    assert daggers == sum(
        row.not_worse_than_best(split, measure) and board.best.get((split, measure)) != row.label
        for row in board.competing_rows
        for _, split, measure in columns
        if split is not None
    )
    assert texts(browser, "#leaderboard td .ci")[0].startswith("[")
    assert len(texts(browser, "#ties-table tbody tr")) == sum(len(r.ties) for r in board.rows)
    keys = " ".join(texts(browser, "#configurations-table td code"))
    assert all(entry.key in keys for row in board.rows if not row.published for entry in row.entries.values())
    assert "preferred-citation" in texts(browser, "#cite pre")[0]


@pytest.mark.slow  # drives headless Chromium
def test_sorting_works_on_every_column(built, browser):
    out, board, _ = built
    open_page(browser, out / INDEX_FILE)
    headers = browser.find_elements("css selector", "#leaderboard thead th button")
    columns = [("Ranker", None, None)] + _columns(board)
    assert len(headers) == len(columns)
    for index, (header, (_, split, measure)) in enumerate(zip(headers, columns, strict=True), start=1):
        for direction in ("first", "second"):
            header.click()
            labels = texts(browser, "#leaderboard tbody th")
            assert sorted(labels) == sorted(r.label for r in board.ranked_rows)
            if measure is None:
                expected = sorted(labels, key=str.lower, reverse=direction == "second")
                assert labels == expected
                continue
            values = [board.row(label).value(split, measure) for label in labels]
            # Numbers: largest first on the first click, smallest first on the second.
            assert values == sorted(values, reverse=direction == "first")
            shown = [float(v) for v in texts(browser, f"#leaderboard tbody td:nth-child({index})", "data-v")]
            assert shown == values  # the cells moved with their rows
        state = texts(browser, "#leaderboard thead th", "aria-sort")
        assert state[index - 1] == ("descending" if measure is None else "ascending")
        assert state.count("none") == len(columns) - 1


@pytest.mark.slow  # drives headless Chromium
def test_opening_a_pair_shows_its_sentences_votes_and_scores(built, browser):
    out, board, _ = built
    split = load_split("xsum_pegasus")
    open_page(browser, out / explorer_file(split.name))
    a, b = board.ranked_rows[0], board.ranked_rows[1]
    assert browser.find_element("id", "ranker-a").get_attribute("value") == "0"
    # The pair list: sorted by NDCG(A) - NDCG(B), largest first, from the leaderboard's per-pair values.
    delta = a.evaluations[split.name].per_pair[NDCG.name] - b.evaluations[split.name].per_pair[NDCG.name]
    expected = sorted(range(len(split)), key=lambda i: (-delta.iloc[i], i))
    shown = [int(i) for i in texts(browser, "#pairs button", "data-pair")]
    assert shown == expected
    assert np.allclose(
        [float(d) for d in texts(browser, "#pairs button", "data-delta")], delta.iloc[expected]
    )
    browser.find_element("id", "order").click()
    assert [int(i) for i in texts(browser, "#pairs button", "data-pair")][0] == int(
        np.argmin(delta.to_numpy())
    )
    browser.find_element("id", "order").click()

    # Open the pair where A beats B the most, and also show a third ranker.
    browser.find_element("css selector", "#pairs li:first-child button").click()
    third = board.ranked_rows[2]
    browser.find_element("css selector", "#rankers input[value='2']").click()
    pair = split.pairs[expected[0]]
    assert browser.find_element("id", "pair-id").text == pair.id
    assert browser.find_element("id", "summary").text == pair.summary
    assert texts(browser, "#sentences .text") == list(pair.sentences)
    assert texts(browser, "#sentences > li", "data-votes") == [",".join(map(str, v)) for v in pair.votes]
    view = pair_view(pair, board, [a.label, b.label, third.label])
    for row in (a, b, third):
        ranks = texts(browser, f"#sentences .scores li[data-ranker='{row.label}']", "data-rank")
        scores = texts(browser, f"#sentences .scores li[data-ranker='{row.label}']", "data-score")
        assert [int(r) for r in ranks] == [s["scores"][row.label]["rank"] for s in view["sentences"]]
        assert np.allclose(
            [float(s) for s in scores],
            [s["scores"][row.label]["score"] for s in view["sentences"]],
            rtol=1e-3,
            atol=1e-12,
        )
    assert (
        f"NDCG {a.evaluations[split.name].per_pair[NDCG.name][pair.id]:.4f}"
        in texts(browser, "#pair-measures li")[0]
    )
    assert "#pair=" in browser.current_url  # the view can be linked
    linked = browser.current_url
    browser.get("about:blank")
    browser.get(linked)
    assert browser.find_element("id", "pair-id").text == pair.id
    assert len(texts(browser, "#sentences .scores li")) == 3 * pair.n_sentences


@pytest.mark.slow  # drives headless Chromium
def test_budgets_size_first_render_and_no_horizontal_scrolling(built, browser):
    out, board, _ = built
    index_size = (out / INDEX_FILE).stat().st_size + (out / "plot.png").stat().st_size
    assert index_size <= INDEX_BUDGET
    for split in board.splits:
        assert (out / explorer_file(split.name)).stat().st_size <= EXPLORER_BUDGET, split.name
    pages = [out / INDEX_FILE] + [out / explorer_file(s.name) for s in board.splits]
    browser.get_log("browser")  # drop earlier messages
    for page in pages:
        browser.get("about:blank")
        open_page(browser, page)
        assert first_render_ms(browser) <= 1000, page.name
        assert [m for m in browser.get_log("browser") if m["level"] == "SEVERE"] == [], page.name
    for page in pages:
        open_page(browser, page, width=390, height=844)
        if page.name != INDEX_FILE:  # a pair with its scores open, as a reader sees it
            browser.find_element("css selector", "#rankers input[value='2']").click()
        assert horizontal_overflow(browser) == [], page.name
