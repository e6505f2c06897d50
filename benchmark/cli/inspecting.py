"""Commands that look into results: ``compare`` (paired tests between rows) and ``show`` (one
pair, every row's scores and ranks; ``show --list`` lists the pairs of splits)."""

from __future__ import annotations

import argparse
from typing import Any

from sourcesum.cli.common import SCHEMAS, measures_help, non_negative_int, positive_int, print_json, resamples
from sourcesum.errors import SourceSumError
from sourcesum.outputs.escape import terminal


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("compare", help="paired significance tests between rankers")
    p.add_argument("rankers", nargs="+", help="row labels or ranker names (two or more)")
    p.add_argument("--split", default="all")
    p.add_argument("--measures", default="nDCG,AP", help=measures_help())
    p.add_argument(
        "--by",
        choices=["pair", "document"],
        default="document",
        help="resampling unit (default: document, the dataset's cluster; equals pair on XSum)",
    )
    p.add_argument(
        "--resamples",
        type=resamples,
        default=10_000,
        help="bootstrap resamples (the sign-flip test draws until its decision is made, up to 10^7)",
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="seeds the bootstrap; mixed into each sign-flip test's own seed (decisions do not depend on it)",
    )
    p.add_argument("--scores-dir")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "show", help="one pair: summary, sentences, votes, rankers' scores and ranks (--list: the pair ids)"
    )
    p.add_argument("pair_id", nargs="?", help="the pair to show (`--list` lists them)")
    p.add_argument(
        "--list",
        nargs="?",
        const="all",
        metavar="SPLIT",
        help="list the pairs instead: id, split, first sentence of the document, summary; SPLIT is "
        "comma-separated split or dataset names (default 'all': sourcesum's board splits)",
    )
    p.add_argument(
        "--ranker",
        help="comma-separated row labels or ranker names (default: the 4 best declared rankers; with --json: all)",
    )
    p.add_argument("--width", type=positive_int, default=100, help="terminal columns (default 100)")
    p.add_argument("--scores-dir")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)


def cmd_compare(args: argparse.Namespace) -> int:
    from sourcesum.board.collect import collect_stores
    from sourcesum.board.compare import compare_rows
    from sourcesum.data import dataset_of, resolve_split_names
    from sourcesum.evaluation.measures import parse_measures
    from sourcesum.outputs.comparisons import format_comparisons

    names = args.rankers
    if len(names) < 2:
        raise SourceSumError("compare needs at least two rankers")
    splits = resolve_split_names(args.split)
    owners = {dataset_of(s).name for s in splits}
    if len(owners) > 1:
        raise SourceSumError(
            f"--split {args.split}: compare one dataset's splits at a time, not {sorted(owners)}"
        )
    ds = dataset_of(splits[0])
    off_board = [s for s in splits if s not in ds.board_splits()]
    if off_board:
        raise SourceSumError(
            f"--split {args.split}: compare works on the board splits "
            f"({', '.join(ds.board_splits())}), not {', '.join(off_board)}"
        )
    board = collect_stores(args.scores_dir, ds.name)
    rows = [board.row(name) for name in names]
    results = compare_rows(
        rows,
        splits,
        parse_measures(args.measures),
        by_document=args.by == "document",
        resamples=args.resamples,
        seed=args.seed,
    )
    if args.json:
        print_json(SCHEMAS["compare"], {"comparisons": [c.as_dict() for c in results]})
    else:
        print(terminal(format_comparisons(results)))
    return 0


def declared_labels() -> list[str]:
    from sourcesum import paths
    from sourcesum.board import read_declaration
    from sourcesum.runner.configs import Configuration

    declared = read_declaration(paths.DECLARATION_PATH)
    return [Configuration.of(d.ranker, d.params).label for d in declared.rows if not d.published]


def cmd_show(args: argparse.Namespace) -> int:
    from sourcesum.board.collect import collect_stores
    from sourcesum.board.explorer import default_rows, find_pair, pair_view
    from sourcesum.data import dataset_of
    from sourcesum.outputs.pairview import format_view

    if args.list is not None:
        if args.pair_id is not None:
            raise SourceSumError(f"show {args.pair_id} --list: give a pair id or --list, not both")
        return list_pairs(args)
    if args.pair_id is None:
        raise SourceSumError("show: give a pair id (`sourcesum show --list [SPLIT]` lists them)")
    split, pair = find_pair(args.pair_id)
    ds = dataset_of(split.name)
    board = collect_stores(args.scores_dir, ds.name)
    rankers: list[str] | None
    if args.ranker:
        rankers = [n.strip() for n in args.ranker.split(",") if n.strip()]
    elif args.json:
        rankers = None  # everything
    else:
        rankers = default_rows(board, declared_labels(), count=4)
    view = pair_view(split, pair, board, rankers)
    if args.json:
        print_json(SCHEMAS["show"], view)
    else:
        print(terminal(format_view(view, width=args.width)))
    return 0


def excerpt(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters (``…`` marks a cut)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


def pair_records(spec: str) -> list[dict[str, Any]]:
    """Every pair of the splits ``spec`` names: id, split, sentence count, the document's first
    sentence and the summary."""
    from sourcesum.data import load_split, resolve_split_names

    return [
        {
            "id": pair.id,
            "split": split.name,
            "sentences": pair.n_sentences,
            "first_sentence": pair.sentences[0] if pair.sentences else "",
            "summary": pair.summary,
        }
        for split in (load_split(name) for name in resolve_split_names(spec))
        for pair in split.pairs
    ]


def list_pairs(args: argparse.Namespace) -> int:
    """``show --list [SPLIT]``: one line per pair (id, split, the document's first sentence and
    the summary, cut to fit ``--width`` unless the ids alone leave no room), or JSON."""
    records = pair_records(args.list)
    if args.json:
        print_json(SCHEMAS["pairs"], {"pairs": records})
        return 0
    id_width = max([len("pair")] + [len(r["id"]) for r in records])
    split_width = max([len("split")] + [len(r["split"]) for r in records])
    room = args.width - id_width - split_width - 6  # three two-space gaps
    document_width = max(room * 2 // 5, 12)
    summary_width = max(room - document_width, 16)  # the summary tells pairs of one document apart
    lines = [f"{'pair':<{id_width}}  {'split':<{split_width}}  {'document':<{document_width}}  summary"]
    for r in records:
        document = excerpt(r["first_sentence"], document_width)
        lines.append(
            f"{r['id']:<{id_width}}  {r['split']:<{split_width}}  {document:<{document_width}}  "
            f"{excerpt(r['summary'], summary_width)}"
        )
    print(terminal("\n".join(lines)))
    return 0
