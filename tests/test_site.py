"""The static site, rendered in a real headless Chromium (Selenium, the system's chromium and
chromedriver). A missing browser is a failure, never a skip: CI installs it (.ci/run).

The site is built once per module by the CLI, the way `sourcesum site` builds the declared
board, from a small temporary store and a declaration on the synthetic dataset ``synthnews``
(lead, random and bm25 ranked, oracle as reference, on its four board splits of three pairs);
expectations come from the same declared board. The page budgets and the published rows are
checked on a real board too (``real_data``: the same rankers on SourceSum's four main splits,
plus the paper's published ROUGE-1 output).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import dataset_missing, declaration, skip_or_fail_without
from sourcesum import paths
from sourcesum.board import board_statistics, collect, collect_declared, read_declaration, view_of
from sourcesum.board.explorer import SCORE_DIGITS, explorer_data, explorer_ranks, pair_view, ranks
from sourcesum.board.view.cells import columns_of
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.errors import SourceSumError
from sourcesum.evaluation.measures import DEFAULT_MEASURES, NDCG, parse_measures
from sourcesum.outputs.site import (
    BOARD_INDEX_BUDGET,
    EXPLORER_BUDGET,
    INDEX_BUDGET,
    INDEX_FILE,
    PLOT_FILE,
    TASK_EXPLORER_BUDGET,
    build_site,
    embed_json,
    explorer_file,
)
from sourcesum.store.stores import ScoreStore
from support.browser import first_render_ms, headless_chromium, horizontal_overflow, set_viewport

SYNTHETIC_DECLARATION = declaration()
REAL_DECLARATION = declaration(dataset=None, published=("rouge1",))


def build(root: Path, declaration_text: str, splits: str):
    """(site folder, leaderboard, CLI arguments that select it): the site written by
    ``sourcesum site`` from a temporary store (the committed one is swapped for an empty folder,
    the statistics memo goes to a temporary cache)."""
    scores, declaration, out = root / "scores", root / "leaderboard.toml", root / "site"
    declaration.write_text(declaration_text)
    selection = ["--declaration", str(declaration), "--scores-dir", str(scores)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(paths, "COMMITTED_SCORES_DIR", root / "committed")
        patch.setenv("SOURCESUM_CACHE_DIR", str(root / "cache"))
        run = ["run", "--ranker", "lead,random,bm25,oracle", "--split", splits, "--scores-dir", str(scores)]
        assert main([*run, "--no-progress"]) == 0
        assert main(["site", "-o", str(out)] + selection) == 0
        board = collect_declared(read_declaration(declaration), ScoreStore(scores, writable=False))
    return out, board, selection


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """The synthetic site (module docstring)."""
    return build(tmp_path_factory.mktemp("site"), SYNTHETIC_DECLARATION, "synthnews")


@pytest.fixture(scope="module")
def built_real(tmp_path_factory: pytest.TempPathFactory):
    """The real site: only for tests marked ``real_data`` (module docstring)."""
    return build(tmp_path_factory.mktemp("real-site"), REAL_DECLARATION, "all")


@pytest.fixture(params=["synthetic", pytest.param("real", marks=[pytest.mark.real_data, pytest.mark.slow])])
def any_built(request):
    """Each site in turn: the synthetic one, and the real one (with a published row)."""
    return request.getfixturevalue("built" if request.param == "synthetic" else "built_real")


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


def embedded(page: Path) -> dict:
    """The JSON an explorer page embeds."""
    html = page.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert match is not None, page.name
    return json.loads(match.group(1))


def expected_order(per_pair_a, per_pair_b) -> list[int]:
    """Pair indices as the explorer lists them: largest A - B first, pairs where either value
    is undefined last, ties in pair order."""
    delta = np.asarray(per_pair_a, dtype=float) - np.asarray(per_pair_b, dtype=float)
    return sorted(range(len(delta)), key=lambda i: (not np.isfinite(delta[i]), -np.nan_to_num(delta[i]), i))


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


def test_explorer_data_lists_every_board_measure(built):
    """A board of other measures: the explorer names each (key, display name) and carries every
    pair's value of each for every row (null where undefined), rows in leaderboard order."""
    _, board, selection = built
    store = ScoreStore(Path(selection[3]), writable=False)
    measures = parse_measures("nDCG,AP,RR,P@2")
    other = collect_declared(read_declaration(Path(selection[1])), store, measures=measures)
    split = load_split("synth_alpha_ref")
    data = explorer_data(other, split.name)
    assert data["split"] == split.name and data["title"] == "Alpha-Ref"
    assert data["measures"] == [{"key": m.json_key, "name": m.display_name} for m in measures]
    assert [m["key"] for m in data["measures"]] == ["ndcg", "map", "rr", "p_at_2"]
    rows = other.ranked_rows + other.reference_rows
    assert data["rankers"] == [
        {"label": r.label, "name": r.name or r.label, "reference": r.reference} for r in rows
    ]
    assert rows[-1].label == "oracle" and [r.label for r in rows[:3]] == [r.label for r in board.ranked_rows]
    assert len(data["pairs"]) == len(split) and len(data["docs"]) == 3  # three documents
    nulls = 0
    for i, (pair, item) in enumerate(zip(split.pairs, data["pairs"], strict=True)):
        assert item["id"] == pair.id and data["docs"][item["doc"]] == list(pair.sentences)
        assert item["votes"] == [list(v) for v in split.judgment(pair.id).votes]
        for measure in measures:
            expected = [r.evaluations[split.name].per_pair[measure.name].iloc[i] for r in rows]
            shown = item["values"][measure.json_key]
            assert len(shown) == len(rows)
            for value, want in zip(shown, expected, strict=True):
                assert (value is None and math.isnan(want)) or value == want
                nulls += value is None
        for j, row in enumerate(rows):
            scores = row.entries[split.name].scores[pair.id]
            assert item["scores"][j] == pytest.approx(scores, rel=5e-4, abs=1e-12)  # 4 significant digits
            exact = [1 + sum(o > s for o in scores) for s in scores]
            shown = [1 + sum(o > s for o in item["scores"][j]) for s in item["scores"][j]]
            changed = {str(k): e for k, (e, r) in enumerate(zip(exact, shown, strict=True)) if e != r}
            assert item["ranks"][j] == (changed or None)
    # one pair of Alpha-Ref has a single annotator, none of whose sentences has 2 votes: MAP and
    # RR are undefined there, P@2 is 0
    (empty,) = [i for i, p in enumerate(split.pairs) if not any(split.binary(p.id))]
    assert nulls == 2 * len(rows)
    assert data["pairs"][empty]["values"]["map"] == data["pairs"][empty]["values"]["rr"] == [None] * len(rows)
    assert data["pairs"][empty]["values"]["p_at_2"] == [0.0] * len(rows)


