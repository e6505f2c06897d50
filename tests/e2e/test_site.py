"""The static site, rendered in a real headless Chromium (Selenium, the system's chromium and
chromedriver). A missing browser is a failure, never a skip: CI installs it (.ci/run).

The site is built once per module by the CLI, the way `sourcesum site` builds the declared
board, from a small temporary store and a declaration on the synthetic dataset ``synthnews``
(lead, random and bm25 ranked, oracle as reference, on its four board splits of three pairs);
expectations come from the same declared board. The page budgets and the published rows are
checked on a real board too (``real_data``: the same rankers on SourceSum's four main splits,
plus the paper's published ROUGE-1 output)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sourcesum import paths
from sourcesum.board import board_statistics, collect_declared, read_declaration, view_of
from sourcesum.board.explorer import explorer_data, pair_view
from sourcesum.board.view.cells import columns_of
from sourcesum.cli import main
from sourcesum.data import dataset, load_split
from sourcesum.errors import SourceSumError
from sourcesum.evaluation.measures import NDCG, parse_measures
from sourcesum.outputs.site import (
    BOARD_INDEX_BUDGET,
    EXPLORER_BUDGET,
    INDEX_BUDGET,
    INDEX_FILE,
    PLOT_FILE,
    TASK_EXPLORER_BUDGET,
    build_site,
    explorer_file,
)
from sourcesum.store.stores import ScoreStore
from support.boards import declaration
from support.browser import first_render_ms, headless_chromium, horizontal_overflow, set_viewport
from support.data import dataset_missing, skip_or_fail_without
from support.site import cli_site

REAL_DECLARATION = declaration(dataset=None, published=("rouge1",))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """The synthetic site (module docstring)."""
    return cli_site(tmp_path_factory.mktemp("site"), declaration(), "synthnews")


@pytest.fixture(scope="module")
def built_real(tmp_path_factory: pytest.TempPathFactory):
    """The real site: only for tests marked ``real_data`` (module docstring)."""
    return cli_site(tmp_path_factory.mktemp("real-site"), REAL_DECLARATION, "all")


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


def expected_order(per_pair_a, per_pair_b) -> list[int]:
    """Pair indices as the explorer lists them: largest A - B first, pairs where either value
    is undefined last, ties in pair order."""
    delta = np.asarray(per_pair_a, dtype=float) - np.asarray(per_pair_b, dtype=float)
    return sorted(range(len(delta)), key=lambda i: (not np.isfinite(delta[i]), -np.nan_to_num(delta[i]), i))


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
    statistics = board_statistics(board)
    human = statistics.human
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
            statistics.of(row).versus_best(c.split, c.measure) == decision
            and board.best.get((c.split, c.measure)) != row.label
            and math.isfinite(row.value(c.split, c.measure))
            for row in board.competing_rows
            for c in columns
        ), selector
    assert texts(browser, "#zero-shot td .ci")[0].startswith("[")
    # the compact table against lead: one row per competing row, a symbol per split column
    if board.lead is not None:
        assert texts(browser, "#lead-table tbody th") == [r.name for r in board.competing_rows]
    assert len(texts(browser, "#ties-table tbody tr")) == sum(len(statistics.of(r).ties) for r in board.rows)
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
    assert "m=rr" in browser.current_url
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
def test_the_committed_site_fits_its_budgets(tmp_path, request):
    """The site of the committed board (every declared row; SourceSum, the held-out test, WiCE
    and QMSum): SourceSum's explorers within the explorer budget, the transfer tasks' within
    theirs, the index page with its plot within the committed board's. Its statistics come from
    the memo the run's cold render of the committed board filled (sizes do not depend on it)."""
    skip_or_fail_without(
        dataset_missing("wice", "SOURCESUM_WICE_DIR") or dataset_missing("qmsum", "SOURCESUM_QMSUM_DIR")
    )
    out = tmp_path / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCESUM_CACHE_DIR", str(request.getfixturevalue("committed_render").cache))
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


@pytest.mark.slow  # drives headless Chromium
def test_the_avg_columns_are_in_view_at_1400_px(any_built, browser):
    """At 1400 px the results tables (four splits, two measures, each cell with its CI) fit their
    box: both Avg columns are in view without scrolling sideways, headers breaking after a
    hyphen where a column needs it."""
    out, board, _ = any_built
    open_page(browser, out / INDEX_FILE, width=1400)
    tables = [
        t
        for t in ("zero-shot", "supervised", "published-rows", "reference-rows")
        if browser.find_elements("css selector", f"#{t}")
    ]
    assert "zero-shot" in tables
    for table in tables:
        seen = browser.execute_script(
            "const t = document.getElementById(arguments[0]), box = t.parentElement.getBoundingClientRect();"
            "const cells = Array.from(t.querySelectorAll('thead th, tbody tr:first-child td'))"
            "  .filter(c => /^Avg /.test(c.textContent.trim()) || /^Avg /.test(c.dataset.label || ''));"
            "return {scroll: t.parentElement.scrollWidth - t.parentElement.clientWidth,"
            "  cells: cells.map(c => { const r = c.getBoundingClientRect();"
            "    return [c.textContent.trim().slice(0, 12), r.left >= box.left - 1 && r.right <= box.right + 1]; })};",
            table,
        )
        assert len(seen["cells"]) == 2 * len(board.measures), (table, seen)  # headers and first row
        assert seen["scroll"] <= 1 and all(inside for _, inside in seen["cells"]), (table, seen)
