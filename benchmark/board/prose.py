"""Sentences the board's outputs share (Markdown and the site say the same things).

Each text is a function of the view (counts, names) or a constant; ``quote`` is the character
around names (a backtick in Markdown, nothing on the site).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sourcesum.board.view import BoardView
from sourcesum.evaluation.human import HUMAN_LABEL
from sourcesum.stats.bootstrap import ALPHA
from sourcesum.stats.significance import BATCH_FLIPS, LEVEL, LOOK_LEVEL, LOOKS, MAX_FLIPS

TIES_TEXT = (
    "Share of pairs with at least one tied score, share of sentences tied with another sentence "
    "of their pair, and each split mean under four tie rules: worst-first (relevant sentences "
    "last within each block of tied scores), the default used above (NDCG: the expectation; MAP: "
    "scikit-learn's block AP), the exact expectation over uniform random orderings of tied "
    "scores (for NDCG the default itself), and best-first. Block AP is never below worst-first "
    "but is not the expectation: it can exceed it, and even best-first (two relevant sentences "
    "tied last among six: block 1/3, every ordering 4/15)."
)


def significance_rule(shared_documents_text: str) -> str:
    """How every mark (†, ?, ▲ / ▼, the lists against ``lead``) is decided."""
    shared = f", so {shared_documents_text} flip them together" if shared_documents_text else ""
    return (
        "Each row is compared with the column's best by a two-sided paired randomization test "
        f"(document-level sign flips; in the Avg columns the statistic is the mean of the split means{shared}), "
        f"Holm-corrected across the column's rankers and published systems at {ALPHA}. A p-value "
        "from random sign flips has Monte Carlo error, so the decision is read from an interval "
        "of the exact p-value (the one every sign pattern would give): Holm is applied to both "
        f"ends; a row is significantly worse when the adjusted upper end is below {ALPHA}, not "
        f"significantly worse (†) when the adjusted lower end is at least {ALPHA}. While neither "
        "holds, the tests that can move a mark draw more sign flips "
        f"({BATCH_FLIPS:,}, then doubling; each test from its own seed, derived from the two rows "
        f"and the column) up to {MAX_FLIPS:,}, and a row still undecided there is marked ?, "
        f"never †. A test looks at most {LOOKS} times, each at {LOOK_LEVEL:.2%}, so its intervals "
        f"all hold its exact p-value with probability at least {LEVEL:.0%}: a mark differs from "
        "the exact p-values' only where an interval of its column misses, whatever the seed."
    )


LEAD_TABLE_TEXT = (
    "Each competing row against `lead` per column: ▲ significantly better, ▼ significantly worse, "
    "= not significantly different, ? undecided (two-sided paired randomization test over "
    "documents, Holm-corrected across all rankers and published systems compared with `lead` in "
    "the column, decided as the † marks are)."
)

ROWS_TEXT = (
    "Every row of every board (this dataset's, each task's and the held-out test's): its display "
    "name, ranker, version, full parameters (its label), entry keys per split and the library "
    "versions its entries were computed with. A key is 12 hex digits of sha256 over "
    "(ranker, version, parameters, data sha256); the scores live in the score store as "
    "`<ranker>/<split>.<key>.json`. To cite a row, report its name, ranker and version, and for a "
    "plugin its package and version (in the libraries column)."
)

LEAD_TEXT = (
    "rows significantly better than `lead` (two-sided paired randomization test over documents, "
    "Holm-corrected across all rankers and published systems compared with `lead` in the column, "
    f"adjusted Monte Carlo interval below {ALPHA} as for †, higher mean), per column"
)

HUMAN_TEXT = (
    "Annotators and rankers scored against the same references. For each pair annotated by k >= 2 "
    "annotators and each held-out annotator, the reference is the *other* k-1 annotators' votes: "
    "graded = their number of 1-votes (NDCG), binary = at least min(2, k-1) of them (MAP). "
    f"`{HUMAN_LABEL}` scores the held-out annotator's 0/1 votes against that reference; every other "
    "row scores its own per-sentence scores against the same reference. A pair's value is the mean "
    "over its references, a split's over its pairs. Each cell answers: does this system agree with "
    "the other annotators as well as one more annotator does? MAP is given both as the paper's "
    "block AP and as the expected AP over random orderings of ties, because an annotator's 0/1 "
    "votes form two large tie blocks. ▲ / ▼: significantly above / below the human, ?: undecided "
    "(two-sided paired randomization test over documents, Holm-corrected across the column's "
    f"rows at {ALPHA}, decided on Monte Carlo intervals as the † marks are)."
)

REFERENCE_TEXT = (
    "Not rankers, not compared. `oracle` scores each sentence by its own votes (1.0 by "
    "construction: a pipeline check)."
)


def labels_text(view: BoardView) -> str:
    """The board's sentences on its splits' labels: each split's dataset notes, then e.g. "On
    QMSum test, NDCG is undefined on 37 of the 721 pairs and MAP on 39 (no relevant sentence);
    they are left out of the means." Empty when there is nothing to say."""
    sentences = []
    for labels in view.labels:
        if labels.notes:
            sentences.append(labels.notes)
        if labels.undefined:
            names = [name for name, _ in labels.undefined]
            (first, n), *rest = labels.undefined
            if all(count == n for _, count in rest):
                what = f"{' and '.join(names)} {'are' if rest else 'is'} undefined on {n:,} of the {labels.pairs:,} pairs"
            else:
                more = "".join(f" and {name} on {count:,}" for name, count in rest)
                what = f"{first} is undefined on {n:,} of the {labels.pairs:,} pairs{more}"
            sentences.append(
                f"On {labels.title}, {what} (no relevant sentence); they are left out of the means."
            )
    return " ".join(sentences)