def test_explorer_data_of_a_dataset_without_votes(scores_dir, capsys):
    """synthclaims has graded labels but no per-annotator votes: each sentence's "votes" is its
    graded relevance as a one-item list."""
    assert main(["run", "--ranker", "lead,oracle", "--split", "synthclaims", "--no-progress"]) == 0
    capsys.readouterr()
    from sourcesum.store.stores import open_stores

    board = collect(open_stores(), published=False, dataset_name="synthclaims")
    split = load_split("synth_claims")
    data = explorer_data(board, split.name)
    assert [r["label"] for r in data["rankers"]] == ["lead", "oracle"]
    for pair, item in zip(split.pairs, data["pairs"], strict=True):
        assert item["votes"] == [[float(g)] for g in split.graded(pair.id)]
    assert data["pairs"][3]["values"]["ndcg"] == [None, None]  # a claim no sentence supports


@pytest.mark.slow  # drives headless Chromium
def test_every_leaderboard_row_and_value_is_on_the_page(any_built, browser):
    out, board, _ = any_built
    open_page(browser, out / INDEX_FILE)
    zero_shot = [r for r in board.ranked_rows if not r.supervised]
    supervised = [r for r in board.ranked_rows if r.supervised]
    assert texts(browser, "#zero-shot tbody th") == [r.name for r in zero_shot]
    assert texts(browser, "#supervised tbody th") == [r.name for r in supervised]
    assert texts(browser, "#reference-rows tbody th") == [r.name for r in board.reference_rows]
    assert texts(browser, "#published-rows tbody th") == [r.name for r in board.published_rows]
    assert (board.published_rows != []) == (board.dataset.name == "sourcesum")
    names = {r.label: r.name for r in board.rows}
    human = board_statistics(board).human
    assert human is not None and texts(browser, "#human-table tbody th") == [
        names.get(x, x) for x in human.labels
    ]
    columns = columns_of(board)
    tables = (
        ("zero-shot", zero_shot),
        ("supervised", supervised),
        ("published-rows", board.published_rows),
        ("reference-rows", board.reference_rows),
    )
    for table, rows in tables:
        for position, row in enumerate(rows, start=1):
            cells = texts(browser, f"#{table} tbody tr:nth-child({position}) td", "data-v")
            assert len(cells) == len(columns)
            for cell, column in zip(cells, columns, strict=True):
                expected = row.value(column.split, column.measure)
                assert (cell == "") if not math.isfinite(expected) else float(cell) == expected
    # Significance marks: one bold best per column among rankers and published rows (Avg
    # included), daggers where the test says "not worse", ? where it is undecided.
    competing = "#zero-shot td {0}, #supervised td {0}, #published-rows td {0}"
    assert len(texts(browser, competing.format("strong"))) == len(board.best)
    for selector, decision in ((".dagger", "not significant"), (".undecided-mark", "undecided")):
        marks = len(texts(browser, competing.format(selector)))
        assert marks == sum(
            row.versus_best(c.split, c.measure) == decision
            and board.best.get((c.split, c.measure)) != row.label
            and math.isfinite(row.value(c.split, c.measure))
            for row in board.competing_rows
            for c in columns
        ), selector
    assert texts(browser, "#zero-shot td .ci")[0].startswith("[")
    # the compact table against lead: one row per competing row, a symbol per split column
    if board.lead is not None:
        assert texts(browser, "#lead-table tbody th") == [r.name for r in board.competing_rows]
    assert len(texts(browser, "#ties-table tbody tr")) == sum(len(r.ties) for r in board.rows)
    keys = " ".join(texts(browser, "#configurations-table td code"))
    assert all(entry.key in keys for row in board.rows if not row.published for entry in row.entries.values())
    assert "Source Identification in Abstractive Summarization" in texts(browser, "#cite pre")[0]


