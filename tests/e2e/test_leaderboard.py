"""The committed board (``real_data``): leaderboard.md and leaderboard.png regenerate
byte-identical from the committed store and declaration alone; every count the board states
agrees with the board it describes (rows compared with ``lead``, marks against the human, the
human table's coverage, the CLI's row summary); the QMSum note names pmi's most frequent first
candidate."""

from __future__ import annotations

import re

import pytest
from sourcesum import paths
from sourcesum.board import board_statistics, collect_declared, read_declaration
from sourcesum.cli.boards import rows_text
from sourcesum.data import load_split
from sourcesum.store.stores import ScoreStore

pytestmark = pytest.mark.real_data


@pytest.fixture(scope="module")
def board():
    return collect_declared(
        read_declaration(paths.DECLARATION_PATH), ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False)
    )


@pytest.fixture(scope="module")
def stats(board, committed_render):
    """The committed board's statistics, from the memo the run's cold render computed them into
    (tests/support/committed.py)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCESUM_CACHE_DIR", str(committed_render.cache))
        return board_statistics(board)


@pytest.fixture(scope="module")
def text() -> str:
    return (paths.PROJECT_ROOT / "leaderboard.md").read_text(encoding="utf-8")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_the_table_against_lead_counts_the_rows_compared(board, stats, text):
    """Per column of the table against `lead`: one mark per competing row compared with `lead`
    there, ▲ exactly on the rows the board finds significantly better."""
    section = text.split("## Against `lead`", 1)[1].split("\n## ", 1)[0]
    lines = [x for x in section.splitlines() if x.startswith("| ")]
    header, rows = _cells(lines[0]), [_cells(x) for x in lines[1:]]
    columns = [(s, m) for s in board.splits for m in board.measures]
    assert header[1:] == [f"{s.title} {m.display_name}" for s, m in columns]
    for index, (split, measure) in enumerate(columns, start=1):
        marks = [row[index] for row in rows]
        compared = [r for r in board.competing_rows if (split.name, measure) in stats.of(r).vs_lead]
        better = stats.against_lead(board, split.name, measure)
        assert sum(mark in ("▲", "▼", "=", "?") for mark in marks) == len(compared), header[index]
        assert marks.count("▲") == len(better), header[index]
        named = {row[0] for row in rows if row[index] == "▲"}
        assert named == {r.name for r in better}, header[index]


def test_the_human_tables_counts_add_up(board, stats, text):
    lines = text.splitlines()
    start = lines.index(next(x for x in lines if x.startswith("| Split | Pairs | Left out: 1 annotator")))
    header = _cells(lines[start])
    for line in lines[start + 2 : start + 2 + len(board.splits)]:
        cells = dict(zip(header, _cells(line), strict=True))
        split = next(s for s in board.splits if s.title == cells["Split"])
        one, mixed = (
            int(cells["Left out: 1 annotator"]),
            int(cells["Left out: annotator count differs across sentences"]),
        )
        two, more = int(cells["k = 2 (reference = 1 annotator, binary at 1 vote)"]), int(cells["k >= 3"])
        assert int(cells["Pairs"]) == len(split) == one + mixed + two + more
        without = cells["Pairs without a value: left out + every reference without a relevant sentence"]
        for part in without.split(" / "):
            left_out, extra = re.search(r"(\d+) \+ (\d+)$", part).groups()
            assert int(left_out) == one + mixed and int(extra) >= 0
    counts = next(x for x in lines if x.startswith("| rows ▲ / = / ▼ the human |"))
    measures = len(stats.human.measures)
    for index, cell in enumerate(_cells(counts)[1:]):
        split = board.splits[index // measures]  # columns: every measure of a split, split by split
        systems = [label for label in stats.human.labels[1:] if (label, split.name) in stats.human.per_pair]
        numbers = [int(n) for n in re.findall(r"(\d+) [▲=▼?]", cell)]
        assert sum(numbers) == len(systems), cell


def test_the_row_summary_adds_up(board):
    summary = rows_text(board)
    total, rankers, reference, published = map(int, re.findall(r"\d+", summary))
    assert total == len(board.rows) == rankers + reference + published
    assert published == len(board.published_rows) == 8


@pytest.mark.real_data
def test_committed_board_is_complete_and_leaderboard_md_is_current(committed_render):
    """The official board renders from the committed store alone, byte-identical to the
    committed leaderboard.md and leaderboard.png (so nothing a user computes can change it),
    from an empty memo (so a poisoned statistics or plot memo cannot reach a commit)."""
    code, err, out = committed_render.code, committed_render.stderr, committed_render.board
    assert code == 0, err
    assert out.read_text() == paths.LEADERBOARD_PATH.read_text()
    assert out.with_suffix(".png").read_bytes() == paths.LEADERBOARD_PATH.with_suffix(".png").read_bytes()


@pytest.mark.real_data
def test_the_qmsum_note_names_pmi_s_most_frequent_first_candidate():
    """The declared note's example is the candidate pmi ranks first most often, with its count."""
    import collections
    import tomllib

    import numpy as np
    from sourcesum.runner.configs import Configuration
    from sourcesum.store.stores import read_entry

    split = load_split("qmsum_test")
    key = Configuration.of("pmi", {"dtype": "float32"}).entry_key(split.name, split.sha256)
    entry = read_entry(paths.COMMITTED_SCORES_DIR / "pmi" / f"qmsum_test.{key}.json")
    first = collections.Counter()
    for pair in split:
        scores = np.array(entry.scores[pair.id])
        for text in {pair.sentences[i] for i in np.flatnonzero(scores == scores.max())}:
            first[text] += 1
    (text, count), (_, runner_up) = first.most_common(2)
    assert count > runner_up
    declared = tomllib.loads(paths.DECLARATION_PATH.read_text())
    note = next(t["note"] for t in declared["tasks"] if t["dataset"] == "qmsum")
    assert f'"{text}", the most frequent, is ranked first in {count} of the {len(split)} pairs' in note


