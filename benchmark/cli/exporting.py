"""``sourcesum export``: TREC qrels and run files of every usable entry."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("export", help="TREC qrels and run files for every cached ranker")
    p.add_argument("--format", choices=["trec"], default="trec")
    p.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="DIR",
        help="folder to write into (created if missing; tens of MB for the SourceSum board)",
    )
    p.add_argument("--dataset", default="sourcesum", help="the dataset whose board splits are exported")
    p.add_argument("--scores-dir")
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from sourcesum.board.collect import collect_stores
    from sourcesum.outputs.trec import export_trec

    written = export_trec(collect_stores(args.scores_dir, args.dataset, published=False), Path(args.output))
    print(
        f"wrote {len(written)} files to {args.output} (qrels per split, one run per ranker and split, "
        f"and {written[-1].name} listing them):"
    )
    for path in written:
        print(f"  {path}")
    return 0