@pytest.mark.slow  # drives headless Chromium
def test_sorting_works_on_every_column(built, browser):
    out, board, _ = built
    open_page(browser, out / INDEX_FILE)
    zero_shot = [r for r in board.ranked_rows if not r.supervised]
    headers = browser.find_elements("css selector", "#zero-shot thead th button")
    columns = [None] + list(columns_of(board))
    assert len(headers) == len(columns)
    for index, (header, column) in enumerate(zip(headers, columns, strict=True), start=1):
        for direction in ("first", "second"):
            header.click()
            labels = texts(browser, "#zero-shot tbody th")
            assert sorted(labels) == sorted(r.name for r in zero_shot)
            if column is None:
                expected = sorted(labels, key=str.lower, reverse=direction == "second")
                assert labels == expected
                continue
            values = [board.row(label).value(column.split, column.measure) for label in labels]
            # Numbers: largest first on the first click, smallest first on the second.
            assert values == sorted(values, reverse=direction == "first")
            shown = [float(v) for v in texts(browser, f"#zero-shot tbody td:nth-child({index})", "data-v")]
            assert shown == values  # the cells moved with their rows
        state = texts(browser, "#zero-shot thead th", "aria-sort")
        assert state[index - 1] == ("descending" if column is None else "ascending")
        assert state.count("none") == len(columns) - 1