def test_the_held_out_section_states_which_documents_the_main_pairs_share(text):
    """Counted here from the splits alone: each held-out split's documents that a main split of
    its corpus (either system) also holds, stated on the board for every split that has any."""
    section = text.split("## Held-out test", 1)[1].split("\n## ", 1)[0]
    stated = 0
    for corpus in ("xsum", "cnn"):
        main = {
            p.document_key for name in (f"{corpus}_pegasus", f"{corpus}_reference") for p in load_split(name)
        }
        for system in ("pegasus", "reference"):
            split = load_split(f"{corpus}_{system}_heldout")
            documents = {p.document_key for p in split}
            shared_pairs = sum(p.document_key in main for p in split)
            if documents & main:
                stated += 1
                assert (
                    f"{split.title}: {len(documents & main)} of {len(documents)} documents "
                    f"({shared_pairs} of {len(split)} pairs)"
                ) in section
            else:
                assert f"{split.title}: 0 of" not in section
    assert stated == 2  # CNN/DM's two held-out splits; XSum's share no document


def test_the_overflow_sentence_holds_for_the_committed_attention_entries(text):
    """ "its complete entries hold the scores that value gives, within the ranker's reproduction
    tolerance": attention's committed SourceSum entries under overflow=error and overflow=ties
    differ by at most the tolerance attention declares, on every score of every split."""
    import numpy as np
    from sourcesum.rankers import RANKERS
    from sourcesum.runner.configs import Configuration
    from sourcesum.store.stores import read_entry

    assert (
        "so its complete entries hold the scores that value gives, within the ranker's reproduction" in text
    )
    tolerance = RANKERS.get("attention").reproduction_tolerance
    assert 0 < tolerance <= 1e-5
    for name in ("xsum_pegasus", "xsum_reference", "cnn_pegasus", "cnn_reference"):
        split = load_split(name)
        entries = []
        for policy in ("error", "ties"):
            key = Configuration.of("attention", {"overflow": policy}).entry_key(split.name, split.sha256)
            entries.append(read_entry(paths.COMMITTED_SCORES_DIR / "attention" / f"{name}.{key}.json"))
        error, ties = entries
        assert set(error.scores) == set(ties.scores) == {p.id for p in split}
        gap = max(float(np.max(np.abs(np.subtract(error.scores[i], ties.scores[i])))) for i in error.scores)
        assert gap <= tolerance, (name, gap)