def count_word(n: int) -> str:
    """``two``, ``three``... ``ten``, else the digits (prose: "the mean of the four split means")."""
    words = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return words[n] if 0 <= n < len(words) else str(n)


def published_intro(view: BoardView, quote: str = "`") -> str:
    # ``quote``: around names that are constants here (the repository, a folder) or published
    # rows' labels, which come from the manifest; a backtick in Markdown, nothing on the site
    """What the published rows are and what was checked (Markdown with ``quote`` = backtick)."""
    from sourcesum.store.published import source

    origin = source()
    q = quote
    text = (
        f"The paper's own per-sentence outputs ({q}{origin.repository}{q}, folder {q}outputs/{q}, "
        f"commit {q}{origin.commit[:10]}{q}, sha256-pinned in {q}data/manifest.json{q}, never "
        "committed here), re-scored by this harness with the same measures, CIs and tests as the "
        "rankers; the best of each column and the † marks are shared with the rankers' table. A "
        "test checks that every split and method equals the paper's printed NDCG / MAP to 4 "
        "decimals and a scikit-learn recomputation to 1e-9."
    )
    for label, names in view.published_coverage:
        covered = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
        text += f" The paper published {q}{label}{q} only on {covered}, so that row has no Avg."
    return text


def heldout_intro(view: BoardView, quote: str = "`") -> str:
    """What the held-out test is and how to read its tables."""
    assert view.heldout is not None
    q = quote
    splits = "; ".join(f"{title}: {pairs:,} pairs" for _, title, pairs in view.heldout.board.splits)
    return (
        f"Pairs of the dataset that the board's splits leave out, on which no configuration was "
        f"chosen: {splits}. The rows and splits were declared (the {q}[heldout]{q} table of "
        f"{q}leaderboard.toml{q}) before any score on these pairs was computed, and are reported "
        "once, whatever the numbers. Rows trained on labels use the main splits only: "
        f"{q}protocol=cross-corpus{q} rows are the board's own configurations (fitted on the other "
        f"corpus's main splits), {q}protocol=same-corpus{q} rows the same recipes fitted on the main "
        "splits of the scored pairs' corpus (they stand in for the kfold rows, which have no "
        "held-out counterpart). "
        + shared_documents_text(view, quote)
        + "The paper published no outputs for these pairs, so no published "
        "system can be compared. Statistics as on the board; bold, † and ? compare every row with "
        "the column's best. The two tables below give each row's mean difference to "
        f"{q}lead{q} and to the column's best zero-shot row (trained on no label) with its 95% "
        "document-level bootstrap CI, and ▲ / ▼ where it is significantly above / below (the same "
        "sign-flip test and decision rule, Holm across the rows of the column; ? undecided; the "
        "Avg columns are not tested)."
    )


def heldout_pending_text(view: BoardView, quote: str = "`") -> str:
    """The held-out test while its entries are being computed: what is declared and how far it
    is, never a number computed on the held-out pairs."""
    p = view.heldout_pending
    assert p is not None
    q = quote
    splits = "; ".join(f"{title}: {pairs:,} pairs" for _, title, pairs in p.splits)
    return (
        f"Declared, not yet reported. {p.rows} rows on the pairs of the dataset that the board's "
        f"splits leave out ({splits}) were declared (the {q}[heldout]{q} table of {q}leaderboard.toml{q}) "
        "before any score on these pairs was computed. The table appears once, when every declared "
        f"entry is complete; until then no held-out number is shown. Entries complete: "
        f"{p.complete} of {p.entries}; pairs scored: {p.scored:,} of {p.pairs:,}. "
        f"{q}sourcesum leaderboard{q} lists the commands that compute the rest."
    )


def zero_shot_best_text(view: BoardView, name: Callable[[str], str] = str) -> str:
    """The best zero-shot row of each held-out column, grouped by row; ``name`` writes each row
    name (a Markdown code span on the board, plain text on the site)."""
    assert view.heldout is not None
    by_row: dict[str, list[str]] = {}
    for column, label in zip(view.heldout.board.columns, view.heldout.zero_shot_best, strict=True):
        if label:
            by_row.setdefault(label, []).append(column.header)
    return "; ".join(f"{name(label)} ({', '.join(headers)})" for label, headers in by_row.items())


def shared_documents_text(view: BoardView, quote: str = "`") -> str:
    """What the held-out splits share with the main ones, counted, and the measured gap of the
    same-corpus rows on shared against new documents (empty when nothing is shared)."""
    assert view.heldout is not None
    shared = view.heldout.shared_documents
    if not shared:
        return ""
    counts = "; ".join(
        f"{s.title}: {s.shared_documents} of {s.documents} documents ({s.shared_pairs} of {s.pairs} pairs)"
        for s in shared
    )
    text = (
        f"Not every held-out pair is of a new document; these also appear in main pairs, for other "
        f"summaries: {counts}. Zero-shot rows read no vote; cross-corpus rows are fitted on the other "
        "corpus; same-corpus rows are fitted without the pairs of any document of the scored split. "
    )
    gaps = [g for g in view.heldout.same_corpus_gaps if np.isfinite(g.shared) and np.isfinite(g.new)]
    if gaps:
        text += (
            f"Same-corpus minus cross-corpus {gaps[0].measure} on those splits, pairs of shared "
            f"documents against pairs of new ones ({gaps[0].shared_pairs} and {gaps[0].new_pairs} pairs): "
            + "; ".join(f"{quote}{g.name}{quote} {g.shared:+.3f} vs {g.new:+.3f}" for g in gaps)
            + ". "
        )
    return text