@pytest.mark.slow  # drives headless Chromium
def test_opening_a_pair_shows_its_sentences_votes_and_scores(built, browser):
    out, board, _ = built
    split = load_split("synth_alpha_sys")
    open_page(browser, out / explorer_file(split.name))
    a, b = board.ranked_rows[0], board.ranked_rows[1]
    assert browser.find_element("id", "ranker-a").get_attribute("value") == "0"
    assert browser.find_element("id", "measure").get_attribute("value") == "0"  # the first measure
    # The pair list: sorted by NDCG(A) - NDCG(B), largest first, from the leaderboard's per-pair values.
    delta = a.evaluations[split.name].per_pair[NDCG.name] - b.evaluations[split.name].per_pair[NDCG.name]
    expected = expected_order(a.evaluations[split.name].values(NDCG), b.evaluations[split.name].values(NDCG))
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
    votes = split.judgment(pair.id).votes
    assert texts(browser, "#sentences > li", "data-votes") == [",".join(map(str, v)) for v in votes]
    view = pair_view(split, pair, board, [a.label, b.label, third.label])
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
    # the pair's value of every board measure, for each ranker shown
    chips = texts(browser, "#pair-measures li")
    assert len(chips) == 3 and chips[0].startswith(f"{a.label}: ")
    for measure in board.measures:
        value = a.evaluations[split.name].per_pair[measure.name][pair.id]
        assert f"{measure.display_name} {value:.4f}" in chips[0]
    assert "#pair=" in browser.current_url and "m=ndcg" in browser.current_url  # the view can be linked
    linked = browser.current_url
    browser.get("about:blank")
    browser.get(linked)
    assert browser.find_element("id", "pair-id").text == pair.id
    assert len(texts(browser, "#sentences .scores li")) == 3 * pair.n_sentences


@pytest.mark.slow  # drives headless Chromium
def test_the_explorer_shows_exact_ranks_where_rounding_merged_scores(built, browser, tmp_path):
    """Where rounding to 4 significant digits merges a row's distinct scores, the page shows the
    exact scores' ranks (it carries them for the sentences whose rank rounding changed). One
    pair's `random` scores are replaced by distinct scores that all round to 0.5 but the first,
    the largest, which stays apart."""
    import copy

    _, built_board, _ = built
    board = copy.deepcopy(built_board)
    split = board.split("synth_alpha_sys")
    (row,) = [r for r in board.ranked_rows if r.label.startswith("random")]
    pair = split.pairs[0]
    n = len(pair.sentences)
    row.entries[split.name].scores[pair.id] = [0.9] + [0.5 + 1e-9 * k for k in range(1, n)]
    data = explorer_data(board, split.name)
    j = [r["label"] for r in data["rankers"]].index(row.label)
    # rounded, sentences 1..n-1 all rank 2; exactly, sentence k ranks n + 1 - k (the last stays 2)
    assert data["pairs"][0]["ranks"][j] == {str(k): n + 1 - k for k in range(1, n - 1)}
    out = tmp_path / "site"
    explorers = {s.name: data if s.name == split.name else explorer_data(board, s.name) for s in board.splits}
    build_site(view_of(board), explorers, out)
    set_viewport(browser, 1280, 900)
    browser.get(f"{(out / explorer_file(split.name)).as_uri()}#pair={pair.id}&show={row.label}")
    assert browser.find_element("id", "pair-id").text == pair.id
    shown = texts(browser, f"#sentences .scores li[data-ranker='{row.label}']", "data-rank")
    assert [int(r) for r in shown] == [1] + [n + 1 - k for k in range(1, n)]


def choose_measure(driver, index: int) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "measure")).select_by_value(str(index))


