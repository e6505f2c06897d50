"""``sourcesum export``: TREC qrels and run files of every usable entry (``--format trec``), or
the datasets themselves as a Hugging Face Hub dataset folder (``--format hf``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sourcesum.errors import SourceSumError


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "export", help="TREC qrels and run files for every cached ranker, or the data as a Hub dataset"
    )
    p.add_argument(
        "--format",
        choices=["trec", "hf"],
        default="trec",
        help="trec: qrels and runs of the board splits; hf: every split of the datasets as Parquet "
        "with a dataset card (datasets.load_dataset reads the folder)",
    )
    p.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="DIR",
        help="folder to write into (created if missing; tens of MB for the SourceSum board)",
    )
    p.add_argument(
        "--dataset",
        help="trec: the dataset whose board splits are exported (default: sourcesum); hf: the "
        "datasets to export, comma-separated (default: the built-in sourcesum,wice,qmsum)",
    )
    p.add_argument("--scores-dir", help="trec: your store, read over data/scores")
    p.add_argument("--no-progress", action="store_true", help="hf: no progress bar over the splits")
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    if args.format == "hf":
        return export_hub(args)
    from sourcesum.board.collect import collect_stores
    from sourcesum.outputs.trec import export_trec

    if args.dataset and "," in args.dataset:
        raise SourceSumError(f"--dataset {args.dataset}: --format trec exports one dataset's board")
    board = collect_stores(args.scores_dir, args.dataset or "sourcesum", published=False)
    written = export_trec(board, Path(args.output))
    print(
        f"wrote {len(written)} files to {args.output} (qrels per split, one run per ranker and split, "
        f"and {written[-1].name} listing them):"
    )
    for path in written:
        print(f"  {path}")
    return 0


def export_hub(args: argparse.Namespace) -> int:
    """``--format hf``: every split of the datasets named, as Parquet with a dataset card."""
    from sourcesum.data.datasets import BUILTIN_DATASETS
    from sourcesum.outputs.hub import export_hf

    if args.scores_dir:
        raise SourceSumError(
            "--scores-dir: --format hf exports the data, not scores (give it with --format trec)"
        )
    names = (
        [n.strip() for n in args.dataset.split(",") if n.strip()] if args.dataset else list(BUILTIN_DATASETS)
    )
    if not names:
        raise SourceSumError(f"--dataset {args.dataset!r}: names no dataset")
    written = export_hf(names, Path(args.output), progress=not args.no_progress)
    total = sum(path.stat().st_size for path in written)
    print(
        f"wrote {len(written)} files to {args.output} ({total / 1e6:.1f} MB: a Parquet file per split, "
        f"README.md with the dataset card, and {written[-1].name} listing them):"
    )
    for path in written:
        print(f"  {path}")
    return 0
