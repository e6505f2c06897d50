"""A declared ranker row against the best published system of each of the 8 cells (4 splits x
nDCG / MAP): the paired tests of `sourcesum compare` (document-level sign-flip randomization
test, paired bootstrap CI of the difference, 10,000 resamples, seed 0), then the decision rule
of ``sourcesum.stats.significance`` with Holm over the 8 cells. Prints the row's label, then per cell
the split, the measure, the row's mean [95% CI], the best published system, its mean [95% CI],
the difference [95% CI], the raw p-value with its Monte Carlo standard error and the number of
sign patterns drawn, the Holm-adjusted p with its interval (the decision rule's), and the decision (as a
Markdown table with ``--markdown``).

For every cell the best published system is the published row with the highest mean there.
Each cell's test draws the same sign patterns as `sourcesum compare ROW PUBLISHED --split S
--measures M` (same seed, memoised batches): with as many patterns drawn, the raw p-value is
the one `compare` prints; the 8-cell family may draw more where its Holm thresholds ask for it.

Usage: ``python scripts/learned_vs_published.py [LABEL] [--markdown]`` (default LABEL: the
first declared cross-corpus ``learned`` row of leaderboard.toml, the frozen configuration).
"""

from __future__ import annotations

import argparse

from sourcesum import paths
from sourcesum.board import LEADERBOARD_MEASURES, board_statistics, collect_declared, read_declaration
from sourcesum.board.compare import compare_rows
from sourcesum.board.statistics import resampling_clusters, row_identity, tested_family
from sourcesum.data import dataset, load_split
from sourcesum.outputs.comparisons import p_text
from sourcesum.runner.configs import Configuration
from sourcesum.stats.cache import StatsCache
from sourcesum.stats.significance import cluster_contributions
from sourcesum.store.stores import ScoreStore


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("label", nargs="?", help="row label (default: the declared cross-corpus learned row)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    declared = read_declaration(paths.DECLARATION_PATH)
    board = collect_declared(declared, ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False))
    if args.label:
        row = board.row(args.label)
    else:
        frozen = next(  # the frozen configuration is declared first
            d for d in declared.rows if d.ranker == "learned" and d.params.get("protocol") == "cross-corpus"
        )
        row = board.row(Configuration.of(frozen.ranker, frozen.params).label)
    cache = StatsCache.default()
    board_stats = board_statistics(board, cache=cache)
    cells = []
    for split in dataset(declared.dataset).board_splits():
        groups = resampling_clusters(load_split(split))
        for measure in LEADERBOARD_MEASURES:
            published = [r for r in board.published_rows if split in r.evaluations]
            best = max(published, key=lambda r: r.mean(split, measure))
            [comparison] = compare_rows([row, best], [split], [measure], cache=cache)
            diffs = row.evaluations[split].values(measure) - best.evaluations[split].values(measure)
            cells.append((split, measure, best, comparison, cluster_contributions(diffs, groups)))
    family = tested_family(
        "compare/document",
        [(row_identity(row), row_identity(best), split, m.name) for split, m, best, *_ in cells],
        [contributions for *_, contributions in cells],
        cache,
    )
    cache.save()
    print(f"{row.label}\nagainst the best published system per cell; Holm over the {len(cells)} cells\n")
    if args.markdown:
        print(
            "| split | measure | learned [95% CI] | best published | published [95% CI] | difference [95% CI] "
            "| p ± MC error | sign patterns | p (Holm, 8 cells) [interval] | decision |"
        )
        print("|---|---|---:|---|---:|---:|---:|---:|---:|---|")
    for (split, measure, best, c, _), marked in zip(cells, family, strict=True):
        low, high = board_stats.of(row).ci[(split, measure)]
        blow, bhigh = board_stats.of(best).ci[(split, measure)]
        hlow, hhigh = marked.adjusted
        values = [
            split,
            measure.name,
            f"{c.mean_a:.4f} [{low:.4f}, {high:.4f}]",
            best.label,
            f"{c.mean_b:.4f} [{blow:.4f}, {bhigh:.4f}]",
            f"{c.mean_a - c.mean_b:+.4f} [{c.ci_low:+.4f}, {c.ci_high:+.4f}]",
            p_text(marked.count.p, marked.count.standard_error, marked.count.exact),
            f"{marked.count.flips:,}",
            f"{marked.p_holm:.4f} [{hlow:.4f}, {hhigh:.4f}]",
            marked.decision,
        ]
        print(("| " + " | ".join(values) + " |") if args.markdown else "  ".join(values))


if __name__ == "__main__":
    main()