@pytest.mark.slow  # drives headless Chromium
def test_the_explorer_sorts_pairs_by_the_chosen_measure(built, browser, tmp_path):
    """The measure select lists every board measure (the CLI's site: NDCG and MAP; a site built
    from a board of nDCG, AP and RR: all three) and re-sorts the pairs by the chosen one; the
    hash keeps it (m=KEY), so a link reopens the same list."""
    out, board, selection = built
    split = load_split("synth_alpha_ref")  # MAP is undefined on one of its pairs
    a, b = board.ranked_rows[0], board.ranked_rows[1]
    orders = [
        expected_order(a.evaluations[split.name].values(m), b.evaluations[split.name].values(m))
        for m in board.measures
    ]
    assert orders[0] != orders[1]  # so the list shows which measure it is sorted by
    open_page(browser, out / explorer_file(split.name))
    assert texts(browser, "#measure option") == [m.display_name for m in board.measures] == ["NDCG", "MAP"]
    assert [int(i) for i in texts(browser, "#pairs button", "data-pair")] == orders[0]
    for index, measure in reversed(list(enumerate(board.measures))):
        choose_measure(browser, index)
        shown = [int(i) for i in texts(browser, "#pairs button", "data-pair")]
        assert shown == orders[index], measure.name
        assert f"m={measure.json_key}" in browser.current_url
    choose_measure(browser, 1)
    linked = browser.current_url
    browser.get("about:blank")
    browser.get(linked)
    assert browser.find_element("id", "measure").get_attribute("value") == "1"
    assert [int(i) for i in texts(browser, "#pairs button", "data-pair")] == orders[1]
    undefined = texts(browser, "#pairs button", "data-delta")
    assert undefined[-1] == "" and all(undefined[:-1])  # the pair without MAP comes last

    # a board of other measures, built in Python
    measures = parse_measures("nDCG,AP,RR")
    other = collect_declared(
        read_declaration(Path(selection[1])),
        ScoreStore(Path(selection[3]), writable=False),
        measures=measures,
    )
    site = tmp_path / "site"
    build_site(view_of(other), {s.name: explorer_data(other, s.name) for s in other.splits}, site)
    split = load_split("synth_alpha_sys")
    open_page(browser, site / explorer_file(split.name))
    assert texts(browser, "#measure option") == [m.display_name for m in measures] == ["NDCG", "MAP", "RR"]
    a, b = other.ranked_rows[0], other.ranked_rows[1]
    by_ndcg, by_rr = (
        expected_order(a.evaluations[split.name].values(m), b.evaluations[split.name].values(m))
        for m in (measures[0], measures[2])
    )
    assert by_ndcg != by_rr  # so the list shows which measure it is sorted by
    assert [int(i) for i in texts(browser, "#pairs button", "data-pair")] == by_ndcg
    choose_measure(browser, 2)
    assert [int(i) for i in texts(browser, "#pairs button", "data-pair")] == by_rr
    deltas = [float(d) for d in texts(browser, "#pairs button", "data-delta")]
    rr = measures[2]
    assert deltas == pytest.approx(
        [a.evaluations[split.name].values(rr)[i] - b.evaluations[split.name].values(rr)[i] for i in by_rr]
    )
    assert "m=RR" in browser.current_url
    chip = texts(browser, "#pair-measures li")[0]
    assert all(f"{m.display_name} " in chip for m in measures)


@pytest.mark.slow  # drives headless Chromium
def test_first_render_and_no_horizontal_scrolling(any_built, browser):
    out, board, _ = any_built
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


@pytest.mark.real_data
@pytest.mark.slow  # computes bm25 on the four main splits
def test_page_sizes_within_budgets(built_real):
    """On SourceSum's four main splits (505 pairs at most) with five rows."""
    out, board, _ = built_real
    index_size = (out / INDEX_FILE).stat().st_size + (out / PLOT_FILE).stat().st_size
    assert index_size <= INDEX_BUDGET
    for split in board.splits:
        assert (out / explorer_file(split.name)).stat().st_size <= EXPLORER_BUDGET, split.name
    assert [r.label for r in board.published_rows] == ["published: ROUGE-1"]


@pytest.mark.real_data
@pytest.mark.slow  # builds the whole committed board's site
def test_the_committed_site_fits_its_budgets(tmp_path):
    """The site of the committed board (every declared row; SourceSum, the held-out test, WiCE
    and QMSum): SourceSum's explorers within the explorer budget, the transfer tasks' within
    theirs, the index page with its plot within the committed board's."""
    skip_or_fail_without(
        dataset_missing("wice", "SOURCESUM_WICE_DIR") or dataset_missing("qmsum", "SOURCESUM_QMSUM_DIR")
    )
    out = tmp_path / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))
        assert main(["site", "-o", str(out)]) == 0
    declared = read_declaration(paths.DECLARATION_PATH)
    assert (out / INDEX_FILE).stat().st_size + (out / PLOT_FILE).stat().st_size <= BOARD_INDEX_BUDGET
    for name in dataset(declared.dataset).board_splits():
        assert (out / explorer_file(name)).stat().st_size <= EXPLORER_BUDGET, name
    tasks = [name for task in declared.tasks for name in dataset(task.dataset).board_splits()]
    assert len(tasks) == 2
    for name in tasks:
        assert (out / explorer_file(name)).stat().st_size <= TASK_EXPLORER_BUDGET, name


@pytest.mark.slow  # drives headless Chromium
def test_row_names_stay_visible_and_readable_when_a_wide_table_scrolls(built, browser):
    """At 1000 px (wider screens show the cards layout below 900) the results table scrolls
    sideways inside its box: the name column stays in place (sticky) and is never squeezed
    below a readable width; headers break between words."""
    out, board, _ = built
    open_page(browser, out / INDEX_FILE, width=1000)
    for table in ("zero-shot", "configurations-table"):
        box = browser.find_element("css selector", f"#{table}").find_element("xpath", "..")
        first = browser.find_element("css selector", f"#{table} tbody th")
        before = first.rect["x"]
        assert first.rect["width"] >= 150, table
        browser.execute_script("arguments[0].scrollLeft = 10000", box)
        scrolled = browser.execute_script("return arguments[0].scrollLeft", box)
        assert scrolled > 0, table  # the table is wider than its box
        after = browser.find_element("css selector", f"#{table} tbody th").rect["x"]
        assert after == pytest.approx(before, abs=1), (table, scrolled)
    headers = texts(browser, "#zero-shot thead th")
    assert all("-" not in h for h in headers)  # hyphens are non-breaking (U+2011)


@pytest.mark.parametrize("seed", range(20))
def test_explorer_ranks_keep_only_what_rounding_changes(seed):
    """ranks() is 1 + the number of larger scores (brute force, ties drawn on purpose); the page
    carries the exact rank of exactly the sentences whose rank among the rounded scores differs,
    and those with the page's own ranking of the rounded scores give the exact ranks."""
    rng = np.random.default_rng(seed)
    scores = rng.choice(rng.normal(size=6), size=12).tolist()  # repeated values: ties
    assert ranks(scores) == [1 + sum(o > s for o in scores) for s in scores]
    shown = [float(f"{s:.{SCORE_DIGITS}g}") for s in scores]
    assert explorer_ranks(scores, shown) is None  # rounding merges no distinct value here
    close = [s + 1e-9 * k for k, s in enumerate(scores)]  # distinct scores that rounding merges
    expected = [1 + sum(o > s for o in close) for s in close]
    rounded = [float(f"{s:.{SCORE_DIGITS}g}") for s in close]
    changed = explorer_ranks(close, rounded)
    merged = ranks(rounded)
    assert changed and all(expected[int(i)] != merged[int(i)] for i in changed)
    for i, rank in changed.items():
        merged[int(i)] = rank
    assert merged == expected
